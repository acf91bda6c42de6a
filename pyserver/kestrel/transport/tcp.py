"""`kestrel-lsp --tcp`: one authenticated editor per server, instead of pygls's `start_tcp`.

A connection's first message must be `initialize` carrying the token from the user's 0600 token
file (`initializationOptions.kestrel.authToken`); anything else, a wrong token, or silence for
`HANDSHAKE_SECONDS` closes it, nothing read and nothing sent. Once a client is attached, every other
connection is closed unread; the server stops when that client disconnects (or sends `exit`).
Why: docs/design-notes.md#pyserverkestreltransporttcppy
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from .. import redact
from .framing import FrameReader, Message
from .inbox import pump
from .token_file import TokenFile, default_token_path

log = logging.getLogger(__name__)

HANDSHAKE_MAX_BYTES = 1 << 20  # an initialize is a few KB; an unauthenticated peer gets no more memory
HANDSHAKE_SECONDS = 10.0
MAX_PENDING = 16  # connections still in their handshake


def is_loopback(host: str) -> bool:
    """True when every address `host` resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def pop_auth_token(options: Any) -> Any:
    """Remove the token from `initializationOptions` (it is not a setting) and return it."""
    if not isinstance(options, dict):
        return None
    presented = options.pop("authToken", None)
    section = options.get("kestrel")
    if isinstance(section, dict) and "authToken" in section:
        presented = section.pop("authToken")
        if not section:  # an empty `kestrel` section would hide flat settings next to it
            del options["kestrel"]
    return presented


class SingleClientTcpServer:
    def __init__(self, server: Any, max_message_bytes: int) -> None:
        self._server = server
        self._max_message_bytes = max_message_bytes
        self.token: TokenFile | None = None
        self._attached = False
        self._pending = 0
        self._session_over = asyncio.Event()

    async def serve(self, host: str, port: int, token_path: Path | None) -> None:
        _stop_on_sigterm(self._session_over)
        listener = await asyncio.start_server(self._accept, host, port)
        try:
            port = listener.sockets[0].getsockname()[1]
            self.token = TokenFile(token_path or default_token_path(port))
            self.token.write(private_dir=token_path is None)
            redact.register_secret(self.token.token)  # it is never logged; if it ever were, masked
            _announce(host, port, self.token.path)
            await self._session_over.wait()
        finally:
            listener.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._connection(reader, writer)
        except asyncio.CancelledError:  # the server is stopping (asyncio would log it as an error)
            writer.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        busy = ("a client is already attached" if self._attached else "no token yet" if self.token is None
                else "too many connections in their handshake" if self._pending >= MAX_PENDING else None)
        if busy:
            log.warning("refused a TCP connection from %s: %s", peer, busy)
            writer.close()
            return
        self._pending += 1
        try:
            frames = FrameReader(reader.read, HANDSHAKE_MAX_BYTES)
            initialize, refusal = await self._handshake(frames)
        finally:
            self._pending -= 1
        if initialize is None or self._attached:
            log.warning("refused a TCP connection from %s: %s", peer, refusal or "a client is already attached")
            writer.close()
            return
        self._attached = True
        log.info("TCP client %s authenticated", peer)
        frames.max_body = self._max_message_bytes
        self._server.protocol.set_writer(writer)
        try:
            await pump(frames, self._server.protocol, self._server._stop_event, first=initialize)
        finally:
            writer.close()
            self._session_over.set()

    async def _handshake(self, frames: FrameReader) -> tuple[dict | None, str]:
        """The connection's `initialize` (token removed) if it carries the right token."""
        try:
            frame = await asyncio.wait_for(frames.next(), HANDSHAKE_SECONDS)
        except asyncio.TimeoutError:
            return None, f"no initialize within {HANDSHAKE_SECONDS:g} s"
        except OSError as exc:
            return None, f"connection error ({exc})"
        if not isinstance(frame, Message):
            return None, "closed or unreadable before initialize"
        try:
            data = json.loads(frame.body)
        except ValueError:
            return None, "first message is not JSON"
        if not (isinstance(data, dict) and data.get("jsonrpc") == "2.0" and data.get("method") == "initialize"
                and "id" in data and isinstance(data.get("params"), dict)):
            return None, "first message is not initialize"
        presented = pop_auth_token(data["params"].get("initializationOptions"))
        assert self.token is not None
        if not self.token.matches(presented):
            return None, "missing or wrong auth token"
        return data, ""


def _stop_on_sigterm(stop: asyncio.Event) -> None:
    """`kill PID` is a clean stop too: the token file goes with the server."""
    try:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    except (NotImplementedError, RuntimeError, AttributeError):  # Windows: no SIGTERM handlers in asyncio
        pass


def _announce(host: str, port: int, token_path: Path) -> None:
    print(f"kestrel-lsp: listening on {host}:{port} (TCP, one client)", file=sys.stderr)
    print(f"kestrel-lsp: token file: {token_path}", file=sys.stderr)
    print("kestrel-lsp: a client authenticates by sending the file's content as "
          "initializationOptions.kestrel.authToken in initialize", file=sys.stderr, flush=True)


def serve_tcp(server: Any, host: str, port: int, token_path: Path | None, max_message_bytes: int) -> None:
    server._stop_event = threading.Event()  # `server.shutdown()` sets it
    tcp = SingleClientTcpServer(server, max_message_bytes)
    try:
        asyncio.run(tcp.serve(host, port, token_path))
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        if tcp.token is not None:
            tcp.token.remove()
        server.shutdown()
