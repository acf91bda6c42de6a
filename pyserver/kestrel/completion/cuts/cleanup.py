"""Stages that undo what a chat model wraps its answer in, indentation it lost count of, or code it
re-typed from above the cursor, before any cut."""

from __future__ import annotations

import re

from ...context.window import CursorText
from .base import OPENERS, CutOptions, Shown, previous_line

_WORD = re.compile(r"\w")


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


def retyped_line_above(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """At a cursor after indentation: drops a first line that re-types the nearest line above the
    cursor (a small model restarting from the line it was shown), keeping what it wrote after it;
    when nothing else follows, or that line opens a block (what follows is the body of a block the
    code already opened), shows nothing. Only lines with a word in them count: a closer may rightly
    follow a closer. Real code repeats its previous line rarely (0.05-0.3 % of code lines in the
    eval's packages) and the small model re-types it often (4 % of its line answers in TypeScript,
    Go and Rust): docs/design-notes.md#pyserverkestrelcompletioncutscleanuppy"""
    lb, text = cur.line_before, shown.text
    if lb.strip() or ("\n" not in text and not opts.done):
        return shown  # mid-line (echoed_line's case), or the first line is not complete yet
    first, _, rest = text.partition("\n")
    above = previous_line(cur).strip()
    if not above or first.strip() != above or not _WORD.search(above):
        return shown
    if above.endswith(OPENERS) or not rest.strip() or not rest.startswith(lb):
        return Shown("", True) if opts.done or rest.strip() else Shown("", False)
    return Shown(rest[len(lb) :], shown.final)


def surplus_indent(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Brace languages: trims extra indentation the answer puts after indentation the user (or the
    editor, after Enter) typed, when its own next line of code says the model lost count: that line
    sits where the first line belongs without the extra (at the cursor's level, or one level deeper
    when the first line opens a block): the first line alone is trimmed; or that line sits the extra
    deeper too: the whole answer is moved left by it, up to the line that leaves that deeper level
    (past the answer's block). A single-line answer has its first line trimmed."""
    lb, text = cur.line_before, shown.text
    if not (opts.braces and lb and not lb.strip() and text[:1] in (" ", "\t")):
        return shown
    first, _, rest = text.partition("\n")
    if not first.strip():
        return shown
    later = [ln for ln in rest.split("\n")[: -1 if not opts.done else None] if ln.strip()]
    if not later:
        return Shown(first.lstrip() + text[len(first):], shown.final) if not opts.multiline else shown
    level = _width(lb)
    extra = first[: len(first) - len(first.lstrip(" \t"))]
    unit = _width(extra) if first.rstrip().endswith(("{", "(", "[")) else 0
    nxt = _indent(later[0])
    if nxt == level + unit or (nxt == level and later[0].lstrip()[:1] in ")]}"):
        return Shown(first.lstrip() + text[len(first):], shown.final)
    base = lb + extra
    if nxt != level + _width(extra) + unit or not later[0].startswith(base):
        return shown
    deep = level + _width(extra)
    lines = rest.split("\n")
    out = [first.lstrip(" \t")]
    for i, ln in enumerate(lines):
        if ln.strip() and _indent(ln) < deep:
            out.extend(lines[i:])  # past the answer's block: left as it is (the block cuts end it there)
            break
        out.append(lb + ln[len(base):] if ln.startswith(base) else ln)
    return Shown("\n".join(out), shown.final)


def _width(s: str) -> int:
    return len(s.expandtabs(4))


def _indent(line: str) -> int:
    return _width(line) - _width(line.lstrip(" \t"))
