"""Filling a hole: code follows the cursor in the same block, and the model's middle must meet it.

A fill-in-the-middle model rejoins the code after the cursor once the hole is filled: the middle
ends there. If it does not rejoin within a few lines, it is rewriting the code below rather than
filling the hole: only its first line is offered, and nothing if that line repeats that code.
"""

from __future__ import annotations

import re

from ...context.window import CursorText
from ..shape import indent_of
from .base import OPENERS, CutOptions, Shown, following_line, previous_line
from .brackets import surplus_cut, without_retyped_end

SYNC_CHARS = 16  # re-typing this much of the text after the cursor counts as rejoining it
SYNC_MIN_TAIL = 6  # a stream that ended while re-typing: at least this many characters of it
# (both counted without whitespace: a newline and indentation alone match any line at that depth)
SYNC_HORIZON_LINES = 3  # lines past the first in which a filled hole must rejoin the code after it
_WORD_AT = re.compile(r"\w+")
RETYPE_MIN_CHARS = 8  # a line this long that also appears below the cursor is not a coincidence
RETYPE_LOOKAHEAD_LINES = 40


def code_follows_in_block(cur: CursorText) -> bool:
    """Is there code after the cursor that continues the block the cursor is in?"""
    line_before, line_after = cur.line_before, cur.line_after
    following = following_line(line_after, cur.after)
    if following is None:
        return False
    if line_after.strip():
        return True
    if line_before.strip():
        return False  # end of a line with text: the next line is a separate statement
    previous = previous_line(cur)
    if previous.rstrip().endswith(OPENERS) and indent_of(following) <= indent_of(previous):
        return False  # an empty body after an opener: a block is wanted
    # At column 0 of an empty line the level is not known yet: the line may continue the block
    # above or start the code below, and either way that code follows the hole.
    return not line_before or indent_of(following) >= len(line_before)


def suffix_sync(text: str, after: str, done: bool) -> int | None:
    """Index in `text` where the model starts re-typing `after` (the middle ends there), or None."""
    targets = [after]
    if after.startswith("\n\n"):  # a blank line the model may not reproduce
        targets.append("\n" + after.lstrip("\n"))
    best = None
    for target in targets:
        if not target.strip():
            continue
        k = _sync_at(text, target, done)
        if k >= 0 and (best is None or k < best):
            best = k
    return best


def _sync_at(text: str, target: str, done: bool) -> int:
    need = max(_span_with_code(target, SYNC_CHARS), _first_code_line_end(target))
    head = target[:need]
    k = text.find(head)
    while k >= 0 and need == len(target) and k + need < len(text):
        k = text.find(head, k + 1)  # a short suffix must be the very end of the text
    if k < 0 and done:
        for j in range(max(len(text) - need, 0), len(text) - SYNC_MIN_TAIL + 1):
            tail = text[j:]
            if len("".join(tail.split())) >= SYNC_MIN_TAIL and target.startswith(tail):
                return j
    return k


def _first_code_line_end(target: str) -> int:
    """Length of the start of `target` up to the end of its first line of code: a line that only
    begins like the code below (`closing = []` for `closing.reverse()`) is not that code."""
    start = len(target) - len(target.lstrip())
    end = target.find("\n", start)
    return len(target) if end < 0 else end


def _span_with_code(target: str, chars: int) -> int:
    """Length of the start of `target` that holds `chars` characters other than whitespace (or
    all of it): newlines and indentation alone match any deeper line, not the code after the cursor."""
    seen = 0
    for i, ch in enumerate(target):
        if not ch.isspace():
            seen += 1
            if seen == chars:
                return i + 1
    return len(target)


def _retyped_lines(lines: list[str], after: str) -> list[int]:
    """Indexes (past the first) of the complete lines of the model's text that repeat a line of the
    code below the cursor: a sign that the model is rewriting that code rather than filling the hole."""
    below = {ln.strip() for ln in after.split("\n")[:RETYPE_LOOKAHEAD_LINES] if len(ln.strip()) >= RETYPE_MIN_CHARS}
    return [i for i, line in enumerate(lines[1:], start=1) if line.strip() in below]


def _retypes_a_run(retyped: list[int], lines: list[str], after: str) -> bool:
    """Do two consecutive lines of the model's text repeat two consecutive lines of the code below?"""
    below = [ln.strip() for ln in after.split("\n")[:RETYPE_LOOKAHEAD_LINES] if ln.strip()]
    pairs = set(zip(below, below[1:]))
    return any(i + 1 in retyped and (lines[i].strip(), lines[i + 1].strip()) in pairs for i in retyped)


def _retyped(text: str, cur: CursorText, opts: CutOptions) -> list[int]:
    lines = text.split("\n")
    return _retyped_lines(lines if opts.done else lines[:-1], cur.after)  # a streaming last line may grow


def _repeats_following(line: str, cur: CursorText) -> bool:
    following = following_line(cur.line_after, cur.after)
    return following is not None and line.strip() == following.strip()


# Pick stages: the first that answers gives the middle.
def rejoins(text: str, cur: CursorText, opts: CutOptions) -> Shown | None:
    """Trims the middle where the model starts re-typing the code after the cursor (final)."""
    k = suffix_sync(text, cur.after, opts.done)
    if k is None:
        return None
    middle = text[:k]
    return Shown(middle if middle.strip() else "", True)


def closes_what_follows(text: str, cur: CursorText, opts: CutOptions) -> Shown | None:
    """Trims the middle before a closer that the code after the cursor resumes with: it closes a
    bracket opened before the hole that that code closes already (`f(a|)` answered `a, b)`; final)."""
    following = following_line(cur.line_after, cur.after)
    if not opts.braces or following is None or not following.lstrip().startswith((")", "]", "}")):
        return None
    k = surplus_cut(text, cur, opts.lexis)
    if k is None:
        return None
    return Shown(text[:k] if text[:k].strip() else "", True)


