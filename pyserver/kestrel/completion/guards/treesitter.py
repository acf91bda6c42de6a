"""Brace languages (TS, TSX, JS, Go, Rust, Java, C, C++, C#): a tree-sitter syntax guard.

The region around the cursor (brace_window.py) is parsed without and with the suggestion; it is
refused when it adds an ERROR or MISSING node at or before the first error the person's code
already has there (half-typed code elsewhere is not held against it); a window that may cut a
long statement has its refusal confirmed on the whole document (kept as a tree; 5 ms budget).
Python keeps its faster `ast` guard (python.py). No name check: implicit globals (JS), imports,
macros and generated names make "bound nowhere" unsafe without a compiler. No grammar: no guard.
"""

from __future__ import annotations

import importlib
import logging
import time
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
WHOLE_DOCUMENT_BYTES = 300_000  # a larger document keeps the window's verdict (its first parse: ~60 ms)
WHOLE_DOCUMENT_MS = 5.0  # the whole-document check's time budget; past it the window's verdict stands


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

    def __init__(self, language: str, whole_document_ms: float = WHOLE_DOCUMENT_MS) -> None:
        self.language = language
        # The whole-document check's time budget: a keystroke's guard must not wait for a slow parse,
        # but a judge (the eval's breaks-syntax score) must not give another verdict on a busy CPU.
        self.whole_document_ms = whole_document_ms
        self._parser: Any = None
        self._unavailable = False
        self._last: tuple[bytes, Any] | None = None  # the last whole document checked, and its tree

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
        # At column 0 the indentation cannot say which block the cursor is in: a C++ namespace or a
        # Rust macro body often leaves its contents unindented, and the window, cut by indentation,
        # sees them as top-level code. The whole document is then the judge too.
        at_top = not before[before.rfind("\n") + 1 :][:1].isspace()
        if (at_top or not (region.certain and _only_near(base, head, tail, cursor))) and \
                self._whole_document_takes(parser, before, inserted, after):
            return None
        where = "before it" if added.start < cursor else "where it goes" if added.start == cursor else "after it"
        return f"breaks the syntax ({added.kind} {where})"

    def _whole_document_takes(self, parser: Any, before: str, inserted: bytes, after: str) -> bool:
        """An uncertain window's refusal is checked on the whole document: the window may start or end
        inside a long statement (a struct literal, a type list over MAX_LINES) and see an error that
        is its own. The document's tree is kept and re-parsed incrementally; the parse with the
        suggestion over `whole_document_ms` (error recovery after a missing brace can take 100 ms)
        keeps the refusal."""
        head, tail = before.encode(*_ENCODING), after.encode(*_ENCODING)
        if len(head) + len(tail) > WHOLE_DOCUMENT_BYTES:
            return False
        tree = self._document_tree(parser, head + tail)
        deadline = time.perf_counter() + self.whole_document_ms / 1000
        cursor = len(head)
        edited = tree.copy()
        at = _point(head, cursor)
        edited.edit(start_byte=cursor, old_end_byte=cursor, new_end_byte=cursor + len(inserted),
                    start_point=at, old_end_point=at, new_end_point=_point(head + inserted, cursor + len(inserted)))
        new = _parse_by(parser, head + inserted + tail, edited, deadline)
        if new is None:
            return False
        base = errors(tree.root_node, cursor, 0)
        return added_error(base, errors(new.root_node, cursor, len(inserted)), cursor) is None

    def _document_tree(self, parser: Any, doc: bytes) -> Any:
        """The tree of `doc`, re-parsed from the last document's tree (the edit between them found by
        their common start and end, as an editor's didChange would give it). Not time-bounded: a
        document's first parse is paid once (≈2 ms per 1,000 lines), its edits are then cheap."""
        if self._last is not None and self._last[0] == doc:
            return self._last[1]
        old_tree = None
        if self._last is not None:
            old, old_tree = self._last
            start, old_end, new_end = _difference(old, doc)
            old_tree = old_tree.copy()
            old_tree.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end, start_point=_point(doc, start),
                          old_end_point=_point(old, old_end), new_end_point=_point(doc, new_end))
        tree = parser.parse(doc, old_tree) if old_tree is not None else parser.parse(doc)
        self._last = (doc, tree)
        return tree


def _only_near(base: set[ParseError], head: bytes, tail: bytes, cursor: int) -> bool:
    """Are all the errors of the window without the suggestion on the cursor's line? One elsewhere
    means the window starts or ends inside something it cut (a template string, a type list, a
    header like `}, {`), or the document is broken there: the whole document is then the judge."""
    line_start = head.rfind(b"\n") + 1
    line_end = cursor + (tail.find(b"\n") if b"\n" in tail else len(tail))
    return all(e.end >= line_start and e.start <= line_end for e in base)


_CHUNK = 4096


def _parse_by(parser: Any, text: bytes, old_tree: Any, deadline: float) -> Any:
    """`parser.parse(text, old_tree)`, or None when it is not done by `deadline` (the text is read
    in chunks; past the deadline the reader ends it early and the tree is thrown away)."""
    late = False

    def read(offset: int, _point: Any) -> bytes:
        nonlocal late
        if time.perf_counter() > deadline:
            late = True
            return b""
        return text[offset : offset + _CHUNK]

    tree = parser.parse(read, old_tree)
    return None if late or tree is None else tree


def _point(text: bytes, offset: int) -> tuple[int, int]:
    """(row, byte column) of `offset` in `text`."""
    row = text.count(b"\n", 0, offset)
    return row, offset - (text.rfind(b"\n", 0, offset) + 1)


def _difference(old: bytes, new: bytes) -> tuple[int, int, int]:
    """(start, end in old, end in new) of the one span where `old` and `new` differ."""
    limit = min(len(old), len(new))
    lo, hi = 0, limit  # the common start, by halving (each comparison is one memcmp)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    start = lo
    lo, hi = 0, limit - start  # the common end, not overlapping the start
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:] == new[len(new) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return start, len(old) - lo, len(new) - lo


for _language in GRAMMARS:
    register(_language, TreeSitterGuard(_language))
