"""A local, deterministic, OpenAI-compatible mock model server.

Used by Kestrel's tests and benchmarks, and shipped so that users can try
Kestrel without an API key::

    kestrel-mock-model --port 8765 --tps 200
    # MOCK_READY http://127.0.0.1:8765/v1

It is a raw ASGI application served by hypercorn, so one port speaks
HTTP/1.1, HTTP/2 (cleartext with prior knowledge, or h2 via ALPN when a
certificate is given) and WebSocket.

Endpoints (relative to ``base_url`` = ``http://HOST:PORT/v1``):

* ``GET  /v1/models``                 model list (cheap, used for prewarm)
* ``POST /v1/chat/completions``        stream (SSE) and non-stream
* ``POST /v1/completions``             legacy completions, honours ``stop``
* ``POST /v1/responses``               Responses API, SSE and non-stream
* ``WS   /v1/responses``               Responses WebSocket mode (lanes via
  ``stream_id``, ``generate: false`` prewarm, per-connection
  ``previous_response_id`` cache, native ``response.steer``)
* ``GET  /_mock/stats``, ``GET|POST /_mock/config``, ``POST /_mock/reset``

Python API::

    with MockModelServer(text="print('hi')\\n", tps=500) as mock:
        client = AsyncOpenAI(base_url=mock.base_url, api_key="test")
        ...
        mock.configure(fault="429", retry_after=2)
        mock.stats()["tokens_sent"]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import itertools
import json
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_TEXT",
    "MockModelServer",
    "MockModelApp",
    "tokenize",
    "main",
]

log = logging.getLogger("kestrel.mock_model")

DEFAULT_TEXT = (
    "def fibonacci(n):\n"
    "    if n < 2:\n"
    "        return n\n"
    "    return fibonacci(n - 1) + fibonacci(n - 2)\n"
)

_TOKEN_RE = re.compile(r"\s+|\w+|[^\w\s]")
_FILLER_TOKENS = _TOKEN_RE.findall("value = compute(x, y) + 1\n")

DEFAULT_CONFIG: dict[str, Any] = {
    "text": DEFAULT_TEXT,  # default output text
    "rules": [],  # [{"match": substr, "text": str, (optional) "ttft_ms", "tps"}]
    "tokens": None,  # int: deterministic filler of N tokens when no rule matches
    "ttft_ms": 0.0,  # delay before the first token
    "tps": 0.0,  # tokens per second, 0 = as fast as possible
    "model": "mock-model",  # default model name (the request's model is echoed)
    "models": ["mock-model"],  # ids listed by GET /v1/models
    "steering": True,  # WebSocket response.steer support
    "max_lanes": 16,  # concurrently active WebSocket lanes per connection
    "max_pending_steers": 4,  # per active response
    "fault": None,  # None|"drop"|"429"|"500"|"503"|"malformed"|"stall"|"refuse_ws"
    "fault_count": 1,  # how many requests get the fault (-1 = all)
    "fault_after": 2,  # tokens before a mid-stream fault (drop/malformed/stall)
    "retry_after": 1,  # seconds, for the "429" fault's retry-after header
    "refuse_ws_status": 426,  # HTTP status for the "refuse_ws" fault (426 or 403)
}

_HTTP_STATUS_FAULTS = {"429", "500", "503"}
_MIDSTREAM_FAULTS = {"drop", "malformed", "stall"}
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_MALFORMED = "this is not json {"


def tokenize(text: str) -> list[str]:
    """Split text into the mock's tokens: runs of whitespace, words, punctuation."""
    return _TOKEN_RE.findall(text)


