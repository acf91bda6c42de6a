"""Stages that undo what a chat model wraps its answer in, before any cut."""

from __future__ import annotations

from ...context.window import CursorText
from .base import CutOptions, Shown


def strip_fences(text: str) -> str:
    if text.startswith("```"):
        nl = text.find("\n")
        text = "" if nl < 0 else text[nl + 1 :]
        end = text.find("```")
        if end >= 0:
            text = text[:end].rstrip("\n")
    return text


def fences(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims a Markdown code fence around the answer (chat models)."""
    return Shown(strip_fences(shown.text), shown.final) if shown.text.startswith("```") else shown


def echoed_line(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims the start of the answer when it repeats the code before the cursor on its line."""
    lb = cur.line_before
    if lb.strip() and shown.text.startswith(lb):
        return Shown(shown.text[len(lb) :], shown.final)
    return shown


def typed_indent(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims indentation the user already typed (only indentation before the cursor)."""
    lb = cur.line_before
    if lb and not lb.strip() and shown.text.startswith(lb):
        return Shown(shown.text[len(lb) :], shown.final)
    return shown
