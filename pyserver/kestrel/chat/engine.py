"""ChatEngine: run chat turns, stream deltas to the client, steer them while they run.

Deltas are coalesced per event-loop tick: at 1,000+ tokens/s, one JSON-RPC notification per
token costs more than the token; a notification per tick keeps latency at one tick.

Steering redirects a running answer without starting over and without losing what was
streamed. Natively (`responses-ws`: `response.steer`, committed at the successor's
`response.created`) when the provider and model can; otherwise emulated: stop the stream,
keep the partial answer, continue with [history, partial answer, steer message]. Both paths
look the same to the client: `kestrel/chatSteered {id, at, text, mode}` marks where the
steer landed in the answer, and deltas keep flowing on the same turn.
Stopping a turn cancels only its model stream: the turn still answers with what arrived.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..providers.base import Provider, ProviderError, StreamBrokenError, StreamStats

MAX_RESUMES = 2  # reconnect attempts after a dropped stream, then the turn fails clearly
RESUME_BACKOFF_S = 0.25
RESUME_PROMPT = "(The connection dropped. Continue exactly where you stopped, without repeating anything.)"


@dataclass
class _Turn:
    id: str
    history: list[dict]
    parts: list[str] = field(default_factory=list)
    segment_start: int = 0  # index into parts where the current model stream began
    stream: asyncio.Task | None = None
    session: Any = None  # a provider's SteerableChat, when native steering is possible
    restart_with: str | None = None  # emulated steer waiting to restart the stream
    steers: list[dict] = field(default_factory=list)
    stopped: bool = False

    @property
    def text(self) -> str:
        return "".join(self.parts)


class ChatEngine:
    def __init__(self, notify: Callable[[str, Any], None]) -> None:
        self._notify = notify
        self._turns: dict[str, _Turn] = {}

    async def turn(
        self, provider: Provider, turn_id: str, messages: list[dict], *, delta_method: str = "kestrel/chatDelta",
        on_delta: Callable[[str], None] | None = None, prediction: str | None = None, resume: bool = True,
        steer_note: str = "", deterministic: bool = False,
    ) -> dict:
        """Stream one answer (steerable, stoppable). Inline edits reuse this with their own
        notification method, so steering an edit works exactly like steering a chat answer.
        `steer_note` is added to an emulated steer's message (an edit asks for the whole region
        again); the answer's text after the last emulated steer is `lastSegment`."""
        t = _Turn(turn_id, list(messages))
        self._turns[turn_id] = t
        stats = StreamStats()
        pending: list[str] = []
        flush_scheduled = False
        loop = asyncio.get_running_loop()

        def flush() -> None:
            nonlocal flush_scheduled
            flush_scheduled = False
            if pending:
                self._notify(delta_method, {"id": turn_id, "delta": "".join(pending)})
                pending.clear()

        async def pump(source: Any) -> None:
            nonlocal flush_scheduled
            async for delta in source:
                t.parts.append(delta)
                pending.append(delta)
                if on_delta is not None:
                    on_delta(delta)
                if not flush_scheduled:
                    flush_scheduled = True
                    loop.call_soon(flush)

        result: dict = {"id": turn_id}
        resumes = 0
        try:
            while True:
                steerable = getattr(provider, "steerable_chat", None)
                t.session = steerable(t.history, stats) if steerable is not None and provider.native_steering else None
                if t.session is not None:
                    source = t.session
                else:
                    opts: dict[str, Any] = {"deterministic": True} if deterministic else {}
                    if prediction is not None:
                        opts["prediction"] = prediction
                    source = provider.chat(t.history, stats, **opts)
                t.stream = loop.create_task(pump(source))
                try:
                    await asyncio.shield(t.stream)
                except asyncio.CancelledError:
                    if not t.stream.cancelled():  # our caller was cancelled, not the stream
                        t.stream.cancel()
                        raise
                    if t.restart_with is None:
                        result["stopped"] = True
                        break
                except StreamBrokenError as exc:
                    # The connection dropped mid-answer: reconnect with backoff and replay the
                    # context (a new socket has no previous_response_id), keeping what arrived.
                    if not resume or resumes >= MAX_RESUMES:
                        raise
                    resumes += 1
                    await asyncio.sleep(RESUME_BACKOFF_S * 2 ** (resumes - 1))
                    flush()
                    self._notify("kestrel/chatResumed", {"id": turn_id, "at": len(t.text), "reason": exc.message})
                    t.restart_with = RESUME_PROMPT if t.parts[t.segment_start :] else None
                    if t.restart_with is None:
                        continue  # nothing arrived yet: simply ask again
                if t.restart_with is None:
                    break
                # Emulated steer (or a resume): the partial answer becomes history, then the message.
                flush()
                partial = "".join(t.parts[t.segment_start :])
                note = steer_note if t.restart_with != RESUME_PROMPT else ""
                t.history = t.history + [{"role": "assistant", "content": partial},
                                         {"role": "user", "content": t.restart_with + note}]
                t.segment_start = len(t.parts)
                t.restart_with = None
        except ProviderError as exc:
            result["error"] = exc.message  # the partial answer stays: nothing streamed is lost
        finally:
            self._turns.pop(turn_id, None)
            flush()
        result.update(text=t.text, ttftMs=stats.ttft_ms, steers=t.steers, lastSegment="".join(t.parts[t.segment_start :]))
        return result

    async def steer(self, turn_id: str, text: str) -> dict:
        """Redirect a running answer. Returns {accepted, mode} or {accepted: False, error}."""
        t = self._turns.get(turn_id)
        if t is None or t.stream is None or t.stream.done():
            return {"accepted": False, "error": "that answer has already finished: send your message as a new turn"}
        if not text.strip():
            return {"accepted": False, "error": "the steering message is empty"}
        requested = time.perf_counter()
        session = t.session
        if session is not None:
            def committed() -> None:
                self._landed(t, text, "native", requested)

            session.on_commit = committed
            if await session.steer(text):
                return {"accepted": True, "mode": "native"}
            session.on_commit = None
            if t.stream is None or t.stream.done():
                return {"accepted": False, "error": "that answer finished before the steer could land"}
        # Emulated: stop at the current token, keep it, continue with the steer appended.
        t.restart_with = text
        self._landed(t, text, "emulated", requested)
        t.stream.cancel()
        return {"accepted": True, "mode": "emulated"}

    def _landed(self, t: _Turn, text: str, mode: str, requested: float) -> None:
        mark = {"at": len(t.text), "text": text, "mode": mode,
                "commitMs": round((time.perf_counter() - requested) * 1000, 2)}
        t.steers.append(mark)
        self._notify("kestrel/chatSteered", {"id": t.id, **mark})

    def stop(self, turn_id: str) -> bool:
        t = self._turns.get(turn_id)
        if t is None or t.stream is None or t.stream.done():
            return False
        t.restart_with = None
        t.stream.cancel()
        return True
