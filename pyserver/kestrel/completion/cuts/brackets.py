"""Stages about brackets: a new block ends where its braces close the enclosing block, closers the
code after the cursor already has are not typed again, and a block cut short ends balanced; plus
trailing space. Brackets are counted outside strings and, per the language's `Lexis`, its line comments.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...context.window import CursorText
from .base import CutOptions, Lexis, Shown, bracket_depths

_LITERALS = re.compile(r'"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`|\'(?:\\.|[^\'\\\n])\'|//[^\n]*|/\*.*?\*/', re.S)


def trailing_space(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims whitespace at the end of the answer."""
    return Shown(shown.text.rstrip(), shown.final)


def surplus_closer(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims the answer before a closer (`}`, `)`, `]`) of a bracket opened before it that the code
    after the cursor closes already: a block ends where its braces close the enclosing one (final)."""
    k = surplus_cut(shown.text, cur, opts.lexis) if opts.braces else None
    return shown if k is None else Shown(shown.text[:k], True)


def surplus_cut(text: str, cur: CursorText, lexis: Lexis = Lexis()) -> int | None:
    """Where `text` closes a bracket opened before it that the document closes already (the closers
    the document lacks are allowed), moved back over a re-typed start of the rest of the line."""
    found = surplus_closers(text, lexis)
    if not found:
        return None
    # Per kind: `: T): T => {` lacks a `)` and has a `}` to spare; counted together they cancel out.
    allowed = dict(zip(")]}", missing_by_kind(cur.before, cur.after)))
    k = None
    for i in found:
        if allowed[text[i]] <= 0:
            k = i
            break
        allowed[text[i]] -= 1
    if k is None:
        return None
    rest = cur.line_after.lstrip()
    closing = surplus_closers(rest, lexis)
    if closing and text[: k + 1].endswith(rest[: closing[0] + 1]):
        k = k + 1 - (closing[0] + 1)  # `a, b, c);` before `, c);`: the middle ends at `b`
    return k


def surplus_closers(text: str, lexis: Lexis = Lexis()) -> list[int]:
    """Indexes in `text` of the closers that close a bracket opened before `text`, in order."""
    found: list[int] = []
    depth, offset = 0, 0
    for line in text.split("\n"):
        pos = 0
        while True:
            depth, i = bracket_depths(line[pos:], depth, lexis)
            if i is None:
                break
            found.append(offset + pos + i)
            pos, depth = pos + i + 1, 0
        offset += len(line) + 1
    return found


@lru_cache(maxsize=4)
def missing_by_kind(before: str, after: str) -> tuple[int, int, int]:
    """`(` minus `)`, `[` minus `]`, `{` minus `}` in the whole document (strings and comments
    left out): the closers of each kind an unfinished document lacks."""
    code = code_only(before + after)
    return tuple(code.count(o) - code.count(c) for o, c in ("()", "[]", "{}"))  # type: ignore[return-value]


def code_only(text: str) -> str:
    """`text` without its string and character literals and its `//` and `/* */` comments."""
    return _LITERALS.sub("", text)


def without_retyped_end(text: str, line_after: str, lexis: Lexis = Lexis()) -> str:
    """`text` without an end that re-types the rest of the cursor line, when that rest balances its
    own brackets (`;`, `= 5;`, `(x);`); a rest that closes a bracket is surplus_cut's part."""
    rest = line_after.strip()
    body = text.rstrip()
    if not rest or text.endswith("\n") or not body.endswith(rest):
        return text
    depth, surplus = bracket_depths(rest, 0, lexis)
    if depth != 0 or surplus is not None:
        return text
    return body[: len(body) - len(rest)]


def unbalanced_end(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims a multi-line answer that was cut short to where its own brackets last balance."""
    if opts.multiline and shown.final and "\n" in shown.text:
        return Shown(trim_unbalanced(shown.text, opts.lexis), shown.final)
    return shown


def trim_unbalanced(text: str, lexis: Lexis = Lexis()) -> str:
    lines = text.split("\n")
    depth = 0
    last_balanced = None
    for i, line in enumerate(lines):
        depth, _ = bracket_depths(line, depth, lexis)
        if depth <= 0:
            last_balanced = i
    if depth <= 0 or last_balanced is None:
        return text
    return "\n".join(lines[: last_balanced + 1]).rstrip()


def finished(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """A finished stream's answer is final (trims nothing)."""
    return Shown(shown.text, shown.final or opts.done)
