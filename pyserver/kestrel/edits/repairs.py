"""Repairs the diagnostics themselves spell out (Python), tried without a model.

- A missing token the parser names ("expected ':'", "'(' was never closed"): put where the parser
  stopped or at the end of a line near it.
- An undefined name close to a name the file binds or a builtin (Python's "Did you mean"): the
  reads on the diagnostic's lines are renamed.
Each is only a candidate, offered once it parses and the linter holds nothing against it (`quick_fix.why_not`).
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Iterator

from ..context.python_names import BUILTINS, bindings
from .validate import parse_error

_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_EXPECTED = re.compile(r"expected [`'\"]([:)\]}])[`'\"]", re.I)
_NEVER_CLOSED = re.compile(r"[`'\"]([(\[{])[`'\"] was never closed")
NEARBY_LINES = 3  # how far below the reported line a missing token may belong


def _insert_at(text: str, lines: list[str], row: int, col: int, token: str) -> str:
    offset = sum(len(line) + 1 for line in lines[:row]) + col
    return text[:offset] + token + text[offset:]


def missing_token(text: str, problem_line: int, message: str, language: str) -> Iterator[str]:
    """Texts with one missing token inserted, nearest to where it was reported first; only those
    that parse."""
    error = parse_error(text, language) if language == "python" else None  # Python's messages name the token
    if error is None:
        return
    said = f"{message}\n{error.msg}"
    tokens = list(dict.fromkeys(_EXPECTED.findall(said) + [_CLOSERS[o] for o in _NEVER_CLOSED.findall(said)]))
    if not tokens:
        return
    lines = text.split("\n")
    places: list[tuple[int, int]] = []
    if error.lineno and error.offset and error.lineno <= len(lines):
        places.append((error.lineno - 1, min(error.offset - 1, len(lines[error.lineno - 1]))))
    rows = [r for first in (error.lineno and error.lineno - 1, problem_line) if first is not None
            for r in range(max(first - 1, 0), min(first + NEARBY_LINES, len(lines)))]
    for row in dict.fromkeys(rows):
        code = lines[row].rstrip()
        if code.strip() and not code.lstrip().startswith("#"):
            places.append((row, len(code)))
    seen = set()
    for row, col in places:
        for token in tokens:
            candidate = _insert_at(text, lines, row, col, token)
            if candidate not in seen and parse_error(candidate, language) is None:
                seen.add(candidate)
                yield candidate


def similar_name(text: str, first_line: int, last_line: int, name: str, language: str) -> Iterator[str]:
    """Texts with `name` read on the diagnostic's lines renamed to a similar name the file binds
    (or a builtin), the most similar first."""
    if language != "python" or not name:
        return
    try:
        sites = bindings(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    if sites is None:
        return
    known = [n for n in sites if n != name] + [n for n in sorted(BUILTINS) if not n.startswith("_") and n not in sites]
    lines = text.split("\n")
    word = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    for other in difflib.get_close_matches(name, known, n=3, cutoff=0.6):
        changed = [word.sub(other, line) if first_line <= i <= last_line else line for i, line in enumerate(lines)]
        if changed != lines:
            yield "\n".join(changed)
