"""Generation: one upstream completion stream, owned by the engine so it can outlive its request.

- typing-through: the user types what it proposed; it answers the next request with the rest.
- reuse: a request that matches what it still streams waits on it instead of asking again.
- stale: cancelled once its request is cancelled and the document no longer matches it; one that
  still matches lives `adopt_grace_ms` for the next request, no longer.
It also counts how the model ends its blocks (ending.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from ..context.window import CursorText
from ..providers.base import CompletionPrompt, Provider, ProviderError, StreamStats, streams_opened
from .ending import EndingHabit
from .shape import opens_a_line

log = logging.getLogger(__name__)

TAIL = 256  # characters of context that identify "the same place in the same document"
CHAT_STYLE = frozenset({"chat", "responses", "responses-ws"})


class CompletionObserver(Protocol):
    def generation_started(self) -> None: ...
    def generation_finished(self, stats: StreamStats, error: ProviderError | None) -> None: ...


class Generation:
    """One upstream completion stream for a document position."""

    def __init__(
        self,
        provider: Provider,
        prompt: CompletionPrompt,
        cur: CursorText,
        observer: CompletionObserver,
        max_chars: int,
        max_lines: int,
        trusts_end: bool = False,
        watched: bool = False,
        habit: EndingHabit | None = None,
    ) -> None:
        self.before_len = len(cur.before)
        self.before_tail = cur.before[-TAIL:]
        self.after_head = cur.after[:TAIL]
        self.line_before = cur.line_before
        self.multiline = prompt.multiline
        self.prompt = prompt
        # See ending.py: wait for the model to end the block itself and take that end (trusts_end),
        # or keep the stream to its end only to learn how this model ends (watched).
        self.trusts_end = trusts_end and prompt.multiline
        self.watched = watched and prompt.multiline
        self.newlines = 0
        # On a line opened above existing code (see opens_a_line), what goes between the new
        # line's newline and that code: the indentation typed before the cursor, unless the code
        # carries its own (whitespace after the cursor), which then stays as it is.
        self.open_indent = pushed_indent(cur) if opens_a_line(cur.line_before, cur.line_after) else None
        self.text = ""
        self.done = False
        self.error: ProviderError | None = None
        self.stats = StreamStats()
        self.waiters = 0
        self.answered = False  # a request was answered from this stream
        self._changed = asyncio.Event()
        self._observer = observer
        self._max_chars = max_chars
        self._max_lines = max_lines
        self._habit = habit if prompt.multiline else None
        self._grace: asyncio.TimerHandle | None = None
        # How the stream ended, as the cuts and the ending habit read it: not a chat-style stream's reason.
        # Both were measured when only fim streams reported one (chat-style ones now do, for chat answers).
        self._reasoned = getattr(provider, "kind", "") not in CHAT_STYLE
        self.task = asyncio.get_running_loop().create_task(self._run(provider, prompt))

    async def _run(self, provider: Provider, prompt: CompletionPrompt) -> None:
        self._observer.generation_started()
        try:
            async for delta in provider.complete(prompt, self.stats):
                self.text += delta
                self.newlines += delta.count("\n")
                if self.newlines > self._max_lines:
                    self._note_ending(False)  # past max_lines: not a block the model ends
                self._changed.set()
                if len(self.text) >= self._max_chars:
                    break  # enough for max_lines: stop paying for tokens nobody will see
        except ProviderError as exc:
            self.error = exc
        except asyncio.CancelledError:
            self.error = ProviderError("cancelled")
            raise
        except Exception as exc:  # a bug in a provider must not kill the server
            log.exception("completion stream failed")
            self.error = ProviderError(f"completion failed ({type(exc).__name__})")
        finally:
            self.done = True
            self.stats.finished = time.perf_counter()
            # A stream another one started beside is not counted: a one-slot local server cuts it short
            # for the newcomer, and a stream cut by the server can read as one the model ended.
            if self.error is None and streams_opened() == self.stats.seq:
                self._note_ending(self.model_ended)
            self._changed.set()
            cancelled = self.error is not None and self.error.message == "cancelled"
            # A stream that already gave its answer and that nobody waits on is only being kept
            # for typing-through: its later failure (e.g. a local server that interrupts it when a
            # chat request arrives) is not the user's problem and is not reported.
            moot = self.answered and not self.waiters
            self._observer.generation_finished(self.stats, None if cancelled or moot else self.error)

    @property
    def live(self) -> bool:
        return not self.done

    @property
    def stop_reason(self) -> str | None:
        return self.stats.stop_reason if self._reasoned else None

    @property
    def model_ended(self) -> bool:
        """The model ended the text itself (not the token cap, not a failure or our cut)."""
        return self.done and self.error is None and self.stop_reason == "stop"

    @property
    def awaits_end(self) -> bool:
        """Still streaming a block whose end (within max_lines) is waited for."""
        return (self.trusts_end or self.watched) and not self.done and self.newlines <= self._max_lines

    def _note_ending(self, ended: bool) -> None:
        if self._habit is not None:
            self._habit.record(ended)
            self._habit = None  # once per stream

    def cancel(self) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        if not self.task.done():
            self.task.cancel()

    def typed_since(self, before: str, after: str) -> str | None:
        """What the user typed since this generation started, if it is still the same place."""
        n = self.before_len
        if len(before) < n or before[max(n - TAIL, 0) : n] != self.before_tail:
            return None
        if after[: len(self.after_head)] != self.after_head:
            return None
        typed = before[n:]
        if self.text.startswith(typed) or (not self.done and typed.startswith(self.text)):
            return typed
        return None

    def still_possible(self, document: str) -> bool:
        """At cancel time, without a cursor: could the document be this generation typed-through?"""
        n = self.before_len
        if len(document) < n or document[max(n - TAIL, 0) : n] != self.before_tail:
            return False
        rest = document[n:]
        head = self.after_head[:64]
        limit = min(len(rest), len(self.text))
        k = 0
        while k < limit and rest[k] == self.text[k]:
            k += 1
        if not self.done and k == len(self.text):
            return True  # the user may be ahead of the stream: undecided
        return any(rest[j:].startswith(head) for j in range(k, -1, -1))

    async def wait_changed(self) -> None:
        self._changed.clear()
        if not self.done:
            await self._changed.wait()

    def keep_for_adoption(self, grace_s: float) -> None:
        """Nobody waits on this generation now; give the next request a moment to adopt it."""
        if self.done or self.waiters:
            return
        if self._grace is not None:
            self._grace.cancel()
        self._grace = asyncio.get_running_loop().call_later(grace_s, self.cancel)

    def adopted(self) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None


def pushed_indent(cur: CursorText) -> str:
    """On a line opened above existing code: the indentation the pushed-down code gets."""
    return "" if cur.line_after[:1] in (" ", "\t") else cur.line_before
