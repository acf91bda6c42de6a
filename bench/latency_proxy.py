"""A TCP proxy that simulates network latency: every chunk is delayed `--delay-ms` in each
direction (so one round trip costs 2 × delay), order preserved, bytes untouched (TLS passes
through end to end). The kernel completes the TCP handshake with the proxy at once, so the
first client→server chunk of each connection is held one extra round trip: the cost of
the SYN / SYN-ACK on a real network.

    python -m bench.latency_proxy --target 127.0.0.1:PORT [--delay-ms 10] [--port 0]
    # PROXY_READY <port>
"""

from __future__ import annotations

import argparse
import asyncio
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, first_extra: float) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    async def read() -> None:
        extra = first_extra
        try:
            while True:
                data = await reader.read(1 << 16)
                queue.put_nowait((loop.time() + delay + extra, data))
                extra = 0.0
                if not data:
                    return
        except (ConnectionError, OSError):
            queue.put_nowait((loop.time(), b""))

    reading = asyncio.create_task(read())
    try:
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        reading.cancel()


async def serve(target_host: str, target_port: int, delay: float, port: int) -> None:
    async def handle(c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        try:
            s_reader, s_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            c_writer.close()
            return
        for w in (c_writer, s_writer):
            sock = w.get_extra_info("socket")
            if sock is not None:
                import socket

                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await asyncio.gather(_pipe(c_reader, s_writer, delay, 2 * delay), _pipe(s_reader, c_writer, delay, 0.0))
        finally:
            for w in (c_writer, s_writer):
                try:
                    w.close()
                except Exception:
                    pass

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    sys.stdout.write(f"PROXY_READY {server.sockets[0].getsockname()[1]}\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.latency_proxy")
    p.add_argument("--target", required=True, help="HOST:PORT")
    p.add_argument("--delay-ms", type=float, default=10.0, help="one-way delay (RTT = 2 x this)")
    p.add_argument("--port", type=int, default=0)
    a = p.parse_args(argv)
    host, _, port = a.target.rpartition(":")
    try:
        asyncio.run(serve(host, int(port), a.delay_ms / 1000.0, a.port))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
