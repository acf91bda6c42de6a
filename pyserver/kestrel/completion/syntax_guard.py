"""Never show a suggestion that breaks the code's syntax (Python, checked without a toolchain).

Only the top-level statement around the cursor is compiled (usually one function: well under a
millisecond), without and with the suggestion. The suggestion is refused when it brings a syntax
error into a block that parsed, or a different error at or before the one the person's unfinished
code already has (half-typed code rarely parses, and is not held against the suggestion; a hole
whose empty body is the only error is the usual case).
"""

from __future__ import annotations

import ast
from functools import lru_cache

LANGUAGES = ("python",)
MAX_BLOCK_CHARS = 20_000  # a longer block is not checked (its cost would show in the latency)
_CONTINUATIONS = ("else", "elif", "except", "finally", ")", "]", "}", "#", "@")


@lru_cache(maxsize=4)
def parse(code: str) -> ast.Module | SyntaxError | None:
    """The block's syntax tree, its syntax error, or None when it cannot be checked. Cached: the
    syntax guard and the name guard look at the same block with the same suggestion."""
    try:
        return ast.parse(code)
    except SyntaxError as exc:
        return exc
    except (ValueError, OverflowError, RecursionError, MemoryError):
        return None


def _error(code: str) -> tuple[int, str] | None:
    tree = parse(code)
    return (tree.lineno or 0, tree.msg) if isinstance(tree, SyntaxError) else None


def _top(line: str) -> bool:
    """A line that starts a top-level statement (not a continuation of the one above)."""
    return bool(line.strip()) and not line[0].isspace() and not line.startswith(_CONTINUATIONS)


def block_start(before: str) -> int:
    """Index in `before` of the start of the top-level statement holding the cursor."""
    end = len(before)
    while True:
        start = before.rfind("\n", 0, end) + 1
        if start == 0 or (_top(before[start:end]) and start < len(before)):
            return start
        end = start - 1
        if end < 0:
            return 0


def block_end(after: str) -> int:
    """Index in `after` where the next top-level statement starts (the cursor line excluded)."""
    nl = after.find("\n")
    while nl >= 0:
        start = nl + 1
        nl = after.find("\n", start)
        line = after[start : nl if nl >= 0 else len(after)]
        if _top(line):
            return start
    return len(after)


def checked_block(before: str, text: str, after: str, language: str) -> tuple[int, int] | None:
    """(start in `before`, end in `after`) of the top-level statement around the cursor, or None
    when a suggestion there is not checked (another language, nothing to show, a block too long)."""
    if language not in LANGUAGES or not text.strip():
        return None
    start, end = block_start(before), block_end(after)
    if len(before) - start + len(text) + end > MAX_BLOCK_CHARS:
        return None
    return start, end


def breaks_syntax(before: str, text: str, after: str, language: str) -> bool:
    block = checked_block(before, text, after, language)
    if block is None:
        return False
    head, tail = before[block[0] :], after[: block[1]]
    new = _error(head + text + tail)
    if new is None:
        return False
    base = _error(head + tail)
    if base is None:
        return True
    cursor_line = head.count("\n") + 1
    shift = text.count("\n") if base[0] > cursor_line else 0
    moved = (base[0] + shift, base[1])
    return new != moved and new[0] <= moved[0]
