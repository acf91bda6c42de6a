"""InlineCompletionEngine: decides when to ask the model, what to reuse, what to show.

A model stream is a `Generation`, owned by the engine rather than by the LSP request that
started it, so it can outlive that request:

- typing-through: the user types the characters the completion proposed; the same
  generation (finished or still streaming) answers the next request with the remainder.
- reuse: a request arrives while a generation whose text matches what the user typed is
  still streaming: we wait on it instead of asking again.
- stale: the moment a request is cancelled and the document no longer matches the
  generation, the generation is cancelled, which closes the upstream stream. A generation
  that still matches may live `adopt_grace_ms` waiting for the next request, no longer.

At most one live generation per document; a new one starts only after the old one is
cancelled or adopted.

A multi-line answer is given as soon as a cut rule is final, except while the model is known
to end its blocks itself (ending.py): then the engine waits for that end, up to max_lines. A
stream watched to learn that is answered as it would have been, once it has ended.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Protocol

from ..config import CompletionSettings
from ..context.window import CursorText, prefix_window, suffix_window
from ..providers.base import CompletionPrompt, Provider, ProviderError, Snippet, StreamStats
from .ending import EndingHabit
from .name_guard import misreads_names
from .postprocess import Shown, finalize
from .shape import opens_a_line, wants_multiline
from .syntax_guard import breaks_syntax

log = logging.getLogger(__name__)

_TAIL = 256  # characters of context that identify "the same place in the same document"


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
        self.before_tail = cur.before[-_TAIL:]
        self.after_head = cur.after[:_TAIL]
        self.line_before = cur.line_before
        self.multiline = prompt.multiline
        # See ending.py: wait for the model to end the block itself and take that end (trusts_end),
        # or keep the stream to its end only to learn how this model ends (watched).
        self.trusts_end = trusts_end and prompt.multiline
        self.watched = watched and prompt.multiline
        self.newlines = 0
        # On a line opened above existing code (see opens_a_line), what goes between the new
        # line's newline and that code: the indentation typed before the cursor, unless the code
        # carries its own (whitespace after the cursor), which then stays as it is.
        self.open_indent = _pushed_indent(cur) if opens_a_line(cur.line_before, cur.line_after) else None
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
            if self.error is None:
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
    def model_ended(self) -> bool:
        """The model ended the text itself (not the token cap, not a failure or our cut)."""
        return self.done and self.error is None and self.stats.stop_reason == "stop"

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
        if len(before) < n or before[max(n - _TAIL, 0) : n] != self.before_tail:
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
        if len(document) < n or document[max(n - _TAIL, 0) : n] != self.before_tail:
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


def _fits(cur: CursorText, text: str, language: str) -> bool:
    """Neither guard holds `text` back at the cursor."""
    return not (breaks_syntax(cur.before, text, cur.after, language)
                or misreads_names(cur.before, text, cur.after, language))


def _first_line(text: str, open_indent: str | None) -> str:
    """The first line of a multi-line suggestion ('' when it has one line or an empty first line);
    on a line opened above existing code it keeps the newline and indentation before that code."""
    if "\n" not in text.rstrip("\n") or not text.split("\n", 1)[0].strip():
        return ""
    first = text.split("\n", 1)[0]
    return first + "\n" + open_indent if open_indent is not None else first


def _pushed_indent(cur: CursorText) -> str:
    return "" if cur.line_after[:1] in (" ", "\t") else cur.line_before


def _opened(cur: CursorText, indent: str) -> CursorText:
    """The cursor on a new line above the code that followed it, which keeps its `indent` (see
    opens_a_line): the suggestion then ends with a newline and that indentation."""
    return CursorText(cur.before, "\n" + indent + cur.after, cur.line_before, "")


@dataclass(frozen=True)
class CompletionInput:
    uri: str
    path: str
    language: str
    cur: CursorText
    neighbors: Callable[[str, int], tuple[Snippet, ...]]  # (query text, budget chars) -> snippets


class InlineCompletionEngine:
    def __init__(self, settings: CompletionSettings, observer: CompletionObserver) -> None:
        self.settings = settings
        self.observer = observer
        self.provider: Provider | None = None
        self._live: dict[str, Generation] = {}
        self._answers: OrderedDict[tuple[str, str, str], str] = OrderedDict()  # exact-position LRU
        self._habit = EndingHabit()  # of the current provider's model
        self.generations_started = 0

    def set_provider(self, provider: Provider | None) -> None:
        for gen in self._live.values():
            gen.cancel()
        self._live.clear()
        self._answers.clear()
        self._habit = EndingHabit()
        self.provider = provider

    @property
    def live_generations(self) -> int:
        return sum(1 for g in self._live.values() if g.live)

    def forget(self, uri: str) -> None:
        gen = self._live.pop(uri, None)
        if gen is not None:
            gen.cancel()

    async def complete(self, req: CompletionInput) -> str:
        """The text to show at the cursor ('' for nothing). Raises ProviderError on failure."""
        cur = req.cur
        key = (req.uri, cur.before[-_TAIL:], cur.after[:_TAIL])
        cached = self._answers.get(key)
        if cached is not None:
            self._answers.move_to_end(key)
            return cached
        gen = self._live.get(req.uri)
        typed = gen.typed_since(cur.before, cur.after) if gen is not None else None
        if gen is not None and typed is None:
            gen.cancel()  # stale: the user went elsewhere
            self._live.pop(req.uri, None)
            gen = None
        if gen is not None and gen.done and gen.error is not None:
            gen, typed = None, None  # a failed or cancelled (partial) stream is not reused
        if gen is None:
            gen = self._start(req)
            typed = ""
        shown = await self._answer(gen, typed or "", cur, req)
        if shown is None:  # the stream diverged from what was typed: ask once more, fresh
            gen.cancel()
            gen = self._start(req)
            shown = await self._answer(gen, "", cur, req) or Shown("", True)
        if len(self._answers) >= 64:
            self._answers.popitem(last=False)
        self._answers[key] = shown.text
        return shown.text

    def _start(self, req: CompletionInput) -> Generation:
        if self.provider is None:
            raise ProviderError("no model is configured: set kestrel.provider or KESTREL_PROVIDER")
        s = self.settings
        cur = req.cur
        if opens_a_line(cur.line_before, cur.line_after):
            cur = _opened(cur, _pushed_indent(cur))
        multiline = wants_multiline(cur.line_before, cur.line_after)
        prefix = prefix_window(cur.before, s.prefix_tokens)
        prompt = CompletionPrompt(
            prefix=prefix,
            suffix=suffix_window(cur.after, s.suffix_tokens),
            language=req.language,
            path=req.path,
            snippets=req.neighbors(prefix, int(s.context_tokens * 3.5)),
            max_tokens=s.max_tokens if multiline else min(s.max_tokens, 64),
            multiline=multiline,
        )
        max_chars = (s.max_lines + 2) * 120 if multiline else 400
        trusts_end = multiline and self._habit.ends_blocks
        watched = multiline and not trusts_end and self._habit.watches()
        gen = Generation(self.provider, prompt, req.cur, self.observer, max_chars, s.max_lines, trusts_end, watched,
                         self._habit)
        self._live[req.uri] = gen
        self.generations_started += 1
        return gen

    async def _answer(self, gen: Generation, typed: str, cur: CursorText, req: CompletionInput) -> Shown | None:
        gen.adopted()
        gen.waiters += 1
        before_lines = cur.before[-_TAIL * 8 :].split("\n")[:-1]  # the lines above the cursor line
        seen = cur if gen.open_indent is None else _opened(cur, gen.open_indent)  # as the model saw it
        early: Shown | None = None  # a watched stream's answer as it would have been without waiting
        try:
            while True:
                if not gen.text.startswith(typed) and (gen.done or not typed.startswith(gen.text)):
                    return None
                shown = finalize(
                    gen.text[len(typed) :] if gen.text.startswith(typed) else "",
                    seen.line_before,
                    seen.line_after,
                    seen.after,
                    multiline=gen.multiline,
                    max_lines=self.settings.max_lines,
                    done=gen.done,
                    before_lines=before_lines,
                    model_ended=gen.model_ended,
                    expect_end=gen.awaits_end and gen.trusts_end,
                )
                if gen.open_indent is not None and shown.text:
                    shown = Shown(shown.text.rstrip() + "\n" + gen.open_indent, shown.final)
                if gen.done and gen.error is not None and gen.error.message != "cancelled":
                    if not shown.text:
                        raise gen.error
                    return Shown(shown.text, True)  # keep what arrived before the failure
                if shown.final and gen.watched and gen.awaits_end:
                    early = early or shown  # final: later text cannot change it; the stream goes on to be counted
                elif shown.final or gen.done:
                    shown = early or shown
                    gen.answered = True
                    if not _fits(cur, shown.text, req.language):
                        # A block that does not fit the code around it: its first line may (as a
                        # single-line answer would have been); else nothing beats broken code.
                        first = _first_line(shown.text, gen.open_indent)
                        return Shown(first if first and _fits(cur, first, req.language) else "", True)
                    return shown
                await gen.wait_changed()
        finally:
            gen.waiters -= 1

    def request_cancelled(self, uri: str, document: str | None) -> None:
        """The LSP request was cancelled: kill the stream now unless it may still be typed through."""
        gen = self._live.get(uri)
        if gen is None or gen.done or gen.waiters:
            return
        if document is None or not gen.still_possible(document):
            gen.cancel()
            self._live.pop(uri, None)
        else:
            gen.keep_for_adoption(self.settings.adopt_grace_ms / 1000)

    async def aclose(self) -> None:
        for gen in list(self._live.values()):
            gen.cancel()
        self._live.clear()
