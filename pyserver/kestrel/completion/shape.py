"""Single-line or multi-line? Decided from the code around the cursor, before asking."""

from __future__ import annotations

_CLOSERS = set(")]}>\"'`;:,. \t")
_OPENERS = ("{", "(", "[", "=>", "do", "then", "=")
# A line ending in `:` opens a block only when it is a header (Python's compound statements, a
# `case`/`default` label); `name: ` is an annotation or a dict key, and `-> ` a return type: the rest
# of that line is what is missing, not a block.
_HEADER_WORDS = frozenset({"if", "elif", "else", "for", "while", "with", "try", "except", "finally", "def", "class",
                           "async", "match", "case", "default"})


def opens_block(stripped: str) -> bool:
    if stripped.endswith(":"):  # a header: its keyword first, its brackets closed (`def f(x: ` is not)
        balanced = sum(stripped.count(c) for c in "([{") == sum(stripped.count(c) for c in ")]}")
        return balanced and stripped.split(None, 1)[0].rstrip(":") in _HEADER_WORDS
    return stripped.endswith(_OPENERS)


def wants_multiline(line_before: str, line_after: str, next_line: str | None = None) -> bool:
    """Multi-line on an empty/indent-only line or right after a block opener; otherwise one line.

    Mid-line (real code after the cursor) is always single-line, like Copilot and Continue. So is
    the end of a line whose block already has its body (`next_line`, the document's line after the
    cursor's, is indented deeper): what is missing is the rest of that line, not a new body.
    """
    if line_after.strip() and not set(line_after) <= _CLOSERS:
        return False
    stripped = line_before.rstrip()
    if not stripped:
        return True
    if next_line is not None and next_line.strip() and indent_of(next_line) > indent_of(line_before):
        return False
    return opens_block(stripped)


def opens_a_line(line_before: str, line_after: str) -> bool:
    """Only indentation before the cursor and code after it on the same line: what the person
    wants is a new line above that code (nothing typed yet can continue the code itself). The
    model is asked as if they had pressed Enter: with the code pushed to the next line it sees
    that a line is missing instead of a line to re-type."""
    return not line_before.strip() and bool(line_after.strip()) and not set(line_after) <= _CLOSERS


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
