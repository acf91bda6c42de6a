"""What every cut stage shares: the answer so far, the stream's options, the stage runner."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ...context.window import CursorText
from ..shape import indent_of

log = logging.getLogger("kestrel.completion.cuts")

BEFORE_LINES_CHARS = 2048  # how far above the cursor the lines that shape a cut are read
_PAIRS = {")": "(", "]": "[", "}": "{"}
_OPEN = set("([{")
OPENERS = (":", "{", "(", "[")


@dataclass(frozen=True)
class Lexis:
    """What bracket counting must skip besides string literals: a line comment (its brackets are
    prose) and, in Rust, lifetimes (`'a`, `'static`: a quote that opens no literal)."""

    comment: str | None = None
    lifetimes: bool = False


def lexis_of(language: str) -> Lexis:
    if language == "python":
        return Lexis("#")
    if language == "rust":
        return Lexis("//", lifetimes=True)
    return Lexis("//") if language in BRACE_LANGUAGES else Lexis()


@dataclass(frozen=True)
class Shown:
    text: str
    final: bool  # a cut rule fired: more streamed text cannot change `text`


@dataclass(frozen=True)
class CutOptions:
    """How the model's text arrived. `model_ended`: the stream is done and the model ended it
    itself. `expect_end`: the stream goes on, and the model is known to end its blocks: cuts that
    guess where the block ends wait for that end instead (those that see a re-typing still cut)."""

    multiline: bool
    max_lines: int
    done: bool
    model_ended: bool = False
    expect_end: bool = False
    braces: bool = False  # the language closes blocks with braces: the brace stages apply
    lexis: Lexis = Lexis()  # what bracket counting skips in the language (lexis_of)
    # Whether the cursor line had code before the cursor when the model was asked (None: as it has
    # now). Typing through a suggestion asked at an empty line puts code before the cursor; the
    # answer is still the block that was asked for, not the rest of a statement.
    asked_mid_line: bool | None = None
    # The token cap stopped the stream (finish reason "length"): its last line is unfinished.
    capped: bool = False


# Languages whose blocks end with `}`: the brace stages (surplus_closer, closes_what_follows,
# retyped_line_end) apply to them only, so Python's cuts stay exactly as they were measured.
BRACE_LANGUAGES = frozenset({
    "typescript", "typescriptreact", "javascript", "javascriptreact", "go", "rust", "java", "c", "cpp",
    "csharp", "kotlin", "swift", "scala", "dart", "php", "objective-c", "objective-cpp", "groovy", "zig",
})


# A stage rewrites the answer so far; a pick stage answers outright (a Shown) or passes (None).
Stage = Callable[[Shown, CursorText, CutOptions], Shown]
Pick = Callable[[str, CursorText, CutOptions], Optional[Shown]]


def _said(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def note(stage: str, old: str, new: str) -> None:
    """Log at debug what `stage` took away (nothing when it kept the text as it was)."""
    if new == old or not log.isEnabledFor(logging.DEBUG):
        return
    if old.strip() and not new.strip():
        log.debug("cut %s: dropped %s", stage, _said(old))
    else:
        log.debug("cut %s: trimmed %s to %s", stage, _said(old), _said(new))


def run(stages: Sequence[Stage], shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Apply `stages` in order, logging what each one cuts."""
    for stage in stages:
        out = stage(shown, cur, opts)
        note(stage.__name__, shown.text, out.text)
        shown = out
    return shown


def first_pick(picks: Sequence[Pick], text: str, cur: CursorText, opts: CutOptions) -> Shown:
    """The answer of the first stage in `picks` that gives one (the last one always does)."""
    for pick in picks:
        shown = pick(text, cur, opts)
        if shown is not None:
            if shown.final or shown.text:
                note(pick.__name__, text, shown.text)
            else:
                log.debug("cut %s: waits for more", pick.__name__)
            return shown
    raise AssertionError("the last pick stage must answer")


def before_lines(cur: CursorText) -> list[str]:
    """The lines above the cursor line (the nearest BEFORE_LINES_CHARS of them)."""
    return cur.before[-BEFORE_LINES_CHARS:].split("\n")[:-1]


def previous_line(cur: CursorText) -> str:
    """The nearest line above the cursor line with text on it ("" when there is none in reach)."""
    return next((ln for ln in reversed(before_lines(cur)) if ln.strip()), "")


def following_line(line_after: str, after: str) -> str | None:
    """The first line of code after the cursor (the rest of the cursor line counts)."""
    if line_after.strip():
        return line_after
    return next((ln for ln in after.split("\n")[1:8] if ln.strip()), None)


_LIFETIME = re.compile(r"'[A-Za-z_]\w*(?!['\w])")  # `'a`, `'static` (a char literal closes: `'a'`)


def bracket_depths(line: str, depth: int, lexis: Lexis = Lexis()) -> tuple[int, int | None]:
    """New depth after `line`, and the index where depth first went negative (None if never).
    Brackets in string literals and, per `lexis`, in a line comment do not count."""
    quote = None
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        i += 1
        if quote:
            if ch == "\\" and quote != "`":
                i += 1  # an escaped character (`"\""`) does not end the literal
            elif ch == quote:
                quote = None
            continue
        if lexis.comment and line.startswith(lexis.comment, i - 1):
            break
        if ch == "'" and lexis.lifetimes and (lifetime := _LIFETIME.match(line, i - 1)):
            i = lifetime.end()
            continue
        if ch in "\"'`" and not (ch == "'" and i > 1 and line[i - 2] in "&<"):  # not a lifetime (`&'a`)
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _PAIRS:
            depth -= 1
            if depth < 0:
                return depth, i - 1
    return depth, None


__all__ = ["CutOptions", "Shown", "indent_of"]
