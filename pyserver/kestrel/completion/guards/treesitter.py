"""Brace languages (TS, TSX, JS, Go, Rust, Java, C, C++, C#): a tree-sitter syntax guard.

The region around the cursor (brace_window.py) is parsed without and with the suggestion; it is
refused when it adds an ERROR or MISSING node at or before the first error the person's code
already has there (half-typed code elsewhere is not held against it). Python keeps its faster
`ast` guard (python.py). No name check: implicit globals (JS), imports, macros and type-only or
generated names make "bound nowhere" unsafe without a compiler. A missing grammar: no guard.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass, field
from typing import Any

from . import register
from .brace_window import window

log = logging.getLogger("kestrel.completion.guards")

# VS Code languageId -> (grammar wheel's module, its function returning the language)
GRAMMARS: dict[str, tuple[str, str]] = {
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "typescriptreact": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
    "javascriptreact": ("tree_sitter_javascript", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
}
_ENCODING = ("utf-8", "surrogatepass")


@dataclass(frozen=True, order=True)
class ParseError:
    start: int  # byte offset, in the code without the suggestion
    kind: str  # "ERROR", or "MISSING x" for a token the parser had to invent
    end: int = field(default=0, compare=False)  # not part of its identity: recovery may stretch it


def errors(root: Any, cursor: int, size: int) -> set[ParseError]:
    """The ERROR and MISSING nodes under `root`, placed in the code without the `size` bytes
    inserted at `cursor` (a node inside them is placed at the cursor). Only subtrees that hold an
    error are walked."""
    found: set[ParseError] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing or node.is_error:
            kind = "MISSING " + node.type if node.is_missing else "ERROR"
            found.add(ParseError(_placed(node.start_byte, cursor, size), kind, _placed(node.end_byte, cursor, size)))
        if node.has_error:
            stack.extend(node.children)
    return found


def _placed(offset: int, cursor: int, size: int) -> int:
    if offset <= cursor:
        return offset
    return cursor if offset < cursor + size else offset - size


def added_error(base: set[ParseError], new: set[ParseError], cursor: int) -> ParseError | None:
    """An error of `new` not in `base`, at or before the first error of `base` that reaches the
    cursor (None when every added error comes after the one the person's code already has)."""
    added = new - base
    if not added:
        return None
    first = min(added)
    standing = [max(e.start, cursor) for e in base if e.end >= cursor]
    return first if not standing or first.start <= min(standing) else None


class TreeSitterGuard:
    """The syntax guard for one languageId; the grammar is loaded on first use."""

    def __init__(self, language: str) -> None:
        self.language = language
        self._parser: Any = None
        self._unavailable = False

    def parser(self) -> Any:
        if self._parser is None and not self._unavailable:
            module, function = GRAMMARS[self.language]
            try:
                import tree_sitter

                grammar = getattr(importlib.import_module(module), function)()
                self._parser = tree_sitter.Parser(tree_sitter.Language(grammar))
            except (ImportError, AttributeError, ValueError, TypeError) as exc:
                log.warning("no syntax guard for %s: %s", self.language, exc)
                self._unavailable = True
        return self._parser

    def refuses(self, before: str, text: str, after: str) -> str | None:
        parser = self.parser()
        if parser is None or not text.strip():
            return None
        region = window(before, after)
        if region is None:
            return None
        head = region.head.encode(*_ENCODING)
        tail = region.tail.encode(*_ENCODING)
        inserted = text.encode(*_ENCODING)
        cursor = len(head)
        base = errors(parser.parse(head + tail).root_node, cursor, 0)
        new = errors(parser.parse(head + inserted + tail).root_node, cursor, len(inserted))
        added = added_error(base, new, cursor)
        if added is None:
            return None
        where = "before it" if added.start < cursor else "where it goes" if added.start == cursor else "after it"
        return f"breaks the syntax ({added.kind} {where})"


for _language in GRAMMARS:
    register(_language, TreeSitterGuard(_language))