def ended_by_model(text: str, cur: CursorText, opts: CutOptions) -> Shown | None:
    """A middle the model ended itself (or will: `expect_end`) within max_lines is kept whole, unless
    it re-types a run of the code below; dropped when its first line repeats the code that follows."""
    lines = text.split("\n")
    if not (opts.model_ended or opts.expect_end and not opts.done) or len(lines) > opts.max_lines:
        return None
    # An ended answer may share lines with the code below (`return False` in two branches); two
    # such lines in a row, in the same order below, mean it wrote that code again.
    if _retypes_a_run(_retyped(text, cur, opts), lines, cur.after):
        return None
    first_done = opts.model_ended or len(lines) > 1
    if first_done and _repeats_following(lines[0], cur):
        return Shown("", True)
    if opts.model_ended:
        return Shown(text if text.strip() else "", True)
    return Shown("", False)  # a model known to end its blocks: its end is the hole's end


def _foreseen_need(target: str) -> int:
    """How much of `target` (the code after the cursor) a line must re-type before it is taken for
    that code: up to its first word and the character after it (`total.` is not `total =`), or the
    whole of a one-word line with its newline (`pass` is not `passed`)."""
    start = len(target) - len(target.lstrip())
    line_end = target.find("\n", start)
    line_end = len(target) if line_end < 0 else line_end
    word = _WORD_AT.match(target, start)
    k = word.end() if word else start + 1
    while k < line_end and target[k] in " \t":
        k += 1
    return k + 1 if k < line_end else min(line_end + 1, len(target))


def foreseen_rejoin(text: str, cur: CursorText, opts: CutOptions) -> Shown | None:
    """Ends the middle after its first line once the next line has started re-typing the code below
    the cursor line, past its first word (final; the rest of that line is not waited for). Were the
    line to part from the code after that, the middle would still be its first line (a middle that
    does not rejoin within the horizon keeps only its first line), unless the model rejoined further
    down after more lines of its own: rare for a line that starts like the code below. The first
    line is trimmed as `first_line_only` trims it (a re-typed rest of the cursor line)."""
    nl = text.find("\n")
    if opts.done or nl < 0:
        return None
    below = cur.after[cur.after.find("\n"):] if "\n" in cur.after else ""  # from the cursor line's end
    targets = [below] + (["\n" + below.lstrip("\n")] if below.startswith("\n\n") else [])
    rest = text[nl:]
    if any(t.strip() and t.startswith(rest) and len(rest) >= _foreseen_need(t) for t in targets):
        return first_line_only(text[:nl], cur, opts)
    return None


def left_the_hole(text: str, cur: CursorText, opts: CutOptions) -> Shown | None:
    """Offers the first line at once when a later line has left the block the hole is in (code less
    indented than both the hole's first line and the code below the cursor: a test script after the
    function, the next top-level definition): the middle cannot rejoin that code any more, and a
    middle that does not rejoin keeps only its first line."""
    lines = text.split("\n")
    if opts.done or len(lines) < 2 or not lines[0].strip():
        return None
    following = following_line(cur.line_after, cur.after)
    if following is None:
        return None
    level = min(indent_of(cur.line_before + lines[0]), indent_of(following))
    if any(line.strip() and indent_of(line) < level for line in lines[1:]):
        return first_line_only(text, cur, opts)
    return None


def may_still_rejoin(text: str, cur: CursorText, opts: CutOptions) -> Shown | None:
    """Waits (nothing yet, not final) while a short streaming middle re-types no line below."""
    if not opts.done and len(text.split("\n")) <= SYNC_HORIZON_LINES + 1 and not _retyped(text, cur, opts):
        return Shown("", False)
    return None


def first_line_only(text: str, cur: CursorText, opts: CutOptions) -> Shown:
    """A middle that never rejoins is trimmed to its first line; dropped if that line is empty or
    repeats the code that follows."""
    first = text.split("\n")[0]
    if not first.strip() or _repeats_following(first, cur):
        return Shown("", True)
    if not cur.line_before.strip() and cur.line_after.strip():
        return Shown(first + "\n", True)  # a new line above the existing code
    if not opts.braces:
        return Shown(_without_doubled_closers(first, cur.line_after), True)
    return Shown(without_retyped_end(first, cur.line_after, opts.lexis), True)


def _without_doubled_closers(text: str, line_after: str) -> str:
    """Python's (and other non-brace languages') trim of a re-typed rest of the line, as measured."""
    rest = line_after.strip()
    if rest and text.rstrip().endswith(rest):
        return text.rstrip()[: len(text.rstrip()) - len(rest)]
    return text


def retyped_line_end(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims the end of a final middle that re-types the rest of the cursor line (`;` before `;`)."""
    return Shown(without_retyped_end(shown.text, cur.line_after, opts.lexis), True) if shown.final and opts.braces else shown


def header_without_body(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Drops a final middle whose last line opens a block (`...:`) with no deeper code after it: in
    an indentation language that is a syntax error, and the model meant a body it did not write."""
    if shown.final and _header_without_body(shown.text, cur):
        return Shown("", True)
    return shown


def _header_without_body(middle: str, cur: CursorText) -> bool:
    if not middle.strip():
        return False
    ends_line = middle.endswith("\n") or not cur.line_after.strip()
    if not ends_line:
        return False
    body = middle.rstrip("\n")
    last = body.split("\n")[-1] if "\n" in body else cur.line_before + body
    if not last.rstrip().endswith(":"):
        return False
    nxt = cur.line_after if middle.endswith("\n") and cur.line_after.strip() else following_line("", cur.after)
    return nxt is not None and indent_of(nxt) <= indent_of(last)
