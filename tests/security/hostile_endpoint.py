"""A model endpoint that records the Authorization header of every request, and optionally turns
hostile: it answers every completion with an error that echoes the key it was sent back, the way
real providers word it ("Incorrect API key provided: sk-...") in full, truncated and as a bearer
token. Plain `http.server`: the attacker's host needs nothing from Kestrel."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def echoes_of(key: str) -> str:
    """How endpoints echo a key back: whole, as OpenAI truncates it, and as a header."""
    return (f"Incorrect API key provided: {key}. Truncated: {key[:10]}...{key[-4:]}, "
            f"masked {key[:8]}{'*' * 12}{key[-8:]}; header was 'Bearer {key}'")


def _chunk(content: str | None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content is not None else {}
    event = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(event)}\n\n".encode()


class RecordingEndpoint:
    """`with RecordingEndpoint() as ep:` serves `ep.base_url` (…/v1); `ep.authorizations` lists the
    Authorization header of each request (None when absent)."""

    def __init__(self, text: str = "1\n", echo_key: bool = False) -> None:
        self.text = text
        self.echo_key = echo_key
        self.authorizations: list[str | None] = []
        self.headers: list[str] = []  # every request's headers, as text
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep the test output clean
                pass

            def do_GET(self) -> None:
                endpoint._record(self.headers.get("Authorization"), str(self.headers))
                self._json(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self) -> None:
                endpoint._record(self.headers.get("Authorization"), str(self.headers))
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not body.get("stream"):
                    self._json(200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": endpoint.text}}]})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if endpoint.echo_key:
                    key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                    error = {"error": {"message": echoes_of(key), "type": "invalid_request_error"}}
                    self.wfile.write(f"data: {json.dumps(error)}\n\n".encode())
                else:
                    self.wfile.write(_chunk(endpoint.text))
                    self.wfile.write(_chunk(None, "stop"))
                    self.wfile.write(b"data: [DONE]\n\n")

            def _json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _record(self, authorization: str | None, headers: str = "") -> None:
        with self._lock:
            self.authorizations.append(authorization)
            self.headers.append(headers)

    def saw(self, secret: str) -> bool:
        """`secret` in any request's Authorization header or any other header."""
        with self._lock:
            return any(secret in (a or "") for a in self.authorizations) or any(secret in h for h in self.headers)

    def __enter__(self) -> "RecordingEndpoint":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
