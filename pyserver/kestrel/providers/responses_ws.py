"""`responses-ws`: the Responses API over one persistent WebSocket (`client.responses.connect()`).

Each request is its own lane (`stream_id`) on a shared socket: concurrent, FIFO within a lane, 16
active per socket; an abandoned lane's events are dropped until its response ends (the API has no
cancel). Sockets are rotated before their 60-minute limit. A refused handshake (HTTP 426, 403) falls
back to HTTP SSE for the rest of the session. Why: docs/design-notes.md#pyserverkestrelprovidersresponses_wspy
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, AsyncIterator

from ..config import Settings
from .base import CompletionPrompt, StreamBrokenError, StreamStats, UnavailableError, WebSocketRefusedError
from .openai_http import HttpStreamer, tls_context, translate_error
from .prompts import completion_messages
from .responses_http import TERMINAL, responses_params, text_of

log = logging.getLogger(__name__)

MAX_ACTIVE_LANES = 16
_CLOSED = object()  # sentinel pushed to lanes when the socket dies


def ends_lane(event: dict) -> bool:
    """Terminal for the lane. A response that ended because it was steered is not: its
    successor (`response.created`) follows on the same lane."""
    if event.get("type") not in TERMINAL:
        return False
    if event.get("type") == "response.incomplete":
        details = (event.get("response") or {}).get("incomplete_details") or {}
        return details.get("reason") != "steered"
    return True


class _Socket:
    """One WebSocket connection and the lanes multiplexed on it."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.opened = time.monotonic()
        self.lanes: dict[str, asyncio.Queue] = {}
        self.abandoned: set[str] = set()
        self.closed = False
        self._next = 0
        self.reader = asyncio.get_running_loop().create_task(self._read())

    def has_free_lane(self) -> bool:
        return len(self.lanes) < MAX_ACTIVE_LANES

    def open_lane(self) -> tuple[str, asyncio.Queue]:
        self._next += 1
        lane = f"k{self._next % 32}"
        while lane in self.lanes:  # ids are reused once their response has ended
            self._next += 1
            lane = f"k{self._next % 32}"
        queue: asyncio.Queue = asyncio.Queue()
        self.lanes[lane] = queue
        return lane, queue

    def release(self, lane: str, finished: bool) -> None:
        if finished:
            self.lanes.pop(lane, None)
        else:  # keep the id busy until the server ends that response
            self.abandoned.add(lane)

    async def send(self, event: dict) -> None:
        await self.conn.send_raw(json.dumps(event, separators=(",", ":")))

    async def _read(self) -> None:
        try:
            while True:
                event = json.loads(await self.conn.recv_bytes())
                lane = event.get("stream_id")
                queue = self.lanes.get(lane) if lane else None
                if queue is None and lane is None and len(self.lanes) == 1:
                    queue = next(iter(self.lanes.values()))  # servers that omit stream_id
                    lane = next(iter(self.lanes))
                if queue is None:
                    continue
                if lane in self.abandoned:
                    if ends_lane(event):
                        self.abandoned.discard(lane)
                        self.lanes.pop(lane, None)
                    continue
                queue.put_nowait(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("responses websocket closed: %s", type(exc).__name__)
        finally:
            self.closed = True
            for queue in self.lanes.values():
                queue.put_nowait(_CLOSED)

    async def close(self) -> None:
        self.closed = True
        self.reader.cancel()
        try:
            await self.conn.close()
        except Exception:
            pass


class ResponsesWebSocketProvider:
    kind = "responses-ws"
    native_tools = True

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model = settings.model or ""
        self.http = HttpStreamer(settings)
        self._socket: _Socket | None = None
        self._draining: set[_Socket] = set()
        self._connecting: asyncio.Lock | None = None
        self.ws_refused = False  # remembered for the session
        self.sockets_opened = 0

    @property
    def connection_state(self) -> str:
        if self.ws_refused:
            return f"http-fallback ({self.http.state})"
        return "connected" if self._socket and not self._socket.closed else "idle"

    async def _get_socket(self) -> _Socket:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            sock = self._socket
            if sock is not None and not sock.closed:
                if time.monotonic() - sock.opened < self.settings.ws_rotate_s and sock.has_free_lane():
                    return sock
                self._retire(sock)
            self._socket = await self._connect()
            return self._socket

    def _retire(self, sock: _Socket) -> None:
        """Stop routing new lanes to `sock`; close it once its running lanes have ended."""
        self._socket = None
        self._draining.add(sock)

        async def drain() -> None:
            while sock.lanes and not sock.closed:
                await asyncio.sleep(0.5)
            await sock.close()
            self._draining.discard(sock)

        asyncio.get_running_loop().create_task(drain())

    async def _connect(self) -> _Socket:
        try:
            # No SDK-level reconnect: a dropped socket fails its lanes and the next
            # request opens a fresh one (the previous_response_id cache is gone anyway).
            options: dict[str, Any] = {}
            if self.settings.ca_bundle and (self.settings.base_url or "").startswith("https"):
                options["ssl"] = tls_context(self.settings)
            conn = await self.http.client.responses.connect(max_retries=0, websocket_connection_options=options).enter()
        except Exception as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if status in (400, 401, 403, 404, 426) or "InvalidStatus" in type(exc).__name__ or "InvalidMessage" in type(exc).__name__:
                raise WebSocketRefusedError(f"the WebSocket was refused (HTTP {status or '?'}); using HTTP") from None
            raise translate_error(exc) from None
        self.sockets_opened += 1
        return _Socket(conn)

    async def prewarm(self) -> None:
        """Open the socket and warm the model with `generate: false` (no tokens billed)."""
        try:
            sock = await self._get_socket()
            lane, queue = sock.open_lane()
            await sock.send({"type": "response.create", "model": self.model, "input": [], "generate": False, "stream_id": lane})
            finished = False
            try:
                while True:
                    event = await asyncio.wait_for(queue.get(), 10)
                    if event is _CLOSED or event.get("type") in TERMINAL:
                        finished = event is not _CLOSED
                        break
            finally:
                sock.release(lane, finished)
        except WebSocketRefusedError as exc:
            log.info("%s", exc.message)
            self.ws_refused = True
            await self.http.prewarm()
        except Exception as exc:
            log.info("websocket prewarm failed: %s", translate_error(exc).message)

    def complete(self, prompt: CompletionPrompt, stats: StreamStats) -> AsyncIterator[str]:
        return self.chat(completion_messages(prompt), stats, max_tokens=prompt.max_tokens, effort="low")

    async def chat(
        self, messages: list[dict], stats: StreamStats, *, max_tokens: int | None = None, effort: str | None = None,
        prediction: str | None = None,  # (Predicted Outputs: Chat Completions only)
        deterministic: bool = False,  # (reasoning models take no temperature: the effort setting rules)
        tools: list[dict] | None = None,
    ) -> AsyncIterator[str]:
        params = responses_params(self.settings, messages, max_tokens=max_tokens, effort=effort or self.settings.effort,
                                  tools=tools)
        params.pop("stream", None)
        async for event in self.events(params):
            text = text_of(event, stats)
            if text:
                yield text

    def steerable_chat(self, messages: list[dict], stats: StreamStats, tools: list[dict] | None = None,
                       max_tokens: int | None = None) -> "SteerableChat":
        """A chat stream that can be redirected while it runs with the API's `response.steer`."""
        params = responses_params(self.settings, messages, max_tokens=max_tokens, effort=self.settings.effort, tools=tools)
        return SteerableChat(self, params, stats)

    async def events(self, params: dict, turn: "SteerableChat | None" = None) -> AsyncIterator[dict]:
        """Run one `response.create` on a lane and yield its events until it ends."""
        if self.ws_refused:
            async for event in self._fallback_events(params):
                yield event
            return
        try:
            sock = await self._get_socket()
        except WebSocketRefusedError as exc:
            log.info("%s", exc.message)
            self.ws_refused = True
            async for event in self._fallback_events(params):
                yield event
            return
        lane, queue = sock.open_lane()
        if turn is not None:
            turn.socket = sock
        finished = False
        limit = self.settings.request_timeout_s
        try:
            await sock.send({"type": "response.create", **params, "stream_id": lane})
            while True:
                # A deadline per event: a stalled or silent model ends the request with a
                # clear error instead of hanging the turn (scoped to the wait, not the consumer).
                async with asyncio.timeout(limit):
                    event = await queue.get()
                if event is _CLOSED:
                    finished = True
                    raise StreamBrokenError("the WebSocket to the model closed mid-stream")
                yield event
                if ends_lane(event):
                    finished = True
                    return
        except TimeoutError:
            raise UnavailableError(f"the model sent nothing for {limit:g}s (timed out)") from None
        except (StreamBrokenError, asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            finished = True
            raise translate_error(exc) from None
        finally:
            sock.release(lane, finished)

    native_steering = True  # until a model answers `steering_not_supported`

    async def _fallback_events(self, params: dict) -> AsyncIterator[dict]:
        async with self.http.sse(self.http.client.responses, **params) as events:
            async for event in events:
                yield event

    async def aclose(self) -> None:
        for sock in [self._socket, *self._draining]:
            if sock is not None:
                await sock.close()
        await self.http.aclose()


class SteerableChat:
    """One chat answer on a lane, redirectable with `response.steer`.

    `response.steer.accepted` only means the server owns the input; the successor's
    `response.created` is the commit point, reported through `on_commit`.
    """

    def __init__(self, provider: ResponsesWebSocketProvider, params: dict, stats: StreamStats) -> None:
        self.provider = provider
        self.params = params
        self.stats = stats
        self.socket: _Socket | None = None
        self.response_id: str | None = None
        self.on_commit: Any = None  # called when a steer takes effect
        self._ack: asyncio.Future | None = None
        self._steered = False

    def __aiter__(self) -> AsyncIterator[str]:
        return self._deltas()

    async def _deltas(self) -> AsyncIterator[str]:
        async for event in self.provider.events(self.params, self):
            kind = event.get("type")
            if kind == "response.created":
                self.response_id = (event.get("response") or {}).get("id")
                if self._steered:
                    self._steered = False
                    self.stats.tool_calls.clear()  # the steered response's calls are not the answer's
                    if self.on_commit is not None:
                        self.on_commit()
            elif kind == "response.steer.accepted":
                self._resolve(True)
            elif kind == "response.steer.failed":
                code = ((event.get("error") or {}).get("code")) or ""
                if code == "steering_not_supported":
                    self.provider.native_steering = False  # remembered: emulate from now on
                self._resolve(False)
            elif kind == "response.incomplete" and not ends_lane(event):
                self._steered = True
            else:
                text = text_of(event, self.stats)
                if text:
                    yield text

    def _resolve(self, ok: bool) -> None:
        if self._ack is not None and not self._ack.done():
            self._ack.set_result(ok)

    async def steer(self, text: str) -> bool:
        """Ask the API to redirect this answer; False means "emulate it" (not supported, or too late)."""
        sock = self.socket
        if not self.provider.native_steering or self.response_id is None or sock is None or sock.closed:
            return False
        self._ack = asyncio.get_running_loop().create_future()
        await sock.send({"type": "response.steer", "previous_response_id": self.response_id,
                         "input": [{"role": "user", "content": text}]})
        try:
            return await asyncio.wait_for(self._ack, 5)
        except asyncio.TimeoutError:
            return False
