"""Fault injection: the injected HTTP errors and real connection aborts.

hypercorn does not expose the socket to ASGI apps, so for the "drop" fault we
wrap its asyncio TCPServer (behaviour otherwise unchanged) and key transports by
(client addr, server addr), which match scope["client"] / scope["server"].
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from .wire import JSON, error_body

HTTP_STATUS_FAULTS = {"429", "500", "503"}
MIDSTREAM_FAULTS = {"drop", "malformed", "stall"}


def fault_error(fault: str, retry_after: Any) -> tuple[int, dict, list[tuple[bytes, bytes]]]:
    """Status, JSON body and headers of an injected "429" / "500" / "503"."""
    status = int(fault)
    headers: list[tuple[bytes, bytes]] = []
    if status == 429:
        headers.append((b"retry-after", str(retry_after).encode()))
        body = error_body(429, "Rate limit reached for mock-model (injected fault).", "rate_limit_exceeded")
    elif status == 503:
        body = error_body(503, "The server is overloaded (injected fault).", "service_unavailable")
    else:
        body = error_body(500, "The server had an error (injected fault).", "server_error")
    return status, body, headers


async def refuse_websocket(scope: dict, send: Callable, cfg: dict[str, Any]) -> None:
    """The "refuse_ws" fault: answer the WebSocket handshake with an HTTP error."""
    status = int(cfg.get("refuse_ws_status") or 426)
    body = JSON(error_body(status, "WebSocket mode disabled (injected fault).", "websocket_refused"))
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


# --------------------------------------------------------------------------
# Transport registry: lets the "drop" fault really abort the TCP connection.
# --------------------------------------------------------------------------
TRANSPORTS: dict[tuple, tuple[Any, Any]] = {}  # key -> (transport, raw transport under TLS)
_PATCH_LOCK = threading.Lock()


def install_transport_registry() -> None:
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
                    TRANSPORTS[key] = (transport, raw)
                except Exception:  # pragma: no cover - best effort
                    key = None
                try:
                    await super().run()
                finally:
                    entry = TRANSPORTS.get(key) if key is not None else None
                    if entry is not None and entry[0] is self.writer.transport:
                        del TRANSPORTS[key]

        _hc_run.TCPServer = _TrackingTCPServer


def hard_abort(entry: tuple[Any, Any]) -> None:
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


def abort_connection(scope: dict) -> bool:
    key = (tuple(scope.get("client") or ()), tuple(scope.get("server") or ()))
    entry = TRANSPORTS.get(key)
    if entry is None:
        return False
    hard_abort(entry)
    return True


def abort_port(port: int) -> None:
    """Abort every connection still open on the server listening on ``port``."""
    for key, entry in list(TRANSPORTS.items()):
        server_addr = key[1]
        if len(server_addr) >= 2 and server_addr[1] == port:
            hard_abort(entry)
