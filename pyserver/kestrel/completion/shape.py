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


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