def _new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def _strings(obj: Any, out: list[str]) -> None:
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _strings(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _strings(v, out)


def _haystack(*parts: Any) -> str:
    out: list[str] = []
    for p in parts:
        if p is not None:
            _strings(p, out)
    return "\n".join(out)


def _input_text(inp: Any) -> str:
    """Plain text of a Responses ``input`` (string or list of message items)."""
    if isinstance(inp, str):
        return inp
    parts: list[str] = []
    if isinstance(inp, list):
        for item in inp:
            if isinstance(item, str):
                parts.append(item)
                continue
            if not isinstance(item, dict):
                continue
            content = item.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                for c in content:
                    if isinstance(c, dict) and isinstance(c.get("text"), str):
                        parts.append(c["text"])
            elif isinstance(item.get("text"), str):
                parts.append(item["text"])
    return "\n".join(parts)


def _new_stats() -> dict[str, Any]:
    return {
        "requests": {},
        "connections_opened": 0,
        "ws_connections": 0,
        "http_versions": {},
        "active_streams": 0,
        "streams_completed": 0,
        "streams_cancelled": 0,
        "tokens_sent": 0,
        "tokens_after_cancel": 0,
        "steers_accepted": 0,
        "steers_failed": 0,
        "faults_injected": 0,
        "last_request": None,
        "request_log": [],
    }


@dataclass
class _Plan:
    tokens: list[str]
    finish_reason: str  # "stop" | "length"
    ttft: float  # seconds
    tps: float
    fault: Optional[str] = None
    fault_after: int = 0
    retry_after: float = 1
    prompt_tokens: int = 0


class _Stop(Exception):
    """Internal: unwind a generation (connection dropped / closed)."""


# --------------------------------------------------------------------------
# Transport registry: lets the "drop" fault really abort the TCP connection.
# hypercorn does not expose the socket to ASGI apps, so we wrap its asyncio
# TCPServer (behaviour otherwise unchanged) and key transports by
# (client addr, server addr), which match scope["client"] / scope["server"].
# --------------------------------------------------------------------------
_TRANSPORTS: dict[tuple, tuple[Any, Any]] = {}  # key -> (transport, raw transport under TLS)
_PATCH_LOCK = threading.Lock()


def _install_transport_registry() -> None:
    with _PATCH_LOCK:
        from hypercorn.asyncio import run as _hc_run
        from hypercorn.utils import parse_socket_addr

        base = _hc_run.TCPServer
        if getattr(base, "_kestrel_tracking", False):
            return

        class _TrackingTCPServer(base):  # type: ignore[misc, valid-type]
            _kestrel_tracking = True

            async def run(self) -> None:
                key = None
                try:
                    sock = self.writer.get_extra_info("socket")
                    key = (
                        tuple(parse_socket_addr(sock.family, sock.getpeername()) or ()),
                        tuple(parse_socket_addr(sock.family, sock.getsockname()) or ()),
                    )
                    transport = self.writer.transport
                    ssl_proto = getattr(transport, "_ssl_protocol", None)
                    raw = getattr(ssl_proto, "_transport", None) if ssl_proto is not None else None
                    _TRANSPORTS[key] = (transport, raw)
                except Exception:  # pragma: no cover - best effort
                    key = None
                try:
                    await super().run()
                finally:
                    entry = _TRANSPORTS.get(key) if key is not None else None
                    if entry is not None and entry[0] is self.writer.transport:
                        del _TRANSPORTS[key]

        _hc_run.TCPServer = _TrackingTCPServer


def _hard_abort(entry: tuple[Any, Any]) -> None:
    """Abort a connection; for TLS also abort the raw socket transport underneath
    (``_SSLProtocolTransport.abort()`` raises or is a no-op while the SSL layer is
    shutting down, which would leave hypercorn waiting on close_notify)."""
    transport, raw = entry
    try:
        transport.abort()
    except Exception:
        pass
    if raw is not None:
        try:
            raw.abort()
        except Exception:  # pragma: no cover
            pass


def _abort_connection(scope: dict) -> bool:
    key = (tuple(scope.get("client") or ()), tuple(scope.get("server") or ()))
    entry = _TRANSPORTS.get(key)
    if entry is None:
        return False
    _hard_abort(entry)
    return True


async def _wait_event(event: asyncio.Event, timeout: float) -> None:
    if event.is_set():
        return
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except asyncio.TimeoutError:
        pass


# --------------------------------------------------------------------------
# Shared state: config + stats
# --------------------------------------------------------------------------
class _State:
    def __init__(self, config: dict[str, Any]) -> None:
        self.lock = threading.Lock()
        self.startup_config = copy.deepcopy(config)
        self.config = copy.deepcopy(config)
        self.stats = _new_stats()
        self.seen_clients: set = set()
        self.fault_remaining = self._initial_fault_remaining()

    def _initial_fault_remaining(self) -> int:
        if not self.config.get("fault"):
            return 0
        return int(self.config.get("fault_count", 1))

    def configure(self, updates: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            for k, v in updates.items():
                self.config[k] = v
            if "fault" in updates or "fault_count" in updates:
                self.fault_remaining = self._initial_fault_remaining()
            return copy.deepcopy(self.config)

    def reset(self) -> None:
        with self.lock:
            self.config = copy.deepcopy(self.startup_config)
            active = self.stats["active_streams"]
            self.stats = _new_stats()
            self.stats["active_streams"] = active
            self.seen_clients = set()
            self.fault_remaining = self._initial_fault_remaining()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.stats)

    def get_config(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.config)

    def record(self, endpoint: str, body: Any) -> None:
        with self.lock:
            s = self.stats
            s["requests"][endpoint] = s["requests"].get(endpoint, 0) + 1
            s["last_request"] = body
            log_ = s["request_log"]
            log_.append({"endpoint": endpoint, "body": body})
            if len(log_) > 50:
                del log_[: len(log_) - 50]

    def track_connection(self, scope: dict) -> None:
        client = scope.get("client")
        key = (tuple(client) if client else None, tuple(scope.get("server") or ()))
        with self.lock:
            hv = scope.get("http_version", "1.1")
            s = self.stats
            s["http_versions"][hv] = s["http_versions"].get(hv, 0) + 1
            if key not in self.seen_clients:
                self.seen_clients.add(key)
                s["connections_opened"] += 1

    def take_fault(self, kind: str) -> tuple[Optional[str], dict[str, Any]]:
        """Consume one fault for a request of ``kind`` ("http", "ws_create", "ws_handshake")."""
        with self.lock:
            cfg = self.config
            fault = cfg.get("fault")
            if not fault or self.fault_remaining == 0:
                return None, cfg
            fault = str(fault)
            if (fault == "refuse_ws") != (kind == "ws_handshake"):
                return None, cfg
            if self.fault_remaining > 0:
                self.fault_remaining -= 1
            self.stats["faults_injected"] += 1
            return fault, cfg

    def plan(
        self,
        haystack: str,
        body: dict[str, Any],
        *,
        fault: Optional[str],
        text_override: Optional[str] = None,
        stop: Any = None,
        max_tokens: Optional[int] = None,
    ) -> _Plan:
        with self.lock:
            cfg = self.config
            ttft_ms = float(cfg.get("ttft_ms") or 0)
            tps = float(cfg.get("tps") or 0)
            text: Optional[str] = text_override
            tokens: Optional[list[str]] = None
            if text is None:
                for rule in cfg.get("rules") or []:
                    m = rule.get("match")
                    if m is not None and m in haystack:
                        text = str(rule.get("text", ""))
                        if rule.get("ttft_ms") is not None:
                            ttft_ms = float(rule["ttft_ms"])
                        if rule.get("tps") is not None:
                            tps = float(rule["tps"])
                        break
            if text is None and cfg.get("tokens"):
                n = int(cfg["tokens"])
                tokens = list(itertools.islice(itertools.cycle(_FILLER_TOKENS), n))
            if text is None and tokens is None:
                text = str(cfg.get("text") or "")
            fault_after = int(cfg.get("fault_after") or 0)
            retry_after = cfg.get("retry_after", 1)
        finish = "stop"
        if tokens is None:
            assert text is not None
            if stop:
                stops = [stop] if isinstance(stop, str) else [s for s in stop if s]
                cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
                if cut >= 0:
                    text = text[:cut]
            tokens = tokenize(text)
        if max_tokens is not None and max_tokens >= 0 and len(tokens) > max_tokens:
            tokens = tokens[:max_tokens]
            finish = "length"
        return _Plan(
            tokens=tokens,
            finish_reason=finish,
            ttft=ttft_ms / 1000.0,
            tps=tps,
            fault=fault,
            fault_after=fault_after,
            retry_after=retry_after,
            prompt_tokens=max(1, len(haystack) // 4),
        )


def _usage_chat(plan: _Plan, n: int) -> dict[str, Any]:
    return {
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": n,
        "total_tokens": plan.prompt_tokens + n,
    }


def _usage_responses(plan: Optional[_Plan], n: int) -> dict[str, Any]:
    p = plan.prompt_tokens if plan else 0
    return {
        "input_tokens": p,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": p + n,
    }


def _error_body(status: int, message: str, code: Optional[str] = None, param: Optional[str] = None) -> dict:
    etype = {
        400: "invalid_request_error",
        404: "invalid_request_error",
        429: "rate_limit_error" if code != "insufficient_quota" else "insufficient_quota",
        500: "server_error",
        503: "server_error",
    }.get(status, "server_error")
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}


def _fault_error(fault: str, retry_after: Any) -> tuple[int, dict, list[tuple[bytes, bytes]]]:
    status = int(fault)
    headers: list[tuple[bytes, bytes]] = []
    if status == 429:
        headers.append((b"retry-after", str(retry_after).encode()))
        body = _error_body(429, "Rate limit reached for mock-model (injected fault).", "rate_limit_exceeded")
    elif status == 503:
        body = _error_body(503, "The server is overloaded (injected fault).", "service_unavailable")
    else:
        body = _error_body(500, "The server had an error (injected fault).", "server_error")
    return status, body, headers


# --------------------------------------------------------------------------
# Responses object / event builders
# --------------------------------------------------------------------------
def _response_obj(
    rid: str,
    *,
    model: str,
    created_at: int,
    status: str,
    output: list,
    usage: Optional[dict],
    previous_response_id: Optional[str],
    instructions: Any,
    incomplete_reason: Optional[str] = None,
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "instructions": instructions,
        "max_output_tokens": None,
        "metadata": {},
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": previous_response_id,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
    }


def _message_item(msg_id: str, text: Optional[str], status: str) -> dict[str, Any]:
    content = [] if text is None else [_text_part(text)]
    return {"id": msg_id, "type": "message", "role": "assistant", "status": status, "content": content}


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


class _ResponseRun:
    """Emits the Responses streaming event sequence for one response.

    ``out(event_type, json_text)`` writes one event (SSE or WebSocket frame).
    """

    def __init__(
        self,
        *,
        rid: str,
        model: str,
        previous_response_id: Optional[str],
        instructions: Any,
        stream_id: Optional[str],
        out: Callable[[str, str], Awaitable[None]],
    ) -> None:
        self.rid = rid
        self.model = model
        self.prev = previous_response_id
        self.instructions = instructions
        self.stream_id = stream_id
        self.out = out
        self.created_at = int(time.time())
        self.msg_id = _new_id("msg_")
        self.seq = 0
        self._sid_json = ',"stream_id":' + _JSON(stream_id) if stream_id is not None else ""
        self._delta_pre = (
            '{"type":"response.output_text.delta","item_id":"' + self.msg_id + '",'
            '"output_index":0,"content_index":0,"delta":'
        )
        self._delta_mid = ',"logprobs":[],"sequence_number":'
        self._delta_post = self._sid_json + "}"

    def next_seq(self) -> int:
        s = self.seq
        self.seq += 1
        return s

    async def emit(self, event: dict[str, Any]) -> None:
        event["sequence_number"] = self.next_seq()
        if self.stream_id is not None:
            event["stream_id"] = self.stream_id
        await self.out(event["type"], _JSON(event))

    def response(self, status: str, output: list, usage: Optional[dict], reason: Optional[str] = None) -> dict:
        return _response_obj(
            self.rid,
            model=self.model,
            created_at=self.created_at,
            status=status,
            output=output,
            usage=usage,
            previous_response_id=self.prev,
            instructions=self.instructions,
            incomplete_reason=reason,
        )

    async def head(self, generate: bool = True) -> None:
        await self.emit({"type": "response.created", "response": self.response("in_progress", [], None)})
        await self.emit({"type": "response.in_progress", "response": self.response("in_progress", [], None)})
        if generate:
            await self.emit(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": _message_item(self.msg_id, None, "in_progress"),
                }
            )
            await self.emit(
                {
                    "type": "response.content_part.added",
                    "item_id": self.msg_id,
                    "output_index": 0,
                    "content_index": 0,
                    "part": _text_part(""),
                }
            )

    async def delta(self, tok: str) -> None:
        s = self.seq
        self.seq = s + 1
        await self.out(
            "response.output_text.delta",
            self._delta_pre + _JSON(tok) + self._delta_mid + str(s) + self._delta_post,
        )

    async def tail(self, text: str, plan: Optional[_Plan], n: int, incomplete_reason: Optional[str]) -> None:
        item_status = "incomplete" if incomplete_reason else "completed"
        await self.emit(
            {
                "type": "response.output_text.done",
                "item_id": self.msg_id,
                "output_index": 0,
                "content_index": 0,
                "text": text,
                "logprobs": [],
            }
        )
        await self.emit(
            {
                "type": "response.content_part.done",
                "item_id": self.msg_id,
                "output_index": 0,
                "content_index": 0,
                "part": _text_part(text),
            }
        )
        item = _message_item(self.msg_id, text, item_status)
        await self.emit({"type": "response.output_item.done", "output_index": 0, "item": item})
        await self.finish([item], plan, n, incomplete_reason)

    async def finish(self, output: list, plan: Optional[_Plan], n: int, incomplete_reason: Optional[str]) -> None:
        if incomplete_reason:
            resp = self.response("incomplete", output, _usage_responses(plan, n), incomplete_reason)
            await self.emit({"type": "response.incomplete", "response": resp})
        else:
            resp = self.response("completed", output, _usage_responses(plan, n))
            await self.emit({"type": "response.completed", "response": resp})


