"""The streaming core.

* :func:`pump` writes a plan's tokens with its TTFT and rate, injecting the
  mid-stream faults; the HTTP protocols and the Responses WebSocket use it.
* :class:`HttpGeneration` + :func:`serve_generation` are the skeleton shared by
  every HTTP generation endpoint (Chat Completions, Completions, Responses):
  plan the answer, then either wait the simulated generation time and send one
  JSON body, or stream SSE frames (head, one frame per token, tail) with
  disconnect / shutdown / fault handling and the stream counters.  A protocol
  only says how its request is read and how its frames are spelled.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

from .faults import MIDSTREAM_FAULTS, abort_connection
from .script import Plan
from .state import State
from .wire import JSON, MALFORMED, new_id

if TYPE_CHECKING:  # pragma: no cover
    from .app import MockModelApp


class Stop(Exception):
    """Internal: unwind a generation (connection dropped / closed)."""


async def wait_event(event: asyncio.Event, timeout: float) -> None:
    if event.is_set():
        return
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except asyncio.TimeoutError:
        pass


async def wait_first(*aws: Awaitable[Any]) -> None:
    """Wait until one of ``aws`` finishes; cancel the tasks created here for the others."""
    futs = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(set(futs), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for fut, aw in zip(futs, aws):
            if fut is not aw:
                fut.cancel()


async def pump(
    state: State,
    plan: Plan,
    write_tok: Callable[[str], Awaitable[None]],
    interrupt: asyncio.Event,
    should_stop: Callable[[], Optional[str]],
    on_fault: Callable[[str], Awaitable[Optional[str]]],
) -> tuple[int, Optional[str]]:
    """Write ``plan.tokens`` with pacing. Returns (tokens_sent, stop_reason)."""
    loop = asyncio.get_running_loop()
    start = loop.time() + plan.ttft
    tps = plan.tps
    fault = plan.fault if plan.fault in MIDSTREAM_FAULTS else None
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
            await wait_event(interrupt, delay)
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


class HttpGeneration:
    """Wire format of one HTTP generation request; one subclass per protocol."""

    malformed: bytes = b""  # the frame the "malformed" fault writes mid-stream

    def __init__(self, body: dict, model: str, plan: Plan) -> None:
        self.body = body
        self.model = model
        self.plan = plan

    @staticmethod
    def plan_inputs(body: dict) -> tuple[str, Any, Any]:
        """(haystack matched by rules, ``stop``, token limit) of a request body."""
        raise NotImplementedError

    def json_body(self, tokens: list[str]) -> dict:
        """The non-streaming answer."""
        raise NotImplementedError

    def open_stream(self) -> list[bytes]:
        """Prepare to stream; returns the frames written before the first token."""
        raise NotImplementedError

    def token(self, tok: str) -> bytes:
        raise NotImplementedError

    def tail(self, sent: list[str]) -> list[bytes]:
        """Frames that end a stream that ran to completion."""
        raise NotImplementedError


async def serve_generation(
    app: "MockModelApp",
    scope: dict,
    receive: Callable,
    send: Callable,
    body: dict,
    fault: Optional[str],
    kind: type[HttpGeneration],
) -> None:
    """Plan the answer to ``body`` and send it as ``kind`` spells it (SSE if ``stream``, else JSON)."""
    st = app.state
    model = str(body.get("model") or st.get_config()["model"])
    hay, stop, max_tokens = kind.plan_inputs(body)
    max_tokens = max_tokens if isinstance(max_tokens, int) else None
    window = st.get_config().get("context_chars")
    if fault is None and isinstance(window, int) and len(hay) > window:
        fault = "empty"
    plan = st.plan(hay, body, fault=fault, stop=stop, max_tokens=max_tokens)
    gen = kind(body, model, plan)
    if body.get("stream"):
        await _stream(app, scope, receive, send, gen)
    else:
        await _respond(app, scope, receive, send, gen)


def _watch_disconnect(receive: Callable) -> tuple[asyncio.Event, asyncio.Task]:
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


async def _stream(app: "MockModelApp", scope: dict, receive: Callable, send: Callable, gen: HttpGeneration) -> None:
    """SSE stream: headers, head frames, paced token frames, tail frames."""
    plan = gen.plan
    head = gen.open_stream()
    st = app.state
    disc, watcher = _watch_disconnect(receive)
    interrupt = asyncio.Event()
    closing = app.closing
    sent: list[str] = []
    outcome = "cancelled"

    def set_interrupt(_: Any = None) -> None:
        interrupt.set()

    watcher.add_done_callback(set_interrupt)
    app.interrupts.add(interrupt)
    st.stream_started()

    async def write(data: bytes) -> None:
        if disc.is_set():
            raise Stop()
        try:
            await send({"type": "http.response.body", "body": data, "more_body": True})
        except Exception as e:  # connection went away under us
            raise Stop() from e

    async def write_tok(tok: str) -> None:
        await write(gen.token(tok))
        sent.append(tok)

    def should_stop() -> Optional[str]:
        if disc.is_set():
            return "disconnected"
        if closing.is_set():
            return "closing"
        return None

    async def on_fault(kind: str) -> Optional[str]:
        if kind == "malformed":
            await write(gen.malformed)
            return None
        if kind == "drop":
            abort_connection(scope)
            return "dropped"
        if kind == "stall":
            await wait_first(closing.wait(), watcher)
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
                    (b"x-request-id", new_id("req_").encode()),
                ],
            }
        )
        if plan.fault == "empty":  # what llama.cpp streams for a prompt longer than its context window
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            outcome = "completed"
            return
        for fr in head:
            await write(fr)
        _, reason = await pump(st, plan, write_tok, interrupt, should_stop, on_fault)
        if reason is None:
            for fr in gen.tail(sent):
                await write(fr)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            outcome = "completed"
        elif reason == "closing":
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except Stop:
        pass
    finally:
        watcher.cancel()
        app.interrupts.discard(interrupt)
        st.stream_ended(outcome == "completed")


async def _respond(app: "MockModelApp", scope: dict, receive: Callable, send: Callable, gen: HttpGeneration) -> None:
    """Non-streaming generation: wait the simulated generation time, send JSON."""
    plan = gen.plan
    st = app.state
    disc, watcher = _watch_disconnect(receive)
    app.interrupts.add(disc)
    st.stream_started()
    outcome = "cancelled"
    try:
        n = len(plan.tokens)
        if plan.fault in MIDSTREAM_FAULTS:
            n = min(n, max(0, plan.fault_after))
        total = plan.ttft + (n / plan.tps if plan.tps > 0 else 0.0)
        if total > 0:
            await wait_event(disc, total)
        if disc.is_set() or app.closing.is_set():
            return
        if plan.fault == "stall":
            await wait_first(app.closing.wait(), watcher)
            return
        body = JSON(gen.json_body(plan.tokens)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if plan.fault == "malformed":
            body = MALFORMED.encode()
            headers[1] = (b"content-length", str(len(body)).encode())
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if plan.fault == "drop":
            await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
            await asyncio.sleep(0)
            abort_connection(scope)
            return
        await send({"type": "http.response.body", "body": body})
        st.stats["tokens_sent"] += len(plan.tokens)
        outcome = "completed"
    finally:
        watcher.cancel()
        app.interrupts.discard(disc)
        st.stream_ended(outcome == "completed")
