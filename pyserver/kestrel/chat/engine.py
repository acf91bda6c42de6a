"""ChatEngine: run chat turns, stream deltas to the client, steer and stop them while they run.

Deltas are coalesced into one notification per event-loop tick. A steer redirects a running answer
without losing what was streamed: natively (`responses-ws`: `response.steer`) when the provider and
model can, else emulated (the stream restarts with [history, partial answer, steer message]); either
way `kestrel/chatSteered {id, at, text, mode}` marks where it landed and deltas keep flowing on the
same turn. Stopping cancels only the model stream: the turn still answers with what arrived.
Why: docs/design-notes.md#pyserverkestrelchatenginepy
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

    @property
    def segment(self) -> str:
        """The text of the current model stream (since the last restart)."""
        return "".join(self.parts[self.segment_start :])


class _Deltas:
    """A turn's deltas not yet sent: one notification per event-loop iteration, not one per token."""

    def __init__(self, notify: Callable[[str, Any], None], method: str, turn_id: str,
                 loop: asyncio.AbstractEventLoop) -> None:
        self._notify, self._method, self._turn_id, self._loop = notify, method, turn_id, loop
        self.pending: list[str] = []
        self._scheduled = False

    def schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if self.pending:
            self._notify(self._method, {"id": self._turn_id, "delta": "".join(self.pending)})
            self.pending.clear()


class ChatEngine:
    def __init__(self, notify: Callable[[str, Any], None]) -> None:
        self._notify = notify
        self._turns: dict[str, _Turn] = {}

    async def turn(
        self, provider: Provider, turn_id: str, messages: list[dict], *, delta_method: str = "kestrel/chatDelta",
        on_delta: Callable[[str], None] | None = None, prediction: str | None = None, resume: bool = True,
        steer_note: str = "", deterministic: bool = False, max_tokens: int | None = None,
        tools: list[dict] | None = None,
    ) -> dict:
        """Stream one answer (steerable, stoppable). Inline edits reuse this with their own
        notification method, so steering an edit works exactly like steering a chat answer.
        `steer_note` is added to an emulated steer's message (an edit asks for the whole region
        again); the answer's text after the last emulated steer is `lastSegment`. With `tools` (a
        provider with `native_tools`), the native calls of the last stream are `toolCalls`."""
        t = _Turn(turn_id, list(messages))
        self._turns[turn_id] = t
        stats = StreamStats()
        loop = asyncio.get_running_loop()
        deltas = _Deltas(self._notify, delta_method, turn_id, loop)
        result: dict = {"id": turn_id}
        resumes = 0
        try:
            while True:
                stats.tool_calls.clear()  # only the last stream's calls count (a steer restarts it)
                source = self._open_stream(provider, t, stats, prediction, deterministic, max_tokens, tools)
                t.stream = loop.create_task(self._pump(t, source, deltas, on_delta))
                try:
                    if await self._wait_for_stream(t.stream) and t.restart_with is None:
                        result["stopped"] = True
                        break
                except StreamBrokenError as exc:
                    if not resume or resumes >= MAX_RESUMES:
                        raise
                    resumes += 1
                    if not await self._prepare_resume(t, deltas, exc, resumes):
                        continue  # nothing arrived yet: simply ask again
                if t.restart_with is None:
                    break
                self._restart_after_partial(t, deltas, steer_note)
        except ProviderError as exc:
            result["error"] = exc.message  # the partial answer stays: nothing streamed is lost
        finally:
            self._turns.pop(turn_id, None)
            deltas.flush()
        result.update(text=t.text, ttftMs=stats.ttft_ms, steers=t.steers, lastSegment=t.segment)
        if stats.stop_reason == "length" and not result.get("stopped") and not result.get("error"):
            result["hitTokenLimit"] = True  # the answer may end mid-sentence: the client says so
        if stats.tool_calls:
            result["toolCalls"] = list(stats.tool_calls)
        return result

    @staticmethod
    def _open_stream(provider: Provider, t: _Turn, stats: StreamStats, prediction: str | None,
                     deterministic: bool, max_tokens: int | None = None, tools: list[dict] | None = None) -> Any:
        """The turn's next model stream: a native steering session when the provider and model
        have one (kept in `t.session`), else a plain chat stream."""
        steerable = getattr(provider, "steerable_chat", None)
        native_tools = bool(tools) and getattr(provider, "native_tools", False)
        extra: dict[str, Any] = {"tools": tools} if native_tools else {}
        if max_tokens:
            extra["max_tokens"] = max_tokens  # the answer's cap holds for a steerable stream too
        t.session = (steerable(t.history, stats, **extra) if steerable is not None and provider.native_steering else None)
        if t.session is not None:
            return t.session
        opts: dict[str, Any] = {"deterministic": True} if deterministic else {}
        if max_tokens:
            opts["max_tokens"] = max_tokens
        if prediction is not None:
            opts["prediction"] = prediction
        if native_tools:
            opts["tools"] = tools
        return provider.chat(t.history, stats, **opts)

    @staticmethod
    async def _pump(t: _Turn, source: Any, deltas: _Deltas, on_delta: Callable[[str], None] | None) -> None:
        async for delta in source:
            t.parts.append(delta)
            deltas.pending.append(delta)
            if on_delta is not None:
                on_delta(delta)
            deltas.schedule()

    @staticmethod
    async def _wait_for_stream(stream: asyncio.Task) -> bool:
        """Wait for a turn's stream to end; True when it was cancelled (a stop or an emulated steer).
        When our caller is cancelled instead, the stream is cancelled too and the cancellation raised."""
        try:
            await asyncio.shield(stream)
        except asyncio.CancelledError:
            if not stream.cancelled():  # our caller was cancelled, not the stream
                stream.cancel()
                raise
            return True
        return False

    async def _prepare_resume(self, t: _Turn, deltas: _Deltas, exc: StreamBrokenError, attempt: int) -> bool:
        """The connection dropped mid-answer: back off, then restart with the context replayed (a new
        socket has no previous_response_id), keeping what arrived. False when nothing arrived yet."""
        await asyncio.sleep(RESUME_BACKOFF_S * 2 ** (attempt - 1))
        deltas.flush()
        self._notify("kestrel/chatResumed", {"id": t.id, "at": len(t.text), "reason": exc.message})
        t.restart_with = RESUME_PROMPT if t.parts[t.segment_start :] else None
        return t.restart_with is not None

    @staticmethod
    def _restart_after_partial(t: _Turn, deltas: _Deltas, steer_note: str) -> None:
        """Emulated steer (or a resume): the partial answer becomes history, then the message."""
        deltas.flush()
        note = steer_note if t.restart_with != RESUME_PROMPT else ""
        t.history = t.history + [{"role": "assistant", "content": t.segment},
                                 {"role": "user", "content": t.restart_with + note}]
        t.segment_start = len(t.parts)
        t.restart_with = None

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
