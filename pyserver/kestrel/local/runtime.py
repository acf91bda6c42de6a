"""Run llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`) as a child process.

It serves on a loopback socket Kestrel bound (`endpoint`) with a per-start secret it must prove it
knows before Kestrel sends it anything; it gets a clean environment and starts in Kestrel's own
directory, not the workspace; it dies with us and is restarted if it crashes (bounded).
Why: docs/design-notes.md#pyserverkestrellocalruntimepy
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
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


class Launcher:
    """A launcher child (`kestrel.local.launcher`) on its own loopback socket, handed its secret: it
    imports llama.cpp's server while it waits for the model line (`load`). Its exit and its stderr are
    watched from threads once `watch` is called, so that it can be spawned before the event loop runs."""

    def __init__(self, command: Callable[[socket.socket, int], list[str]] | None = None,
                 listener: socket.socket | None = None, secret: str | None = None) -> None:
        self.listener = listener or endpoint.listen_on_loopback()
        self.port = self.listener.getsockname()[1]
        self.secret = secret or endpoint.new_secret()
        redact.register_secret(self.secret)
        argv = (command or launcher_command)(self.listener, self.port)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=_die_with_parent(os.getpid()), pass_fds=(self.listener.fileno(),),
            env=child_environment(), cwd=_KESTREL_ROOT,
        )
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self.loading: tuple[str, int, int, bool, bool] | None = None  # the model line sent, once sent
        self.exited: asyncio.Future[int] | None = None
        self._stderr_reader: threading.Thread | None = None
        self._send(f"{self.secret}\n")

    def _send(self, line: str) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            pass  # the child died at once: its exit and last words are reported by whoever waits

    def load(self, model: LocalModel, n_ctx: int, threads: int, require_key: bool, speculative: bool) -> None:
        """The model line: the child loads it and starts serving."""
        self.loading = (str(model.path), n_ctx, threads, require_key, speculative)
        self._send(json.dumps({"model": str(model.path), "n_ctx": n_ctx, "n_threads": threads,
                               "require_key": require_key, "speculative": speculative}) + "\n")
        self.close_input()

    def close_input(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """From now on `exited` resolves when the child exits, and its stderr fills `stderr_tail`."""
        if self.exited is not None:
            return
        self.exited = loop.create_future()

        def wait() -> None:
            code = self.proc.wait()
            with contextlib.suppress(RuntimeError):  # the loop closed first (shutdown)
                loop.call_soon_threadsafe(lambda: self.exited.done() or self.exited.set_result(code))

        def read_stderr() -> None:
            assert self.proc.stderr is not None
            for raw in self.proc.stderr:
                text = raw.decode("utf-8", "replace").rstrip()
                self.stderr_tail.append(text)
                log.debug("llama.cpp: %s", text)

        threading.Thread(target=wait, name="kestrel-local-wait", daemon=True).start()
        self._stderr_reader = threading.Thread(target=read_stderr, name="kestrel-local-stderr", daemon=True)
        self._stderr_reader.start()

    async def last_words(self) -> None:
        """Lets the stderr reader catch the last lines of a child that exited (it ends at EOF)."""
        if self._stderr_reader is not None:
            await asyncio.to_thread(self._stderr_reader.join, 1)

    async def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s."""
        self.close_input()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                await asyncio.to_thread(self.proc.wait, 5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                await asyncio.to_thread(self.proc.wait)

    def kill_now(self) -> None:
        """Synchronous: for a child nobody adopted (exit paths without an event loop)."""
        self.close_input()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.listener.close()


def launcher_command(listener: socket.socket, port: int) -> list[str]:
    return [sys.executable, "-m", "kestrel.local.launcher", "--fd", str(listener.fileno()), "--port", str(port)]


_prestarted: Launcher | None = None


def thread_count(threads: int | None) -> int:
    return threads or max(os.cpu_count() or 1, 1)


def prestart(model: LocalModel | None = None, n_ctx: int = 2048, threads: int | None = None,
             speculative: bool = True) -> Launcher:
    """Spawn a launcher now, before the settings are known (at process start, when the embedded model
    is likely to be used): its ~0.35 s of imports overlap Kestrel's own start and the editor's
    `initialize`. With `model` (the one the environment names, already on disk) it loads that too
    (~0.3 s). The first LocalModelServer to start adopts it when it wants that same model, or none
    yet; `discard_prestarted` ends it."""
    global _prestarted
    if _prestarted is None:
        _prestarted = Launcher()
        if model is not None:
            _prestarted.load(model, n_ctx, thread_count(threads), True, speculative)
    return _prestarted


def discard_prestarted() -> None:
    """The embedded model is not wanted (a remote provider is configured): the waiting child exits."""
    global _prestarted
    early, _prestarted = _prestarted, None
    if early is not None:
        early.kill_now()


def _take_prestarted(wanted: tuple[str, int, int, bool, bool]) -> Launcher | None:
    """The early child, if it is alive and loads `wanted` (or nothing yet); else it ends."""
    global _prestarted
    early, _prestarted = _prestarted, None
    if early is not None and (early.proc.poll() is not None or early.loading not in (None, wanted)):
        early.kill_now()  # it died waiting, or the settings chose another model: start afresh
        return None
    return early


class LocalModelServer:
    def __init__(self, model: LocalModel, *, n_ctx: int = 2048, threads: int | None = None,
                 on_event: Callable[[str], None] | None = None, require_key: bool = True,
                 speculative: bool = True) -> None:
        """`require_key=False` is for benchmarks whose clients cannot be given the key (raw SDK
        clients, other Kestrel commits): any local user may then use the model, though still no
        one can take its port or pass for it."""
        self.model = model
        self.require_key = require_key
        self.speculative = speculative  # drafts for answers (local/lookup_draft.py), on as in the settings
        self.n_ctx = n_ctx
        self.threads = thread_count(threads)
        self.port = 0
        self._listener: socket.socket | None = None  # held until stop(): the port is never free
        self._secret = endpoint.new_secret()  # one per LocalModelServer: clients keep it across restarts
        redact.register_secret(self._secret)
        self.child: Launcher | None = None
        self._on_event = on_event or (lambda message: None)
        self._stopping = False
        self._restarts: list[float] = []
        self._watchdog: asyncio.Task | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def api_key(self) -> str | None:
        """The bearer key every request to the child must carry (redacted from every output)."""
        return self._secret if self.require_key else None

    @property
    def stderr_tail(self) -> collections.deque[str]:
        return self.child.stderr_tail if self.child is not None else collections.deque()

    def command(self, listener: socket.socket, port: int) -> list[str]:
        return launcher_command(listener, port)

    async def start(self) -> str:
        self._stopping = False
        await self._spawn()
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())
        return self.base_url

    async def _spawn(self) -> None:
        wanted = (str(self.model.path), self.n_ctx, self.threads, self.require_key, self.speculative)
        early = _take_prestarted(wanted) if self._listener is None and self.child is None else None
        if early is not None:  # adopted: its socket and secret become this server's
            self._listener, self.port, self._secret = early.listener, early.port, early.secret
            self.child = early
        else:  # a restart keeps the socket and the secret: clients keep their URL and key
            self.child = Launcher(self.command, self._listener, self._secret)
            self._listener, self.port = self.child.listener, self.child.port
        self.child.watch(asyncio.get_running_loop())
        if self.child.loading is None:
            self.child.load(self.model, self.n_ctx, self.threads, self.require_key, self.speculative)
        await self._wait_ready()

    async def _wait_ready(self) -> None:
        """Ready once the child proves it knows the secret; nothing is sent to it before."""
        child = self.child
        assert child is not None and child.exited is not None
        probe = asyncio.ensure_future(endpoint.proves_identity(self.port, self._secret, READY_TIMEOUT_S))
        exited = asyncio.shield(child.exited)
        done, _ = await asyncio.wait({probe, exited}, timeout=READY_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        if probe in done and not probe.exception() and probe.result():
            return
        probe.cancel()
        if child.exited.done():
            await child.last_words()
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
        while not self._stopping and self.child is not None and self.child.exited is not None:
            code = await asyncio.shield(self.child.exited)
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
        if self.child is not None:
            await self.child.stop()
        self._close_listener()

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