# --------------------------------------------------------------------------
# The ASGI application
# --------------------------------------------------------------------------
class MockModelApp:
    """Raw ASGI app implementing the mock. Serve with hypercorn."""

    def __init__(self, config: Optional[dict[str, Any]] = None, **kw: Any) -> None:
        cfg = copy.deepcopy(DEFAULT_CONFIG)
        if config:
            cfg.update(config)
        cfg.update(kw)
        self.state = _State(cfg)
        _install_transport_registry()  # must happen before hypercorn accepts connections
        self._closing: Optional[asyncio.Event] = None  # set when the server shuts down
        self._interrupts: set[asyncio.Event] = set()  # pacing sleeps of live generations
        self._ws_conns: set["_WsConnection"] = set()
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
        for ev in list(self._interrupts):
            ev.set()
        for conn in list(self._ws_conns):
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

    @staticmethod
    def _norm_path(path: str) -> str:
        if path.startswith("/v1/"):
            return path[3:]
        return path

    async def _send_json(
        self, send: Callable, status: int, obj: Any, headers: Optional[list[tuple[bytes, bytes]]] = None
    ) -> None:
        body = _JSON(obj).encode()
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

    @staticmethod
    async def _read_body(receive: Callable) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return b"".join(chunks), False
            chunks.append(msg.get("body", b""))
            if not msg.get("more_body", False):
                return b"".join(chunks), True

    # -- HTTP --------------------------------------------------------------
    async def _http(self, scope: dict, receive: Callable, send: Callable) -> None:
        method = scope["method"]
        raw_path = scope["path"]
        st = self.state
        if raw_path.startswith("/_mock/"):
            await self._control(raw_path, method, receive, send)
            return
        st.track_connection(scope)
        path = self._norm_path(raw_path)
        raw, ok = await self._read_body(receive)
        if not ok:
            return
        if method == "GET" and path == "/models":
            st.record("/v1/models", None)
            cfg = st.get_config()
            now = int(time.time())
            data = [{"id": m, "object": "model", "created": now, "owned_by": "kestrel-mock"} for m in cfg["models"]]
            await self._send_json(send, 200, {"object": "list", "data": data})
            return
        if method == "GET" and path.startswith("/models/"):
            st.record("/v1/models", None)
            mid = path[len("/models/") :]
            await self._send_json(send, 200, {"id": mid, "object": "model", "created": 0, "owned_by": "kestrel-mock"})
            return
        handler = {
            "/chat/completions": self._chat,
            "/completions": self._completions,
            "/responses": self._responses,
        }.get(path)
        if handler is None or method != "POST":
            await self._send_json(send, 404, _error_body(404, f"Unknown endpoint {method} {raw_path}", "not_found"))
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
        except ValueError as e:
            await self._send_json(send, 400, _error_body(400, f"Invalid JSON body: {e}", "invalid_json"))
            return
        endpoint = "/v1" + path
        st.record(endpoint, body)
        fault, cfg = st.take_fault("http")
        if fault in _HTTP_STATUS_FAULTS:
            status, err, headers = _fault_error(fault, cfg.get("retry_after", 1))
            await self._send_json(send, status, err, headers)
            return
        await handler(scope, receive, send, body, fault)

    async def _control(self, path: str, method: str, receive: Callable, send: Callable) -> None:
        raw, ok = await self._read_body(receive)
        if not ok:
            return
        st = self.state
        if path == "/_mock/stats":
            await self._send_json(send, 200, st.snapshot())
        elif path == "/_mock/config":
            if method == "POST":
                try:
                    updates = json.loads(raw or b"{}")
                    assert isinstance(updates, dict)
                except Exception:
                    await self._send_json(send, 400, _error_body(400, "config must be a JSON object"))
                    return
                await self._send_json(send, 200, st.configure(updates))
            else:
                await self._send_json(send, 200, st.get_config())
        elif path == "/_mock/reset" and method == "POST":
            st.reset()
            await self._send_json(send, 200, {"ok": True})
        else:
            await self._send_json(send, 404, _error_body(404, "unknown control endpoint"))

    # -- HTTP streaming core ----------------------------------------------
    async def _pump(
        self,
        plan: _Plan,
        write_tok: Callable[[str], Awaitable[None]],
        interrupt: asyncio.Event,
        should_stop: Callable[[], Optional[str]],
        on_fault: Callable[[str], Awaitable[Optional[str]]],
    ) -> tuple[int, Optional[str]]:
        """Write ``plan.tokens`` with pacing. Returns (tokens_sent, stop_reason)."""
        loop = asyncio.get_running_loop()
        state = self.state
        start = loop.time() + plan.ttft
        tps = plan.tps
        fault = plan.fault if plan.fault in _MIDSTREAM_FAULTS else None
        fault_at = max(0, plan.fault_after) if fault else -1
        n = 0
        for i, tok in enumerate(plan.tokens):
            if i == fault_at:
                r = await on_fault(fault)  # type: ignore[arg-type]
                if r:
                    return n, r
            due = start + i / tps if tps > 0 else start
            delay = due - loop.time()
            if delay > 0.0005:
                await _wait_event(interrupt, delay)
            elif (i & 63) == 63:
                await asyncio.sleep(0)
            r = should_stop()
            if r:
                return n, r
            await write_tok(tok)
            n += 1
            state.stats["tokens_sent"] += 1
        if fault and fault_at >= len(plan.tokens):
            r = await on_fault(fault)
            if r:
                return n, r
        return n, None

    def _watch_disconnect(self, receive: Callable) -> tuple[asyncio.Event, asyncio.Task]:
        ev = asyncio.Event()

        async def watch() -> None:
            try:
                while True:
                    msg = await receive()
                    if msg["type"] == "http.disconnect":
                        break
            finally:
                ev.set()

        return ev, asyncio.ensure_future(watch())

    async def _http_stream(
        self,
        scope: dict,
        receive: Callable,
        send: Callable,
        plan: _Plan,
        head: list[bytes],
        tok_frame: Callable[[str], bytes],
        tail: Callable[[list[str], Optional[str]], list[bytes]],
        bad_frame: bytes,
    ) -> None:
        """Generic SSE stream: headers, head frames, paced token frames, tail frames."""
        st = self.state
        disc, watcher = self._watch_disconnect(receive)
        interrupt = asyncio.Event()
        closing = self.closing
        sent: list[str] = []
        outcome = "cancelled"

        def set_interrupt(_: Any = None) -> None:
            interrupt.set()

        watcher.add_done_callback(set_interrupt)
        self._interrupts.add(interrupt)
        st.stats["active_streams"] += 1

        async def write(data: bytes) -> None:
            if disc.is_set():
                raise _Stop()
            try:
                await send({"type": "http.response.body", "body": data, "more_body": True})
            except Exception as e:  # connection went away under us
                raise _Stop() from e

        async def write_tok(tok: str) -> None:
            await write(tok_frame(tok))
            sent.append(tok)

        def should_stop() -> Optional[str]:
            if disc.is_set():
                return "disconnected"
            if closing.is_set():
                return "closing"
            return None

        async def on_fault(kind: str) -> Optional[str]:
            if kind == "malformed":
                await write(bad_frame)
                return None
            if kind == "drop":
                _abort_connection(scope)
                return "dropped"
            if kind == "stall":
                stop_task = asyncio.ensure_future(closing.wait())
                try:
                    await asyncio.wait({watcher, stop_task}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop_task.cancel()
                return "stalled"
            return None

        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-cache"),
                        (b"x-request-id", _new_id("req_").encode()),
                    ],
                }
            )
            for fr in head:
                await write(fr)
            n, reason = await self._pump(plan, write_tok, interrupt, should_stop, on_fault)
            if reason is None:
                for fr in tail(sent, plan.finish_reason):
                    await write(fr)
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                outcome = "completed"
            elif reason == "closing":
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except _Stop:
            pass
        finally:
            watcher.cancel()
            self._interrupts.discard(interrupt)
            st.stats["active_streams"] -= 1
            if outcome == "completed":
                st.stats["streams_completed"] += 1
            else:
                st.stats["streams_cancelled"] += 1

    async def _http_nonstream(
        self, scope: dict, receive: Callable, send: Callable, plan: _Plan, build: Callable[[list[str]], dict]
    ) -> None:
        """Non-streaming generation: wait the simulated generation time, send JSON."""
        st = self.state
        disc, watcher = self._watch_disconnect(receive)
        self._interrupts.add(disc)
        st.stats["active_streams"] += 1
        outcome = "cancelled"
        try:
            n = len(plan.tokens)
            if plan.fault in _MIDSTREAM_FAULTS:
                n = min(n, max(0, plan.fault_after))
            total = plan.ttft + (n / plan.tps if plan.tps > 0 else 0.0)
            if total > 0:
                await _wait_event(disc, total)
            if disc.is_set() or self.closing.is_set():
                return
            if plan.fault == "stall":
                stop_task = asyncio.ensure_future(self.closing.wait())
                try:
                    await asyncio.wait({watcher, stop_task}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop_task.cancel()
                return
            body = _JSON(build(plan.tokens)).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            if plan.fault == "malformed":
                body = _MALFORMED.encode()
                headers[1] = (b"content-length", str(len(body)).encode())
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            if plan.fault == "drop":
                await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
                await asyncio.sleep(0)
                _abort_connection(scope)
                return
            await send({"type": "http.response.body", "body": body})
            st.stats["tokens_sent"] += len(plan.tokens)
            outcome = "completed"
        finally:
            watcher.cancel()
            self._interrupts.discard(disc)
            st.stats["active_streams"] -= 1
            st.stats["streams_completed" if outcome == "completed" else "streams_cancelled"] += 1

    # -- /v1/chat/completions ----------------------------------------------
    async def _chat(self, scope: dict, receive: Callable, send: Callable, body: dict, fault: Optional[str]) -> None:
        st = self.state
        model = str(body.get("model") or st.get_config()["model"])
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        plan = st.plan(
            _haystack(body.get("messages")),
            body,
            fault=fault,
            stop=body.get("stop"),
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        )
        cid = _new_id("chatcmpl-")
        created = int(time.time())
        if not body.get("stream"):

            def build(tokens: list[str]) -> dict:
                return {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "".join(tokens), "refusal": None},
                            "logprobs": None,
                            "finish_reason": plan.finish_reason,
                        }
                    ],
                    "usage": _usage_chat(plan, len(tokens)),
                    "system_fingerprint": "fp_mock",
                }

            await self._http_nonstream(scope, receive, send, plan, build)
            return

        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        common = '{"id":"' + cid + '","object":"chat.completion.chunk","created":' + str(created)
        common += ',"model":' + _JSON(model) + ',"system_fingerprint":"fp_mock","choices":'
        pre = ("data: " + common + '[{"index":0,"delta":{"content":').encode()
        post = b'},"logprobs":null,"finish_reason":null}]}\n\n'
        head = [
            (
                "data: "
                + common
                + '[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n'
            ).encode()
        ]

        def tok_frame(tok: str) -> bytes:
            return pre + _JSON(tok).encode() + post

        def tail(sent: list[str], finish: Optional[str]) -> list[bytes]:
            frames = [
                (
                    "data: "
                    + common
                    + '[{"index":0,"delta":{},"logprobs":null,"finish_reason":'
                    + _JSON(finish)
                    + "}]}\n\n"
                ).encode()
            ]
            if include_usage:
                frames.append(
                    ("data: " + common + '[],"usage":' + _JSON(_usage_chat(plan, len(sent))) + "}\n\n").encode()
                )
            frames.append(b"data: [DONE]\n\n")
            return frames

        await self._http_stream(
            scope, receive, send, plan, head, tok_frame, tail, ("data: " + _MALFORMED + "\n\n").encode()
        )

    # -- /v1/completions -----------------------------------------------------
    async def _completions(
        self, scope: dict, receive: Callable, send: Callable, body: dict, fault: Optional[str]
    ) -> None:
        st = self.state
        model = str(body.get("model") or st.get_config()["model"])
        max_tokens = body.get("max_tokens")
        plan = st.plan(
            _haystack(body.get("prompt"), body.get("suffix")),
            body,
            fault=fault,
            stop=body.get("stop"),
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        )
        cid = _new_id("cmpl-")
        created = int(time.time())
        if not body.get("stream"):

            def build(tokens: list[str]) -> dict:
                return {
                    "id": cid,
                    "object": "text_completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {"text": "".join(tokens), "index": 0, "logprobs": None, "finish_reason": plan.finish_reason}
                    ],
                    "usage": _usage_chat(plan, len(tokens)),
                    "system_fingerprint": "fp_mock",
                }

            await self._http_nonstream(scope, receive, send, plan, build)
            return

        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        common = '{"id":"' + cid + '","object":"text_completion","created":' + str(created)
        common += ',"model":' + _JSON(model) + ',"system_fingerprint":"fp_mock","choices":'
        pre = ("data: " + common + '[{"text":').encode()
        post = b',"index":0,"logprobs":null,"finish_reason":null}]}\n\n'

        def tok_frame(tok: str) -> bytes:
            return pre + _JSON(tok).encode() + post

        def tail(sent: list[str], finish: Optional[str]) -> list[bytes]:
            frames = [
                (
                    "data: "
                    + common
                    + '[{"text":"","index":0,"logprobs":null,"finish_reason":'
                    + _JSON(finish)
                    + "}]}\n\n"
                ).encode()
            ]
            if include_usage:
                frames.append(
                    ("data: " + common + '[],"usage":' + _JSON(_usage_chat(plan, len(sent))) + "}\n\n").encode()
                )
            frames.append(b"data: [DONE]\n\n")
            return frames

        await self._http_stream(
            scope, receive, send, plan, [], tok_frame, tail, ("data: " + _MALFORMED + "\n\n").encode()
        )

    # -- /v1/responses (HTTP) --------------------------------------------------
    async def _responses(
        self, scope: dict, receive: Callable, send: Callable, body: dict, fault: Optional[str]
    ) -> None:
        st = self.state
        model = str(body.get("model") or st.get_config()["model"])
        mot = body.get("max_output_tokens")
        plan = st.plan(
            _haystack(body.get("instructions"), body.get("input")),
            body,
            fault=fault,
            max_tokens=mot if isinstance(mot, int) else None,
        )
        rid = _new_id("resp_")
        incomplete = "max_output_tokens" if plan.finish_reason == "length" else None
        if not body.get("stream"):
            run = _ResponseRun(
                rid=rid,
                model=model,
                previous_response_id=body.get("previous_response_id"),
                instructions=body.get("instructions"),
                stream_id=None,
                out=_noop_out,
            )

            def build(tokens: list[str]) -> dict:
                text = "".join(tokens)
                item = _message_item(run.msg_id, text, "incomplete" if incomplete else "completed")
                return run.response(
                    "incomplete" if incomplete else "completed",
                    [item],
                    _usage_responses(plan, len(tokens)),
                    incomplete,
                )

            await self._http_nonstream(scope, receive, send, plan, build)
            return

        frames: list[bytes] = []

        async def collect(etype: str, data: str) -> None:
            frames.append(("event: " + etype + "\ndata: " + data + "\n\n").encode())

        run = _ResponseRun(
            rid=rid,
            model=model,
            previous_response_id=body.get("previous_response_id"),
            instructions=body.get("instructions"),
            stream_id=None,
            out=collect,
        )
        await run.head()
        head = frames[:]
        frames.clear()

        def tok_frame(tok: str) -> bytes:
            s = run.seq
            run.seq = s + 1
            return (
                "event: response.output_text.delta\ndata: "
                + run._delta_pre
                + _JSON(tok)
                + run._delta_mid
                + str(s)
                + run._delta_post
                + "\n\n"
            ).encode()

        def tail(sent: list[str], finish: Optional[str]) -> list[bytes]:
            frames.clear()
            coro = run.tail("".join(sent), plan, len(sent), incomplete)
            # run.tail only awaits `collect`, which never suspends
            try:
                coro.send(None)
            except StopIteration:
                pass
            return frames[:]

        await self._http_stream(
            scope,
            receive,
            send,
            plan,
            head,
            tok_frame,
            tail,
            ("event: response.output_text.delta\ndata: " + _MALFORMED + "\n\n").encode(),
        )

    # -- WebSocket ----------------------------------------------------------------
    async def _websocket(self, scope: dict, receive: Callable, send: Callable) -> None:
        msg = await receive()
        if msg["type"] != "websocket.connect":
            return
        st = self.state
        path = self._norm_path(scope["path"])
        if path != "/responses":
            await send({"type": "websocket.close", "code": 1008})
            return
        fault, cfg = st.take_fault("ws_handshake")
        if fault == "refuse_ws":
            status = int(cfg.get("refuse_ws_status") or 426)
            body = _JSON(_error_body(status, "WebSocket mode disabled (injected fault).", "websocket_refused"))
            if "websocket.http.response" in (scope.get("extensions") or {}):
                await send(
                    {
                        "type": "websocket.http.response.start",
                        "status": status,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "websocket.http.response.body", "body": body.encode()})
            else:
                await send({"type": "websocket.close", "code": 1008})  # -> HTTP 403
            return
        await send({"type": "websocket.accept"})
        with st.lock:
            st.stats["ws_connections"] += 1
        conn = _WsConnection(self, send)
        self._ws_conns.add(conn)
        if self.closing.is_set():
            await conn.close(1001)
        try:
            while True:
                msg = await receive()
                mt = msg["type"]
                if mt == "websocket.disconnect":
                    break
                if mt != "websocket.receive":
                    continue
                data = msg.get("text")
                if data is None:
                    data = msg.get("bytes") or b""
                await conn.on_message(data)
                if conn.closed:
                    break
        finally:
            self._ws_conns.discard(conn)
            await conn.shutdown()


