"""The ASGI application: lifespan, routing, ``/v1/models`` and the ``/_mock/*`` control endpoints."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

from .chat import ChatCompletion
from .completions import Completion
from .faults import HTTP_STATUS_FAULTS, fault_error, install_transport_registry
from .responses_http import ResponsesHttp
from .responses_ws import serve_websocket
from .script import DEFAULT_CONFIG
from .state import State
from .streaming import HttpGeneration, serve_generation
from .wire import JSON, error_body

if TYPE_CHECKING:  # pragma: no cover
    from .responses_ws import WsConnection

GENERATION_ENDPOINTS: dict[str, type[HttpGeneration]] = {
    "/chat/completions": ChatCompletion,
    "/completions": Completion,
    "/responses": ResponsesHttp,
}


def _norm_path(path: str) -> str:
    if path.startswith("/v1/"):
        return path[3:]
    return path


async def _send_json(
    send: Callable, status: int, obj: Any, headers: Optional[list[tuple[bytes, bytes]]] = None
) -> None:
    body = JSON(obj).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Callable) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            return b"".join(chunks), False
        chunks.append(msg.get("body", b""))
        if not msg.get("more_body", False):
            return b"".join(chunks), True


class MockModelApp:
    """Raw ASGI app implementing the mock. Serve with hypercorn."""

    def __init__(self, config: Optional[dict[str, Any]] = None, **kw: Any) -> None:
        cfg = copy.deepcopy(DEFAULT_CONFIG)
        if config:
            cfg.update(config)
        cfg.update(kw)
        self.state = State(cfg)
        install_transport_registry()  # must happen before hypercorn accepts connections
        self._closing: Optional[asyncio.Event] = None  # set when the server shuts down
        self.interrupts: set[asyncio.Event] = set()  # pacing sleeps of live generations
        self.ws_conns: set["WsConnection"] = set()
        self.on_startup: Optional[Callable[[], None]] = None

    # -- plumbing ----------------------------------------------------------
    @property
    def closing(self) -> asyncio.Event:
        if self._closing is None:
            self._closing = asyncio.Event()
        return self._closing

    def begin_close(self) -> None:
        """Server is shutting down: wake paced generations and close WebSockets (1001)."""
        self.closing.set()
        for ev in list(self.interrupts):
            ev.set()
        for conn in list(self.ws_conns):
            asyncio.ensure_future(conn.close(1001))

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        t = scope["type"]
        if t == "http":
            await self._http(scope, receive, send)
        elif t == "websocket":
            await self._websocket(scope, receive, send)
        elif t == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Callable, send: Callable) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                _ = self.closing
                await send({"type": "lifespan.startup.complete"})
                if self.on_startup is not None:
                    self.on_startup()
            elif msg["type"] == "lifespan.shutdown":
                self.begin_close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- HTTP --------------------------------------------------------------
    async def _http(self, scope: dict, receive: Callable, send: Callable) -> None:
        method = scope["method"]
        raw_path = scope["path"]
        st = self.state
        if raw_path.startswith("/_mock/"):
            await self._control(raw_path, method, receive, send)
            return
        st.track_connection(scope)
        path = _norm_path(raw_path)
        raw, ok = await _read_body(receive)
        if not ok:
            return
        if method == "GET" and path == "/models":
            st.record("/v1/models", None)
            cfg = st.get_config()
            now = int(time.time())
            data = [{"id": m, "object": "model", "created": now, "owned_by": "kestrel-mock"} for m in cfg["models"]]
            await _send_json(send, 200, {"object": "list", "data": data})
            return
        if method == "GET" and path.startswith("/models/"):
            st.record("/v1/models", None)
            mid = path[len("/models/") :]
            await _send_json(send, 200, {"id": mid, "object": "model", "created": 0, "owned_by": "kestrel-mock"})
            return
        kind = GENERATION_ENDPOINTS.get(path)
        if kind is None or method != "POST":
            await _send_json(send, 404, error_body(404, f"Unknown endpoint {method} {raw_path}", "not_found"))
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
        except ValueError as e:
            await _send_json(send, 400, error_body(400, f"Invalid JSON body: {e}", "invalid_json"))
            return
        st.record("/v1" + path, body)
        fault, cfg = st.take_fault("http")
        if fault in HTTP_STATUS_FAULTS:
            status, err, headers = fault_error(fault, cfg.get("retry_after", 1))
            await _send_json(send, status, err, headers)
            return
        await serve_generation(self, scope, receive, send, body, fault, kind)

    async def _control(self, path: str, method: str, receive: Callable, send: Callable) -> None:
        raw, ok = await _read_body(receive)
        if not ok:
            return
        st = self.state
        if path == "/_mock/stats":
            await _send_json(send, 200, st.snapshot())
        elif path == "/_mock/config":
            if method == "POST":
                try:
                    updates = json.loads(raw or b"{}")
                    assert isinstance(updates, dict)
                except Exception:
                    await _send_json(send, 400, error_body(400, "config must be a JSON object"))
                    return
                await _send_json(send, 200, st.configure(updates))
            else:
                await _send_json(send, 200, st.get_config())
        elif path == "/_mock/reset" and method == "POST":
            st.reset()
            await _send_json(send, 200, {"ok": True})
        else:
            await _send_json(send, 404, error_body(404, "unknown control endpoint"))

    # -- WebSocket -----------------------------------------------------------
    async def _websocket(self, scope: dict, receive: Callable, send: Callable) -> None:
        msg = await receive()
        if msg["type"] != "websocket.connect":
            return
        if _norm_path(scope["path"]) != "/responses":
            await send({"type": "websocket.close", "code": 1008})
            return
        await serve_websocket(self, scope, receive, send)
