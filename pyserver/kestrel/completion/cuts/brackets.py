"""Stages that tidy the end of a new block: trailing space, unbalanced brackets."""

from __future__ import annotations

from ...context.window import CursorText
from .base import CutOptions, Shown, bracket_depths


def trailing_space(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims whitespace at the end of the answer."""
    return Shown(shown.text.rstrip(), shown.final)


def unbalanced_end(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims a multi-line answer that was cut short to where its own brackets last balance."""
    if opts.multiline and shown.final and "\n" in shown.text:
        return Shown(trim_unbalanced(shown.text), shown.final)
    return shown


def trim_unbalanced(text: str) -> str:
    lines = text.split("\n")
    depth = 0
    last_balanced = None
    for i, line in enumerate(lines):
        depth, _ = bracket_depths(line, depth)
        if depth <= 0:
            last_balanced = i
    if depth <= 0 or last_balanced is None:
        return text
    return "\n".join(lines[: last_balanced + 1]).rstrip()


def finished(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """A finished stream's answer is final (trims nothing)."""
    return Shown(shown.text, shown.final or opts.done)
