"""Run llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`) as a child process.

The child binds 127.0.0.1 on a free port (never another interface), dies with us (Linux
parent-death signal, and an explicit stop on shutdown), and is restarted if it crashes
(bounded: a model that cannot load must not spin forever).
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import logging
import os
import signal
import socket
import sys
import time
from typing import Callable

from .models import LocalModel

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 120.0
MAX_RESTARTS = 3
RESTART_WINDOW_S = 300.0


class LocalRuntimeError(Exception):
    """The local model server could not start; the message says why."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class LocalModelServer:
    def __init__(self, model: LocalModel, *, n_ctx: int = 2048, threads: int | None = None,
                 on_event: Callable[[str], None] | None = None) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.threads = threads or max(os.cpu_count() or 1, 1)
        self.port = 0
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self._on_event = on_event or (lambda message: None)
        self._stopping = False
        self._restarts: list[float] = []
        self._watchdog: asyncio.Task | None = None
        self._drain: asyncio.Task | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model.path),
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads),
        ]

    async def start(self) -> str:
        self._stopping = False
        await self._spawn()
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())
        return self.base_url

    async def _spawn(self) -> None:
        self.port = self.port or free_port()  # a restart keeps the port: clients keep their URL
        self.proc = await asyncio.create_subprocess_exec(
            *self.command(), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, preexec_fn=_die_with_parent,
        )
        self._drain = asyncio.get_running_loop().create_task(self._read_stderr(self.proc))
        await self._wait_ready()

    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip()
            self.stderr_tail.append(text)
            log.debug("llama.cpp: %s", text)

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.returncode is not None:
                await asyncio.sleep(0.05)  # let the stderr reader catch the last lines
                raise LocalRuntimeError(f"the local model server exited while starting: {self._last_error()}")
            if await self._responds():
                return
            await asyncio.sleep(0.1)
        await self.stop()
        raise LocalRuntimeError(f"the local model server did not become ready in {READY_TIMEOUT_S:.0f}s")

    async def _responds(self) -> bool:
        """Readiness probe: does GET /v1/models answer 200?"""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), 1)
        except (OSError, asyncio.TimeoutError):
            return False
        try:
            writer.write(f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nConnection: close\r\n\r\n".encode())
            await writer.drain()
            status = await asyncio.wait_for(reader.readline(), 5)
            return b" 200 " in status
        except (OSError, asyncio.TimeoutError):
            return False
        finally:
            writer.close()

    def _last_error(self) -> str:
        lines = [line for line in self.stderr_tail if line.strip()]
        return lines[-1][:300] if lines else "no output"

    async def _watch(self) -> None:
        while not self._stopping and self.proc is not None:
            code = await self.proc.wait()
            if self._stopping:
                return
            now = time.monotonic()
            self._restarts = [t for t in self._restarts if now - t < RESTART_WINDOW_S]
            if len(self._restarts) >= MAX_RESTARTS:
                self._on_event(f"the local model server keeps crashing (exit {code}): {self._last_error()}")
                return
            self._restarts.append(now)
            self._on_event(f"the local model server exited ({code}); restarting it")
            try:
                await self._spawn()
                self._on_event("restarted")
            except LocalRuntimeError as exc:
                self._on_event(str(exc))
                return

    async def stop(self) -> None:
        self._stopping = True
        if self._watchdog is not None and self._watchdog is not asyncio.current_task():
            self._watchdog.cancel()
        proc = self.proc
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
        if self._drain is not None:
            self._drain.cancel()
