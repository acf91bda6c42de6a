"""Single-line or multi-line? Decided from the code around the cursor, before asking."""

from __future__ import annotations

_CLOSERS = set(")]}>\"'`;:,. \t")
_OPENERS = (":", "{", "(", "[", "=>", "->", "do", "then", "=")


def wants_multiline(line_before: str, line_after: str) -> bool:
    """Multi-line on an empty/indent-only line or right after a block opener; otherwise one line.

    Mid-line (real code after the cursor) is always single-line, like Copilot and Continue.
    """
    if line_after.strip() and not set(line_after) <= _CLOSERS:
        return False
    stripped = line_before.rstrip()
    if not stripped:
        return True
    return stripped.endswith(_OPENERS)


def opens_a_line(line_before: str, line_after: str) -> bool:
    """Only indentation before the cursor and code after it on the same line: what the person
    wants is a new line above that code (nothing typed yet can continue the code itself). The
    model is asked as if they had pressed Enter: with the code pushed to the next line it sees
    that a line is missing instead of a line to re-type."""
    return not line_before.strip() and bool(line_after.strip()) and not set(line_after) <= _CLOSERS


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
