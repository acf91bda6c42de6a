"""Stages that undo what a chat model wraps its answer in, or indentation it lost count of, before any cut."""

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


def surplus_indent(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Brace languages: trims the extra indentation of the first line after indentation the user
    (or the editor, after Enter) typed, when the answer's own next line of code sits at the
    cursor's level (or it has one line): the model lost count, it did not mean a deeper line."""
    lb, text = cur.line_before, shown.text
    if not (opts.braces and lb and not lb.strip() and text[:1] in (" ", "\t")):
        return shown
    first, _, rest = text.partition("\n")
    if not first.strip():
        return shown
    later = [ln for ln in rest.split("\n")[: -1 if not opts.done else None] if ln.strip()]
    level = len(lb.expandtabs(4))
    confirmed = (not later and not opts.multiline) or (later and len(later[0].expandtabs(4)) - len(
        later[0].expandtabs(4).lstrip()) == level)
    if not confirmed:
        return shown
    return Shown(first.lstrip() + text[len(first):], shown.final)

