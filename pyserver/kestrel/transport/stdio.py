"""Serve the editor over stdin/stdout: pygls's `start_io`, reading through `FrameReader`."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import Any

from pygls.io_ import StdoutWriter

from .framing import FrameReader
from .inbox import pump

log = logging.getLogger(__name__)


class ExitingStdoutWriter(StdoutWriter):
    """pygls's stdout writer, silent once `exit` has closed the stream: the tasks still running then
    (a completion being answered, a status notification) are cancelled as the loop ends, and their last
    messages used to fail with "I/O operation on closed file" in the log of about one exit in eight."""

    def write(self, data: bytes) -> None:
        if self._stdout.closed:
            log.debug("not sent, the client's stream is closed (exit): %d bytes", len(data))
            return
        super().write(data)


def serve_stdio(server: Any, max_message_bytes: int) -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    server._stop_event = stop = threading.Event()  # `server.shutdown()` sets it
    server.protocol.set_writer(ExitingStdoutWriter(stdout))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        # read1: whatever is available (up to n), so a slow client never blocks a full chunk.
        frames = FrameReader(lambda n: loop.run_in_executor(server.thread_pool, stdin.read1, n), max_message_bytes)
        await pump(frames, server.protocol, stop)

    try:
        asyncio.run(run())
    except BrokenPipeError:
        log.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
