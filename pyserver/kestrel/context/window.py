"""Prefix/suffix windows around the cursor, within a token budget.

Positions arrive in UTF-16 code units (the LSP default). The prefix window's start is
snapped to a coarse anchor so it stays byte-identical while the user types: that is what
lets llama.cpp's and hosted providers' prompt caches hit on every keystroke.
"""

from __future__ import annotations

from dataclasses import dataclass

CHARS_PER_TOKEN = 3.5  # code averages 3-4 characters per BPE token
ANCHOR = 1024  # the prefix start only moves in steps of this many characters


@dataclass(frozen=True)
class CursorText:
    """The document split at the cursor (full text, no budget applied)."""

    before: str  # everything before the cursor
    after: str  # everything after the cursor
    line_before: str  # the cursor line up to the cursor
    line_after: str  # the rest of the cursor line (no newline)


def _units(ch: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(ch.encode("utf-8", "surrogatepass"))
    return 2 if ord(ch) > 0xFFFF else 1


def column_to_index(line: str, character: int, encoding: str = "utf-16") -> int:
    """Index into `line` for an LSP column in the negotiated encoding, clamped to the line's end.

    A column that falls inside a surrogate pair (or a UTF-8 sequence) rounds up to the
    next whole character rather than splitting it.
    """
    if character <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return min(character, len(line))
    units = 0
    for i, ch in enumerate(line):
        if units >= character:
            return i
        units += _units(ch, encoding)
    return len(line)


def index_to_column(line: str, index: int, encoding: str = "utf-16") -> int:
    head = line[:index]
    if encoding == "utf-32" or head.isascii():
        return len(head)
    return sum(_units(ch, encoding) for ch in head)


def line_start_offset(text: str, line: int) -> int:
    """Offset of the start of `line` (clamped to the last line)."""
    pos = 0
    for _ in range(max(line, 0)):
        nl = text.find("\n", pos)
        if nl < 0:
            return pos
        pos = nl + 1
    return pos


def line_span(text: str, first_line: int, last_line: int) -> tuple[int, int]:
    """Offsets of the start of `first_line` and of the end of `last_line` (before its newline)."""
    start = line_start_offset(text, first_line)
    end = text.find("\n", line_start_offset(text, last_line))
    return start, len(text) if end < 0 else end


def offset_to_position(text: str, offset: int, encoding: str = "utf-16") -> dict[str, int]:
    """LSP position (JSON) of a string offset, in the negotiated column encoding."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", line_start)
    line_text = text[line_start : len(text) if line_end < 0 else line_end]
    return {"line": line, "character": index_to_column(line_text, offset - line_start, encoding)}


def split_at(text: str, line: int, character: int, encoding: str = "utf-16") -> CursorText:
    """Split `text` at an LSP position; positions past a line or the file are clamped."""
    start = line_start_offset(text, line)
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    line_text = text[start:end]
    if line_text.endswith("\r"):
        line_text = line_text[:-1]
    col = column_to_index(line_text, character, encoding)
    offset = start + col
    return CursorText(
        before=text[:offset], after=text[offset:], line_before=line_text[:col], line_after=line_text[col:]
    )


def prefix_window(before: str, budget_tokens: int) -> str:
    """The tail of `before` within budget, starting on a line boundary at a stable anchor."""
    budget = int(budget_tokens * CHARS_PER_TOKEN)
    if len(before) <= budget:
        return before
    start = len(before) - budget
    start = -(-start // ANCHOR) * ANCHOR  # round up to the anchor
    nl = before.find("\n", start)
    return before[nl + 1 :] if 0 <= nl < len(before) - 1 else before[start:]


def suffix_window(after: str, budget_tokens: int) -> str:
    budget = int(budget_tokens * CHARS_PER_TOKEN)
    if len(after) <= budget:
        return after
    cut = after.rfind("\n", 0, budget)
    return after[: cut + 1] if cut > 0 else after[:budget]
