"""Runs the mock under hypercorn: in a daemon thread or on the current event loop."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from typing import Any, Callable, Optional

from .app import MockModelApp
from .faults import abort_port, install_transport_registry


def _quiet_exception_handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    # Connections cancelled at shutdown make asyncio's stream callback log a
    # CancelledError (CPython 3.11 quirk); that is expected noise for the mock.
    if isinstance(context.get("exception"), (asyncio.CancelledError, ConnectionError)):
        return
    loop.default_exception_handler(context)


class MockModelServer:
    """Runs :class:`MockModelApp` under hypercorn.

    ``start_in_thread()`` / ``stop()`` (or ``with MockModelServer() as m:``) run it in a
    daemon thread with its own event loop; ``await start()`` / ``await astop()``
    (or ``async with``) run it on the current loop.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        certfile: Optional[str] = None,
        keyfile: Optional[str] = None,
        config: Optional[dict[str, Any]] = None,
        **config_kw: Any,
    ) -> None:
        self.host = host
        self.port = port
        self.certfile = certfile
        self.keyfile = keyfile
        self.app = MockModelApp(config, **config_kw)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._shutdown: Optional[asyncio.Event] = None
        self._serve_task: Optional[asyncio.Task] = None
        self._error: Optional[BaseException] = None

    # -- info ----------------------------------------------------------------
    @property
    def scheme(self) -> str:
        return "https" if self.certfile else "http"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def ws_url(self) -> str:
        return ("wss" if self.certfile else "ws") + self.url[len(self.scheme) :] + "/v1/responses"

    # -- control ---------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        return self.app.state.snapshot()

    def configure(self, **kw: Any) -> dict[str, Any]:
        return self.app.state.configure(kw)

    @property
    def config(self) -> dict[str, Any]:
        return self.app.state.get_config()

    def reset(self) -> None:
        self.app.state.reset()

    # -- lifecycle ---------------------------------------------------------
    def _make_socket(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((self.host, self.port))
        sock.listen(1024)
        self.port = sock.getsockname()[1]
        return sock

    def _hypercorn_config(self, fd: int) -> Any:
        from hypercorn.config import Config

        cfg = Config()
        cfg.bind = [f"fd://{fd}"]
        cfg.accesslog = None
        cfg.errorlog = logging.getLogger("kestrel.mock_model.hypercorn")
        cfg.graceful_timeout = 1.0
        cfg.keep_alive_timeout = 30.0
        cfg.backlog = 1024
        cfg.h2_max_concurrent_streams = 1000
        # hypercorn recycles a connection after 1,000 requests by default; a soak must count only
        # the connections the client chooses to open.
        cfg.keep_alive_max_requests = 10**9
        cfg.websocket_ping_interval = None
        if self.certfile:
            cfg.certfile = self.certfile
            cfg.keyfile = self.keyfile
            cfg.alpn_protocols = ["h2", "http/1.1"]
        return cfg

    async def _serve(self, ready: Callable[[], None]) -> None:
        from hypercorn.asyncio import serve

        install_transport_registry()
        sock = self._make_socket()
        fd = sock.detach()
        config = self._hypercorn_config(fd)
        self._shutdown = asyncio.Event()
        shutdown = self._shutdown

        async def trigger() -> None:
            await shutdown.wait()
            self.app.begin_close()
            # hypercorn waits for every connection to close (asyncio.Server.wait_closed);
            # TLS connections idle on the client side never finish their close_notify
            # handshake, so abort whatever is left once the graceful period is over.
            asyncio.get_running_loop().call_later(config.graceful_timeout + 0.25, self._abort_all)

        self.app._closing = asyncio.Event()
        self.app.on_startup = ready
        try:
            await serve(self.app, config, shutdown_trigger=trigger, mode="asgi")  # type: ignore[arg-type]
        finally:
            try:
                os.close(fd)
            except OSError:
                pass

    def _abort_all(self) -> None:
        abort_port(self.port)

    def start_in_thread(self, timeout: float = 10.0) -> "MockModelServer":
        if self._thread is not None:
            raise RuntimeError("already started")
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(_quiet_exception_handler)
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve(started.set))
            except BaseException as e:  # pragma: no cover - surfaced to start_in_thread
                self._error = e
            finally:
                started.set()
                try:
                    loop.run_until_complete(loop.shutdown_asyncgens())
                finally:
                    loop.close()

        self._thread = threading.Thread(target=run, name="kestrel-mock-model", daemon=True)
        self._thread.start()
        if not started.wait(timeout):
            raise RuntimeError("mock model server did not start in time")
        if self._error is not None:
            raise RuntimeError(f"mock model server failed to start: {self._error!r}") from self._error
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._thread is None:
            return
        loop, shutdown = self._loop, self._shutdown
        if loop is not None and shutdown is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(shutdown.set)
            except RuntimeError:
                pass
        self._thread.join(timeout)
        self._thread = None

    async def start(self) -> "MockModelServer":
        """Start on the running event loop; returns once listening."""
        ready = asyncio.Event()
        self._serve_task = asyncio.ensure_future(self._serve(ready.set))
        waiter = asyncio.ensure_future(ready.wait())
        done, _ = await asyncio.wait({waiter, self._serve_task}, return_when=asyncio.FIRST_COMPLETED)
        if self._serve_task in done:
            waiter.cancel()
            self._serve_task.result()
            raise RuntimeError("mock model server exited during startup")
        return self

    async def astop(self) -> None:
        if self._serve_task is None:
            return
        if self._shutdown is not None:
            self._shutdown.set()
        try:
            await asyncio.wait_for(self._serve_task, 5.0)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self._serve_task.cancel()
        self._serve_task = None

    def __enter__(self) -> "MockModelServer":
        return self.start_in_thread()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    async def __aenter__(self) -> "MockModelServer":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.astop()
