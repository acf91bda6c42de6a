"""Language guards: checks that hold back a suggestion the code around it cannot take.

A guard is registered for a languageId by its own module in this package (python.py); adding a
language adds a module. A language without a guard takes every suggestion.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
from typing import Protocol

from ...context.window import CursorText
from ..cuts.base import BRACE_LANGUAGES, Shown

log = logging.getLogger("kestrel.completion.guards")


class LanguageGuard(Protocol):
    def refuses(self, before: str, text: str, after: str) -> str | None:
        """Why `text` cannot go between `before` and `after` (None: it can)."""
        ...


_GUARDS: dict[str, LanguageGuard] = {}
_loaded = False


def register(language: str, guard: LanguageGuard) -> None:
    _GUARDS[language] = guard


def guard_for(language: str) -> LanguageGuard | None:
    global _loaded
    if not _loaded:
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
        _loaded = True
    return _GUARDS.get(language)


def refusal(cur: CursorText, text: str, language: str) -> str | None:
    guard = guard_for(language)
    return None if guard is None else guard.refuses(cur.before, text, cur.after)


def fit(cur: CursorText, shown: Shown, language: str, open_indent: str | None) -> Shown:
    """A final answer the language's guard refuses falls back to its first line if the guard takes
    that (as a single-line answer would have been); else nothing beats broken code."""
    why = refusal(cur, shown.text, language)
    if why is None:
        return shown
    first = _first_line(shown.text, open_indent)
    if first and language in BRACE_LANGUAGES and _header_without_body(first):
        log.debug("guard %s: %s; its first line %r opens a body it does not hold: dropped", language, why, first[:60])
        return Shown("", True)
    rest = _without_echoed_tail(cur.line_before, shown.text)
    if rest and refusal(cur, rest, language) is None:
        log.debug("guard %s: %s; trimmed to %r (it re-typed the end of the line before the cursor)", language, why, rest[:60])
        return Shown(rest, True)
    if first and refusal(cur, first, language) is None:
        log.debug("guard %s: %s; trimmed to its first line", language, why)
        return Shown(first, True)
    head = _without_opened_body(shown.text) if language in BRACE_LANGUAGES else ""
    if head and not _header_without_body(cur.line_before + head) and refusal(cur, head, language) is None:
        log.debug("guard %s: %s; trimmed to %r (a body opened where the code takes none)", language, why, head[:60])
        return Shown(head, True)
    log.debug("guard %s: %s; dropped %r", language, why, shown.text[:60])
    return Shown("", True)


def _without_opened_body(text: str) -> str:
    """A one-line suggestion that ends by opening a body (`… error {`), without that brace: the model
    took a declaration (an interface method, a prototype) for a definition. '' when it does not."""
    code = text.rstrip()
    if "\n" in code or not code.endswith("{") or code.endswith(("${", "#{")):
        return ""
    return code[:-1].rstrip()


# A control header whose body is on later lines: `if (x)`, `} else`, `for (...)`, `while (x)`, `do`.
_CONTROL = re.compile(r"^\s*(?:\}\s*)?(?:if|else\s+if|for|foreach|while|switch|catch|else|do|try|finally)\b")


def _header_without_body(line: str) -> bool:
    """A brace-language line that only opens a body (`if (x) {`, or an Allman `for (...)`): alone,
    the code below would become that body (or the braces would no longer match), which parses but
    is not what the model meant."""
    code = line.split("\n", 1)[0].rstrip()
    if code.endswith("{"):
        return True
    if not _CONTROL.match(code) or code.endswith(";"):
        return False
    return code.endswith((")", "else", "do", "try", "finally"))


def _first_line(text: str, open_indent: str | None) -> str:
    """The first line of a multi-line suggestion ('' when it has one line or an empty first line);
    on a line opened above existing code it keeps the newline and indentation before that code."""
    if "\n" not in text.rstrip("\n") or not text.split("\n", 1)[0].strip():
        return ""
    first = text.split("\n", 1)[0]
    return first + "\n" + open_indent if open_indent is not None else first


_TAIL_WORDS = re.compile(r"[A-Za-z_$][\w$]*$")


def _without_echoed_tail(line_before: str, text: str) -> str:
    """`text` without a start that re-types the word the line before the cursor ends with (`let` +
    ` let x = 1;`: the model began the statement again). '' when it does not."""
    word = _TAIL_WORDS.search(line_before)
    if word is None:
        return ""
    body = text.lstrip(" \t")
    w = word.group()
    if not body.startswith(w) or (body[len(w):len(w) + 1].isalnum() or body[len(w):len(w) + 1] in "_$"):
        return ""
    rest = body[len(w):]
    return rest if rest.strip() else ""
