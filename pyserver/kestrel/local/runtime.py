"""Run llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`) as a child process.

It serves on a loopback socket Kestrel bound (`endpoint`) with a per-start secret it must prove it
knows before Kestrel sends it anything; it gets a clean environment and starts in Kestrel's own
directory, not the workspace; it dies with us and is restarted if it crashes (bounded).
Why: docs/design-notes.md#pyserverkestrellocalruntimepy
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
from pathlib import Path
from typing import Callable, Mapping

from .. import redact
from . import endpoint
from .models import LocalModel

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 120.0
MAX_RESTARTS = 3
RESTART_WINDOW_S = 300.0

# What the child may inherit: enough to run Python and find libraries; no API keys, no
# llama_cpp.server settings (HOST, PORT, CONFIG_FILE, MODEL, API_KEY, ...), no PYTHON* variables.
_INHERITED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH")
# Where `python -m kestrel.local.launcher` finds this very Kestrel (and nothing from the workspace).
_KESTREL_ROOT = str(Path(__file__).resolve().parents[2])


class LocalRuntimeError(Exception):
    """The local model server could not start; the message says why."""


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k in _INHERITED or k.startswith("LC_")}


def _die_with_parent(parent: int) -> Callable[[], None]:
    """A preexec_fn: the child is killed when Kestrel dies. SIGKILL, not SIGTERM: on SIGTERM
    uvicorn waits for the request in flight, and a generation nobody reads then ran on for minutes
    at full CPU (seen when the eval was killed). A parent already gone before prctl: exit at once."""

    def preexec() -> None:  # runs in the child between fork and exec
        try:
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass
        if os.getppid() != parent:
            os._exit(1)

    return preexec


class LocalModelServer:
    def __init__(self, model: LocalModel, *, n_ctx: int = 2048, threads: int | None = None,
                 on_event: Callable[[str], None] | None = None, require_key: bool = True) -> None:
        """`require_key=False` is for benchmarks whose clients cannot be given the key (raw SDK
        clients, other Kestrel commits): any local user may then use the model, though still no
        one can take its port or pass for it."""
        self.model = model
        self.require_key = require_key
        self.n_ctx = n_ctx
        self.threads = threads or max(os.cpu_count() or 1, 1)
        self.port = 0
        self._listener: socket.socket | None = None  # held until stop(): the port is never free
        self._secret = endpoint.new_secret()  # one per LocalModelServer: clients keep it across restarts
        redact.register_secret(self._secret)
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

    @property
    def api_key(self) -> str | None:
        """The bearer key every request to the child must carry (redacted from every output)."""
        return self._secret if self.require_key else None

    def command(self) -> list[str]:
        assert self._listener is not None
        return [
            sys.executable, "-m", "kestrel.local.launcher",
            "--fd", str(self._listener.fileno()), "--port", str(self.port),
            "--model", str(self.model.path),
            "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads),
            *([] if self.require_key else ["--no-key"]),
        ]

    async def start(self) -> str:
        self._stopping = False
        await self._spawn()
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())
        return self.base_url

    async def _spawn(self) -> None:
        if self._listener is None:  # a restart keeps the socket: clients keep their URL
            self._listener = endpoint.listen_on_loopback()
            self.port = self._listener.getsockname()[1]
        self.proc = await asyncio.create_subprocess_exec(
            *self.command(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, preexec_fn=_die_with_parent(os.getpid()),
            pass_fds=(self._listener.fileno(),), env=child_environment(), cwd=_KESTREL_ROOT,
        )
        self._drain = asyncio.get_running_loop().create_task(self._read_stderr(self.proc))
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(f"{self._secret}\n".encode())
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child died at once: _wait_ready reports its last words
        finally:
            self.proc.stdin.close()
        await self._wait_ready()

    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip()
            self.stderr_tail.append(text)
            log.debug("llama.cpp: %s", text)

    async def _wait_ready(self) -> None:
        """Ready once the child proves it knows the secret; nothing is sent to it before."""
        assert self.proc is not None
        probe = asyncio.ensure_future(endpoint.proves_identity(self.port, self._secret, READY_TIMEOUT_S))
        exited = asyncio.ensure_future(self.proc.wait())
        done, _ = await asyncio.wait({probe, exited}, timeout=READY_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        if probe in done and not probe.exception() and probe.result():
            exited.cancel()
            return
        probe.cancel()
        exited.cancel()
        if self.proc.returncode is not None:
            if self._drain is not None:  # let the stderr reader catch the last lines (it ends at EOF)
                await asyncio.wait({self._drain}, timeout=1)
            raise LocalRuntimeError(f"the local model server exited while starting: {self._last_error()}")
        await self.stop()
        if probe in done:
            why = "did not prove it is Kestrel's own child" if not probe.exception() else f"failed: {probe.exception()}"
            raise LocalRuntimeError(f"the local model server {why}")
        raise LocalRuntimeError(f"the local model server did not become ready in {READY_TIMEOUT_S:.0f}s")

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
                self._close_listener()  # requests fail fast instead of waiting in the backlog
                self._on_event(f"the local model server keeps crashing (exit {code}): {self._last_error()}")
                return
            self._restarts.append(now)
            self._on_event(f"the local model server exited ({code}); restarting it")
            try:
                await self._spawn()
                self._on_event("restarted")
            except LocalRuntimeError as exc:
                self._close_listener()
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
        self._close_listener()

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