async def _noop_out(etype: str, data: str) -> None:
    return None


class _Active:
    __slots__ = ("rid", "stream_id", "run", "interrupt", "steers")

    def __init__(self, rid: str, stream_id: Optional[str], run: _ResponseRun) -> None:
        self.rid = rid
        self.stream_id = stream_id
        self.run = run
        self.interrupt = asyncio.Event()
        self.steers: list[tuple[str, Any]] = []  # (steer id, input)


class _WsConnection:
    """Per-WebSocket-connection state: lanes, response cache, active responses."""

    def __init__(self, app: MockModelApp, send: Callable) -> None:
        self.app = app
        self.state = app.state
        self._send = send
        self.send_lock = asyncio.Lock()
        self.cache: set[str] = set()
        self.lanes: dict[Optional[str], deque] = {}
        self.lane_tasks: dict[Optional[str], asyncio.Task] = {}
        self.active: dict[str, _Active] = {}
        self.closed = False
        self.closed_event = asyncio.Event()

    async def send_text(self, text: str) -> None:
        if self.closed:
            raise _Stop()
        try:
            async with self.send_lock:
                await self._send({"type": "websocket.send", "text": text})
        except _Stop:
            raise
        except Exception as e:
            self.mark_closed()
            raise _Stop() from e

    def mark_closed(self) -> None:
        if not self.closed:
            self.closed = True
            self.closed_event.set()
            for act in self.active.values():
                act.interrupt.set()

    async def close(self, code: int) -> None:
        if self.closed:
            return
        try:
            async with self.send_lock:
                await self._send({"type": "websocket.close", "code": code})
        except Exception:
            pass
        self.mark_closed()

    async def shutdown(self) -> None:
        self.mark_closed()
        tasks = [t for t in self.lane_tasks.values() if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def send_error(
        self,
        code: str,
        message: str,
        *,
        status: int = 400,
        etype: str = "invalid_request_error",
        param: Optional[str] = None,
        stream_id: Optional[str] = None,
        headers: Optional[dict] = None,
    ) -> None:
        ev: dict[str, Any] = {
            "type": "error",
            "status": status,
            "error": {"type": etype, "code": code, "message": message, "param": param},
        }
        if headers:
            ev["error"]["headers"] = headers
        if stream_id is not None:
            ev["stream_id"] = stream_id
        await self.send_text(_JSON(ev))

    # -- inbound ------------------------------------------------------------
    async def on_message(self, data: Any) -> None:
        try:
            msg = json.loads(data)
            if not isinstance(msg, dict):
                raise ValueError("event must be a JSON object")
        except ValueError as e:
            await self.send_error("invalid_json", f"Invalid JSON: {e}")
            return
        mtype = msg.get("type")
        try:
            if mtype == "response.create":
                self.state.record("ws_create", msg)
                await self.on_create(msg)
            elif mtype == "response.steer":
                self.state.record("ws_steer", msg)
                await self.on_steer(msg)
            else:
                self.state.record("ws_other", msg)
                await self.send_error("unknown_event_type", f"Unsupported event type: {mtype!r}", param="type")
        except _Stop:
            pass

    async def on_create(self, msg: dict) -> None:
        sid = msg.get("stream_id")
        if sid is not None and not isinstance(sid, str):
            await self.send_error("invalid_value", "stream_id must be a string", param="stream_id")
            return
        lane = self.lanes.get(sid)
        if lane is not None:
            lane.append(msg)  # FIFO within a busy lane
            return
        max_lanes = int(self.state.get_config().get("max_lanes") or 16)
        if len(self.lanes) >= max_lanes:
            await self.send_error(
                "too_many_active_streams",
                f"Too many concurrently active streams on this connection (limit {max_lanes}).",
                param="stream_id",
                stream_id=sid,
            )
            return
        lane = deque([msg])
        self.lanes[sid] = lane
        self.lane_tasks[sid] = asyncio.ensure_future(self._lane_worker(sid, lane))

    async def _lane_worker(self, sid: Optional[str], lane: deque) -> None:
        try:
            while lane and not self.closed:
                msg = lane.popleft()
                await self._process_create(msg, sid)
        except _Stop:
            pass
        finally:
            if self.lanes.get(sid) is lane:
                del self.lanes[sid]
                self.lane_tasks.pop(sid, None)

    async def _process_create(self, msg: dict, sid: Optional[str]) -> None:
        st = self.state
        prev = msg.get("previous_response_id")
        if prev is not None and prev not in self.cache:
            await self.send_error(
                "previous_response_not_found",
                f"Previous response with id '{prev}' not found.",
                param="previous_response_id",
                stream_id=sid,
            )
            return
        fault, cfg = st.take_fault("ws_create")
        if fault in _HTTP_STATUS_FAULTS:
            status, err, headers = _fault_error(fault, cfg.get("retry_after", 1))
            e = err["error"]
            await self.send_error(
                e["code"],
                e["message"],
                status=status,
                etype=e["type"],
                stream_id=sid,
                headers={k.decode(): v.decode() for k, v in headers} or None,
            )
            return
        model = str(msg.get("model") or cfg.get("model") or "mock-model")
        instructions = msg.get("instructions")
        rid = _new_id("resp_")
        if msg.get("generate") is False:
            run = _ResponseRun(
                rid=rid,
                model=model,
                previous_response_id=prev,
                instructions=instructions,
                stream_id=sid,
                out=self._out,
            )
            self.cache.add(rid)
            await run.head(generate=False)
            await run.finish([], None, 0, None)
            return
        mot = msg.get("max_output_tokens")
        plan = st.plan(
            _haystack(instructions, msg.get("input")),
            msg,
            fault=fault,
            max_tokens=mot if isinstance(mot, int) else None,
        )
        while True:
            steers = await self._generate(rid, plan, model, prev, instructions, sid)
            if not steers:
                return
            # Successor: continues from the steered response with the queued input.
            steer_text = "\n".join(_input_text(inp) for _, inp in steers)
            prev, rid = rid, _new_id("resp_")
            override = None
            with st.lock:
                rules = st.config.get("rules") or []
                default_text = str(st.config.get("text") or "")
            for rule in rules:
                m = rule.get("match")
                if m is not None and m in steer_text:
                    override = str(rule.get("text", ""))
                    break
            if override is None:
                override = f"[steered: {steer_text}] " + default_text
            plan = st.plan(steer_text, msg, fault=None, text_override=override)

    async def _out(self, etype: str, data: str) -> None:
        await self.send_text(data)

    async def _generate(
        self,
        rid: str,
        plan: _Plan,
        model: str,
        prev: Optional[str],
        instructions: Any,
        sid: Optional[str],
    ) -> list[tuple[str, Any]]:
        """Stream one response. Returns steering input accepted for it (successor needed)."""
        st = self.state
        run = _ResponseRun(
            rid=rid, model=model, previous_response_id=prev, instructions=instructions, stream_id=sid, out=self._out
        )
        act = _Active(rid, sid, run)
        self.app._interrupts.add(act.interrupt)
        self.active[rid] = act
        self.cache.add(rid)
        st.stats["active_streams"] += 1
        outcome = "cancelled"
        sent: list[str] = []
        closing = self.app.closing

        async def write_tok(tok: str) -> None:
            await run.delta(tok)
            sent.append(tok)

        def should_stop() -> Optional[str]:
            if self.closed:
                return "closed"
            if closing.is_set():
                return "closing"
            if act.steers:
                return "steered"
            return None

        async def on_fault(kind: str) -> Optional[str]:
            if kind == "malformed":
                await self.send_text(_MALFORMED)
                return None
            if kind == "drop":
                await self.close(1011)
                return "closed"
            if kind == "stall":
                stop_task = asyncio.ensure_future(closing.wait())
                closed_task = asyncio.ensure_future(self.closed_event.wait())
                try:
                    await asyncio.wait({stop_task, closed_task}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop_task.cancel()
                    closed_task.cancel()
                return "closed"
            return None

        try:
            await run.head()
            n, reason = await self.app._pump(plan, write_tok, act.interrupt, should_stop, on_fault)
            if reason in ("closed", "closing"):
                return []
            incomplete = None
            if reason == "steered":
                incomplete = "steered"
            elif plan.finish_reason == "length":
                incomplete = "max_output_tokens"
            await run.tail("".join(sent), plan, n, incomplete)
            outcome = "completed"
        finally:
            self.app._interrupts.discard(act.interrupt)
            self.active.pop(rid, None)
            st.stats["active_streams"] -= 1
            st.stats["streams_completed" if outcome == "completed" else "streams_cancelled"] += 1
        return act.steers

    async def on_steer(self, msg: dict) -> None:
        st = self.state
        target = msg.get("previous_response_id")
        inp = msg.get("input")
        act = self.active.get(target) if isinstance(target, str) else None
        lane_sid = act.stream_id if act is not None else None

        async def fail(code: str, message: str, steer_id: Optional[str] = None) -> None:
            with st.lock:
                st.stats["steers_failed"] += 1
            steer: dict[str, Any] = {"input": inp, "previous_response_id": target}
            if steer_id is not None:
                steer["id"] = steer_id
            ev: dict[str, Any] = {
                "type": "response.steer.failed",
                "sequence_number": act.run.next_seq() if act is not None else 0,
                "error": {"code": code, "message": message, "type": "invalid_request_error"},
                "steer": steer,
            }
            if lane_sid is not None:
                ev["stream_id"] = lane_sid
            await self.send_text(_JSON(ev))

        extra = set(msg) - {"type", "previous_response_id", "input"}
        if not isinstance(target, str) or not target:
            await fail("invalid_input", "previous_response_id is required.")
            return
        if inp is None or inp == "" or inp == [] or extra:
            why = f"unsupported fields: {sorted(extra)}" if extra else "input must be non-empty"
            await fail("invalid_input", f"Invalid steering event: {why}.")
            return
        if not st.get_config().get("steering", True):
            await fail("steering_not_supported", "Steering is not supported for this model.")
            return
        if act is None:
            if target in self.cache:
                await fail("response_already_completed", f"Response '{target}' already completed.")
            else:
                await fail("response_not_found", f"Response '{target}' not found on this connection.")
            return
        max_pending = int(st.get_config().get("max_pending_steers") or 4)
        if len(act.steers) >= max_pending:
            await fail("too_many_pending_steers", "Too much steering input is pending for this response.")
            return
        steer_id = _new_id("steer_")
        act.steers.append((steer_id, inp))
        with st.lock:
            st.stats["steers_accepted"] += 1
        ev = {
            "type": "response.steer.accepted",
            "sequence_number": act.run.next_seq(),
            "steer": {"id": steer_id, "previous_response_id": target},
        }
        if act.stream_id is not None:
            ev["stream_id"] = act.stream_id
        await self.send_text(_JSON(ev))
        act.interrupt.set()


def _quiet_exception_handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    # Connections cancelled at shutdown make asyncio's stream callback log a
    # CancelledError (CPython 3.11 quirk); that is expected noise for the mock.
    if isinstance(context.get("exception"), (asyncio.CancelledError, ConnectionError)):
        return
    loop.default_exception_handler(context)


# --------------------------------------------------------------------------
# Server wrapper
# --------------------------------------------------------------------------
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

        _install_transport_registry()
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
        for key, entry in list(_TRANSPORTS.items()):
            server_addr = key[1]
            if len(server_addr) >= 2 and server_addr[1] == self.port:
                _hard_abort(entry)

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


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------
def _parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="kestrel-mock-model", description="Local OpenAI-compatible mock model server.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--ttft-ms", type=float, default=0.0, help="delay before the first token (ms)")
    p.add_argument("--tps", type=float, default=0.0, help="tokens per second (0 = unthrottled)")
    p.add_argument("--text", default=None, help="default output text")
    p.add_argument("--text-file", default=None, help="read the default output text from a file")
    p.add_argument("--tokens", type=int, default=None, help="emit N filler tokens instead of --text")
    p.add_argument("--model", default=None, help="default model name")
    p.add_argument("--rules", default=None, help='JSON list of {"match": ..., "text": ...}')
    p.add_argument("--config", default=None, help="JSON object (or @file) merged into the config")
    p.add_argument("--no-steering", action="store_true", help="reject response.steer")
    p.add_argument("--certfile", default=None)
    p.add_argument("--keyfile", default=None)
    p.add_argument("--log-level", default="WARNING")
    return p.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING), stream=sys.stderr)
    cfg: dict[str, Any] = {"ttft_ms": args.ttft_ms, "tps": args.tps}
    if args.config:
        raw = args.config
        if raw.startswith("@"):
            with open(raw[1:], encoding="utf-8") as f:
                raw = f.read()
        cfg.update(json.loads(raw))
    if args.text is not None:
        cfg["text"] = args.text
    if args.text_file:
        with open(args.text_file, encoding="utf-8") as f:
            cfg["text"] = f.read()
    if args.tokens is not None:
        cfg["tokens"] = args.tokens
    if args.model:
        cfg["model"] = args.model
        cfg["models"] = [args.model]
    if args.rules:
        cfg["rules"] = json.loads(args.rules)
    if args.no_steering:
        cfg["steering"] = False
    server = MockModelServer(args.host, args.port, certfile=args.certfile, keyfile=args.keyfile, config=cfg)

    async def run() -> None:
        loop = asyncio.get_running_loop()

        def ready() -> None:
            sys.stdout.write(f"MOCK_READY {server.base_url}\n")
            sys.stdout.flush()

        task = asyncio.ensure_future(server._serve(ready))
        while server._shutdown is None and not task.done():
            await asyncio.sleep(0.001)
        if task.done():
            await task
            return
        shutdown = server._shutdown
        for signame in ("SIGINT", "SIGTERM"):
            try:
                loop.add_signal_handler(getattr(signal, signame), shutdown.set)
            except (NotImplementedError, AttributeError, RuntimeError):  # pragma: no cover
                signal.signal(getattr(signal, signame), lambda *_: loop.call_soon_threadsafe(shutdown.set))
        await task

    try:
        asyncio.run(run())
    except KeyboardInterrupt:  # pragma: no cover
        pass
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
