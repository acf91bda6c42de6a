"""InlineCompletionEngine: decides when to ask the model, what to reuse, what to show.

A request is answered from the document's live `Generation` (generation.py) when it still fits
what was typed; otherwise a new one starts (at most one live per document). Its text goes through
the cuts (cuts/), then the language's guard (guards/). A multi-line answer is given as soon as a
cut is final, except while the model is known to end its blocks itself (ending.py): then the
engine waits for that end, up to max_lines (a stream watched to learn it answers as without).
Once a stream has ended, what follows its suggestion is asked for while the user reads it (prepared).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Callable

from ..config import CompletionSettings
from ..context.file_head import prefix_with_imports
from ..context.window import CHARS_PER_TOKEN, CursorText, suffix_window
from ..providers.base import CompletionPrompt, Provider, ProviderError, Snippet
from . import guards, name_retry
from .confidence import unsure_line
from .cuts import CutOptions, Shown, cut
from .cuts.base import BRACE_LANGUAGES, lexis_of
from .ending import EndingHabit
from .remembered import Remembered
from .name_guard import first_unbound_read
from .generation import TAIL as _TAIL
from .generation import CompletionObserver, Generation
from .generation import pushed_indent as _pushed_indent
from .pace import EndpointPace, Windows
from .read_ahead import ReadAhead
from .shape import opens_a_line, wants_multiline

__all__ = ["CompletionInput", "CompletionObserver", "Generation", "InlineCompletionEngine"]

# The next suggestion is prepared once the user has left the shown one alone this long: a request in
# that time (typing on) means no preparation, which would not be used and, starting right then, would
# hold up that request (the SDK's request set-up runs on this event loop: ~1.4 ms in bench inline_added).
PREPARE_IDLE_S = 0.1
MAX_CONTINUED_CHARS = 120  # typed at the cursor and sent as the start of the answer (see _continued); more starts afresh


class _Unseen:
    """A prepared generation is not the user's wait: it neither shows as busy nor reports (a request
    that adopts it gets its error, if any, as its own)."""

    def generation_started(self) -> None:
        pass

    def generation_finished(self, stats: object, error: object) -> None:
        pass


def _accepted(cur: CursorText, text: str) -> CursorText:
    """The cursor after `text` is accepted at `cur` (it lands at the end of the inserted text)."""
    return CursorText(cur.before + text, cur.after, (cur.line_before + text).rsplit("\n", 1)[-1], cur.line_after)


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
    # (prefix window, budget chars) -> the definitions of names the file imports from the workspace
    definitions: Callable[[str, int], tuple[Snippet, ...]] = lambda window, budget: ()
    repo: str = ""  # the workspace folder holding the file (CompletionPrompt.repo)


class InlineCompletionEngine:
    def __init__(self, settings: CompletionSettings, observer: CompletionObserver) -> None:
        self.settings = settings
        self.observer = observer
        self.provider: Provider | None = None
        self._live: dict[str, Generation] = {}
        self._answers: OrderedDict[tuple[str, str, str], str] = OrderedDict()  # exact-position LRU
        self._habit = EndingHabit()  # of the current provider's model
        self.pace = EndpointPace()  # of the current provider's endpoint
        self.remembered: Remembered | None = None  # both kept between starts, per endpoint (remembered.py)
        self._endpoint = ""  # the current provider's key in `remembered`
        self._saved_known = False  # the habit was saved once it became known
        # Per document: what follows the suggestion last shown, asked for before it is accepted.
        self._prepared: dict[str, Generation] = {}
        self.generations_started = 0
        self.last_started: Generation | None = None  # its first token's time is reported (kestrel/diagnostics)
        self._sent: dict[str, CompletionPrompt] = {}  # per document: the last prompt the model was sent
        self.prepared_started = 0
        self.prepared_used = 0  # prepared generations a request adopted (the rest were not needed)
        self._requests = 0  # completion requests so far (a preparation waits for a quiet moment)
        self.read_ahead = ReadAhead()

    def set_provider(self, provider: Provider | None, endpoint: str = "", remembered: Remembered | None = None) -> None:
        """`endpoint`: the provider's key in `remembered`, where what was learned about it in an earlier run
        is kept (remembered.py; None: nothing is kept). What was learned about the old one is saved first."""
        self.remember()
        self.remembered = remembered
        self.read_ahead.cancel()
        for gen in [*self._live.values(), *self._prepared.values()]:
            gen.cancel()
        self._live.clear()
        self._prepared.clear()
        self._answers.clear()
        self._habit = EndingHabit()
        self.pace = EndpointPace()
        self.provider = provider
        self._endpoint = endpoint if provider is not None else ""
        if self._endpoint and self.remembered is not None:
            learned = self.remembered.load(self._endpoint)
            self._habit.restore(learned.get("ending"))
            self.pace.restore(learned.get("pace"))
        self._saved_known = self._habit.known

    def remember(self) -> None:
        """Keep what was learned about the current endpoint for the next start."""
        if self._endpoint and self.remembered is not None and (self._habit.snapshot() or self.pace.snapshot()):
            self.remembered.save(self._endpoint, {"ending": self._habit.snapshot(), "pace": self.pace.snapshot()},
                                 time.time())

    def _learned(self, _task: object) -> None:
        """After a stream: once the ending habit becomes known, it is kept at once (not only at shutdown)."""
        if not self._saved_known and self._habit.known:
            self._saved_known = True
            self.remember()

    @property
    def live_generations(self) -> int:
        return sum(1 for g in self._live.values() if g.live)

    def forget(self, uri: str) -> None:
        self._sent.pop(uri, None)
        for gen in (self._live.pop(uri, None), self._prepared.pop(uri, None)):
            if gen is not None:
                gen.cancel()

    async def complete(self, req: CompletionInput) -> str:
        """The text to show at the cursor ('' for nothing). Raises ProviderError on failure."""
        cur = req.cur
        self._requests += 1
        key = (req.uri, cur.before[-_TAIL:], cur.after[:_TAIL])
        cached = self._answers.get(key)
        if cached is not None:
            self._answers.move_to_end(key)
            return cached
        gen = self._adopt_prepared(req.uri, cur) or self._live.get(req.uri)
        typed = gen.typed_since(cur.before, cur.after) if gen is not None else None
        if gen is not None and typed is None:
            gen.cancel()  # stale: the user went elsewhere
            self._live.pop(req.uri, None)
            gen = None
            prepared = self._prepared.pop(req.uri, None)
            if prepared is not None:
                prepared.cancel()
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
        self._prepare_next(req, gen, cur, shown.text)
        return shown.text

    @property
    def reads_ahead(self) -> bool:
        """A fim prompt's prefix is what a server keeps; a chat prompt is not laid out so."""
        return self.provider is not None and self.provider.kind == "fim"

    def cursor_rested(self, req: CompletionInput) -> bool:
        """The cursor came to rest at `req.cur` (no keystroke yet): have the model read the prompt of a
        suggestion there now (read_ahead.py). Not while the model streams anything of ours, and not
        where a prepared suggestion waits (after an accept the cursor rests at its place); a prepared
        one elsewhere is given up (the user went elsewhere). True when a read started."""
        if not self.reads_ahead:
            return False
        for uri, gen in list(self._prepared.items()):
            if uri == req.uri and gen.typed_since(req.cur.before, req.cur.after) is not None:
                return False
            self._prepared.pop(uri).cancel()
        if any(g.live for g in self._live.values()):
            return False  # a local server runs one stream at a time: this one is the user's
        here = self._live.get(req.uri)
        if here is not None and here.typed_since(req.cur.before, req.cur.after) is not None:
            return False  # a suggestion was asked for here (the user paused typing): its prompt was read
        prompt = self._prompt(req, req.cur)
        if self._continued(req.uri, prompt) is not prompt:
            return False  # the next prompt continues the last one sent, which the server holds: reading would lose it
        asked = self._requests
        return self.read_ahead.start(self.provider, prompt, lambda: self._requests == asked)

    def _adopt_prepared(self, uri: str, cur: CursorText) -> Generation | None:
        """The prepared generation, once the cursor stands where it was prepared for (the suggestion
        accepted or typed through) or past it along its text."""
        nxt = self._prepared.get(uri)
        if nxt is None or nxt.typed_since(cur.before, cur.after) is None:
            return None  # not there (yet): the user may still be typing the suggestion through
        del self._prepared[uri]
        old = self._live.get(uri)
        if old is not None:
            old.cancel()
        self._live[uri] = nxt
        self.prepared_used += 1
        return nxt

    def _prepare_next(self, req: CompletionInput, gen: Generation, cur: CursorText, text: str) -> None:
        """Ask for what follows `text`, as if accepted, while the user reads it (as Copilot and
        llama.cpp's editor plugins do): the next suggestion is then there when they accept. Only
        once `gen` has ended (a local server runs one stream at a time: a second would cut it
        short), and only while `gen` is still the document's stream."""
        if not self.settings.prepare_next or not text.strip() or req.uri in self._prepared:
            return

        def start(asked: int) -> None:
            if asked != self._requests:
                return  # the user typed on: a request came since the suggestion was shown
            if self.provider is None or self._live.get(req.uri) is not gen or req.uri in self._prepared:
                return
            if gen.error is not None:
                return  # cancelled (the user moved on) or failed
            self._prepared[req.uri] = self._generation(req, _accepted(cur, text), _Unseen())
            self.prepared_started += 1

        asked = self._requests  # this request's number: any later one means the user typed on

        def when_quiet(_task: object = None) -> None:
            asyncio.get_running_loop().call_later(PREPARE_IDLE_S, start, asked)

        if gen.done:
            when_quiet()
        else:
            gen.task.add_done_callback(when_quiet)

    def _start(self, req: CompletionInput) -> Generation:
        if self.provider is None:
            raise ProviderError("no model is configured: set kestrel.provider or KESTREL_PROVIDER")
        # A suggestion prepared in another document is dropped: the user is elsewhere now, and a local
        # server runs one stream at a time (it would hold up this one, or be cut short by it).
        for uri in [u for u in self._prepared if u != req.uri]:
            self._prepared.pop(uri).cancel()
        gen = self._generation(req, req.cur, self.observer)
        self._live[req.uri] = gen
        self.generations_started += 1
        self.last_started = gen
        return gen

    def _generation(self, req: CompletionInput, cur: CursorText, observer: CompletionObserver) -> Generation:
        assert self.provider is not None
        s = self.settings
        prompt = self._prompt(req, cur)
        self.read_ahead.prompt_sent(prompt)
        prompt = self._continued(req.uri, prompt)
        self._sent[req.uri] = prompt
        multiline = prompt.multiline
        max_chars = (s.max_lines + 2) * 120 if multiline else 400
        trusts_end = multiline and self._habit.ends_blocks
        watched = multiline and not trusts_end and self._habit.watches()
        gen = Generation(self.provider, prompt, cur, observer, max_chars, s.max_lines, trusts_end, watched, self._habit)
        if watched:
            gen.task.add_done_callback(self._learned)
        if s.latency_budget_ms > 0:
            # The order the endpoint reads it in (context, prefix, suffix): what it kept from the last one is cheap.
            read = self.pace.sent("".join(sn.path + sn.text for sn in prompt.snippets) + "\0" + prompt.prefix
                                  + "\0" + prompt.suffix + "\0" + prompt.answered)
            pace = self.pace
            gen.task.add_done_callback(lambda _t: pace.record(read, gen.stats.ttft_ms))
        return gen

    def _continued(self, uri: str, prompt: CompletionPrompt) -> CompletionPrompt:
        """`prompt` as the last one sent here with what was typed since as the start of the answer.

        A fill-in-the-middle prompt puts the suffix after the prefix, so a keystroke at the cursor changes
        the prompt before the whole suffix window and the server reads all of it again (~400 tokens: on a
        CPU most of a warm suggestion's wait). When only characters at the cursor were typed since the
        last prompt (same suffix, same context), that prompt is sent again with them written after the
        middle marker, as if the model had begun its answer with them: the server reads only those.
        Across a newline too (Enter leaves the suffix as it was, and a middle of several lines is what a
        fill-in-the-middle model learned); not past MAX_CONTINUED_CHARS."""
        last = self._sent.get(uri)
        if (last is None or not self.settings.continue_typed or self.provider is None or self.provider.kind != "fim"
                or prompt.suffix != last.suffix or prompt.snippets != last.snippets or prompt.repo != last.repo
                or prompt.path != last.path or prompt.language != last.language
                or not prompt.prefix.startswith(last.prefix)):
            return prompt
        typed = prompt.prefix[len(last.prefix):]
        if len(typed) > MAX_CONTINUED_CHARS:
            return prompt
        return replace(prompt, prefix=last.prefix, answered=typed)

    def _prompt(self, req: CompletionInput, cur: CursorText) -> CompletionPrompt:
        """What the model is asked at `cur`: the windows, the context, whether a block is wanted."""
        assert self.provider is not None
        s = self.settings
        if opens_a_line(cur.line_before, cur.line_after):
            cur = _opened(cur, _pushed_indent(cur))
        rest = cur.after.split("\n", 2)
        multiline = wants_multiline(cur.line_before, cur.line_after, rest[1] if len(rest) > 1 else None)
        budgeted = s.latency_budget_ms > 0  # off (the default): no pace is kept, nothing is cut
        prefix, suffix, snippets = self._parts(req, cur, Windows(s.prefix_tokens, s.suffix_tokens, s.context_tokens))
        if budgeted:
            sent = Windows(*(int(len(t) / CHARS_PER_TOKEN) for t in (prefix, suffix, "".join(sn.text for sn in snippets))))
            cut = self.pace.cut(sent, s.latency_budget_ms)  # a slow endpoint: what it reads within the budget
            if cut is not None:
                prefix, suffix, snippets = self._parts(req, cur, cut)
        return CompletionPrompt(
            prefix=prefix,
            suffix=suffix,
            language=req.language,
            path=req.path,
            snippets=snippets,
            repo=req.repo,
            max_tokens=s.max_tokens if multiline else min(s.max_tokens, 64),
            multiline=multiline,
            # the chosen tokens' log probabilities, for confidence.unsure_line (fim streams carry them)
            top_logprobs=1 if self._floor(req.language) > 0 and self.provider.kind == "fim" else 0,
        )

    @staticmethod
    def _parts(req: CompletionInput, cur: CursorText, w: Windows) -> tuple[str, str, tuple[Snippet, ...]]:
        """The prefix, suffix and snippets from other files within the windows `w`."""
        prefix = prefix_with_imports(cur.before, w.prefix_tokens, req.language)
        budget = int(w.context_tokens * CHARS_PER_TOKEN)
        # Imported definitions first: they are stable while the user types (the prompt cache keeps
        # them); open-tab snippets follow the cursor, so they come last, in what budget is left.
        definitions = req.definitions(prefix, budget)
        budget -= sum(len(d.text) + len(d.path) + 16 for d in definitions)
        defining = {d.path for d in definitions}  # a file whose definitions are sent gets no window too
        neighbors = tuple(n for n in req.neighbors(prefix, budget) if n.path not in defining)
        return prefix, suffix_window(cur.after, w.suffix_tokens), definitions + neighbors

    def _floor(self, language: str) -> float:
        """The least probability a one-line suggestion needs (confidence.py). Not for Python: on HumanEval
        it hid right lines written unlike the model's habit (7 of 11 passed their tests; design notes)."""
        return 0.0 if language == "python" else self.settings.min_line_probability

    async def _answer(self, gen: Generation, typed: str, cur: CursorText, req: CompletionInput) -> Shown | None:
        gen.adopted()
        gen.waiters += 1
        seen = cur if gen.open_indent is None else _opened(cur, gen.open_indent)  # as the model saw it
        early: Shown | None = None  # a watched stream's answer as it would have been without waiting
        try:
            while True:
                if not gen.text.startswith(typed) and (gen.done or not typed.startswith(gen.text)):
                    return None
                opts = CutOptions(multiline=gen.multiline, max_lines=self.settings.max_lines, done=gen.done,
                                  model_ended=gen.model_ended, expect_end=gen.awaits_end and gen.trusts_end,
                                  braces=req.language in BRACE_LANGUAGES, lexis=lexis_of(req.language),
                                  asked_mid_line=bool(gen.line_before.strip()),
                                  capped=gen.done and gen.error is None and gen.stop_reason == "length")
                shown = cut(gen.text[len(typed) :] if gen.text.startswith(typed) else "", seen, opts)
                if gen.open_indent is not None and shown.text:
                    shown = Shown(shown.text.rstrip() + "\n" + gen.open_indent, shown.final)
                if gen.done and gen.error is not None and gen.error.message != "cancelled":
                    if not shown.text:
                        raise gen.error
                    return Shown(shown.text, True)  # keep what arrived before the failure
                if shown.final and gen.watched and gen.awaits_end and not self._habit.known:
                    # Learning the model's habit: the answer waits for the stream's end, so that the
                    # user's next request does not cut the stream short before it is counted. Once the
                    # habit is known, a watched stream answers at once and is counted in the background
                    # if it ends alone (generation.py).
                    early = early or shown  # final: later text cannot change it; the stream goes on to be counted
                elif shown.final or gen.done:
                    shown = early or shown
                    gen.answered = True
                    if unsure_line(shown.text, gen.stats.tokens, self._floor(req.language)):
                        return None  # the model itself gave this line little chance: show nothing
                    fitted = guards.fit(cur, shown, req.language, gen.open_indent)
                    if fitted.text or not shown.text or typed:
                        return fitted
                    return await self._with_a_known_name(gen, shown, seen, req, opts) or fitted
                await gen.wait_changed()
        finally:
            gen.waiters -= 1

    async def _with_a_known_name(self, gen: Generation, shown: Shown, seen: CursorText, req: CompletionInput,
                                 opts: CutOptions) -> Shown | None:
        """An answer hidden for reading a name nothing binds, written again from the likeliest token
        that begins a name the code has (name_retry.py); None when that does not give one to show."""
        provider = self.provider
        if provider is None or provider.kind != "fim" or req.language != "python" or gen.open_indent is not None:
            return None
        found = first_unbound_read(seen.before, shown.text, seen.after, req.language)
        if found is None:
            return None
        name, offset = found
        if not shown.text.startswith(name, offset) or not gen.text.startswith(shown.text[:offset]):
            return None  # the cuts changed the text before the name: the model's answer is not this
        gen.cancel()  # its answer is refused, and a local server runs one stream at a time
        # The retry is a new stream: the first one's ending (its token cap included) is not its own.
        streaming = replace(opts, done=False, model_ended=False, capped=False)
        names = name_retry.known_names(seen.before + seen.after)
        text = await name_retry.retry(provider, gen.prompt, shown.text, offset, names,
                                      lambda so_far: cut(so_far, seen, streaming).final)
        if text is None:
            return None
        again = cut(text, seen, streaming)  # final when the stream was left early
        if not again.final:
            again = cut(text, seen, replace(streaming, done=True, model_ended=True))
        return guards.fit(seen, again, req.language, None) if again.text else None

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
        self.remember()
        self.read_ahead.cancel()
        for gen in [*self._live.values(), *self._prepared.values()]:
            gen.cancel()
        self._live.clear()
        self._prepared.clear()
