"""The direct-SDK baseline: the same requests the server makes, from a warm `AsyncOpenAI`
in the benchmark process (same transport, same mock, same body)."""

from __future__ import annotations

import json
import time
from typing import Any

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})


def make_client(base_url: str, http2: str) -> Any:
    """Mirrors kestrel.providers.openai_http.make_client (same pool limits and timeouts)."""
    import httpx2
    from openai import AsyncOpenAI, DefaultAsyncHttpx2Client

    secure = base_url.startswith("https://")
    if http2 == "off":
        http1, h2 = True, False
    elif http2 == "on" and not secure:
        http1, h2 = False, True
    else:
        http1, h2 = True, secure
    timeout = httpx2.Timeout(30.0, connect=5.0)
    http_client = DefaultAsyncHttpx2Client(
        http1=http1, http2=h2, timeout=timeout,
        limits=httpx2.Limits(max_connections=64, max_keepalive_connections=16, keepalive_expiry=120),
    )
    return AsyncOpenAI(api_key="x", base_url=base_url, max_retries=2, timeout=timeout, http_client=http_client)


class SdkProbe:
    """A warm `AsyncOpenAI` (make_client) on one provider kind's transport, for the benchmarks'
    direct-SDK references; for `responses-ws` also the persistent Responses WebSocket
    (`responses.connect()`, opened by start()). Use between `await start()` and `await aclose()`."""

    def __init__(self, kind: str, base_url: str, http2: str = "on") -> None:
        self.kind = kind
        self.client = make_client(base_url, http2)
        self.conn: Any = None

    async def start(self) -> None:
        if self.kind == "responses-ws":
            self.conn = await self.client.responses.connect(max_retries=0).enter()

    async def aclose(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.close()
            except Exception:
                pass
        await self.client.close()


class Baseline(SdkProbe):
    """One provider kind's request, made directly with the SDK. `params` is the request body
    the server sent (captured from the mock), minus `stream` / WebSocket envelope fields."""

    def __init__(self, kind: str, base_url: str, http2: str) -> None:
        super().__init__(kind, base_url, http2)
        self.http_version: str | None = None

    async def run(self, params: dict) -> tuple[str, float]:
        """Make the request; returns (text, perf_counter when the answer was complete).

        The server can answer a single-line completion as soon as the line's newline
        arrives (and reads the rest of the stream after answering), so the answer time is
        the first newline or the end of the stream, whichever comes first. The rest of the
        stream is still read, so the connection goes back to the pool like the server's."""
        kind = self.kind
        if kind == "chat":
            return await self._sse(self.client.chat.completions, params, _chat_text)
        if kind == "fim":
            return await self._sse(self.client.completions, params, _fim_text)
        if kind == "responses":
            return await self._sse(self.client.responses, params, _responses_text)
        if kind == "responses-ws":
            return await self._ws(params)
        raise ValueError(kind)

    async def _sse(self, resource: Any, params: dict, extract: Any) -> tuple[str, float]:
        out = []
        answered = None
        ended = False
        async with resource.with_streaming_response.create(stream=True, **params) as response:
            self.http_version = response.http_response.http_version
            # Read the body to its end, even past `[DONE]`: over HTTP/1.1 a response left before its end
            # closes its connection, and the next request would pay a connect the server does not.
            async for line in response.iter_lines():
                if ended or not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    ended = True
                    continue
                event = json.loads(data)
                text = extract(event)
                if text:
                    out.append(text)
                    if answered is None and "\n" in text:
                        answered = time.perf_counter()
                ended = event.get("type") in TERMINAL
        return "".join(out), answered or time.perf_counter()

    async def _ws(self, params: dict) -> tuple[str, float]:
        conn = self.conn
        answered = None
        await conn.send_raw(json.dumps({"type": "response.create", **params, "stream_id": "b1"}, separators=(",", ":")))
        out = []
        while True:
            event = json.loads(await conn.recv_bytes())
            if event.get("stream_id") not in (None, "b1"):
                continue
            text = _responses_text(event)
            if text:
                out.append(text)
                if answered is None and "\n" in text:
                    answered = time.perf_counter()
            if event.get("type") in TERMINAL:
                return "".join(out), answered or time.perf_counter()


def _chat_text(event: dict) -> str:
    return "".join((c.get("delta") or {}).get("content") or "" for c in event.get("choices") or ())


def _fim_text(event: dict) -> str:
    return "".join(c.get("text") or "" for c in event.get("choices") or ())


def _responses_text(event: dict) -> str:
    return event.get("delta") or "" if event.get("type") == "response.output_text.delta" else ""


def request_params(kind: str, body: dict) -> dict:
    """The SDK call's keyword arguments for a body the server sent."""
    body = dict(body)
    body.pop("stream", None)
    body.pop("stream_options", None)
    if kind == "responses-ws":
        body.pop("type", None)
        body.pop("stream_id", None)
    return body
