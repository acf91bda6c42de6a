"""Repository context for a completion: the outlines of the names the current file imports from the
user's own code, found without the user opening anything. Imports are resolved in a worker thread
(when the file opens or its imports change), never on the keystroke path; a request selects from
what is resolved: names not yet used above the cursor first, then the rest, within budget, laid out
in import order so the prompt prefix stays byte-identical while the user types.
Why: docs/design-notes.md#pyserverkestrelcontextrepositorypy
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..providers.base import Snippet
from .python_outline import ImportedName, import_statements, imported_names
from .ts_outline import TS_SUFFIXES, import_statements_ts, imported_names_ts
from .workspace_index import Located, WorkspaceIndex

log = logging.getLogger(__name__)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MAX_MODULE_ATTRS = 6  # definitions taken from one imported module (`utils.x`, `utils.y`)
STICKY_CHARS = 2000  # a choice of definitions is kept while the cursor stays this close to where it was made
NEAR_AFTER_CHARS = 4000  # how far below the cursor a name's next use counts as near


@dataclass(frozen=True)
class Resolved:
    """One imported name, resolved in the workspace."""

    imported: ImportedName
    definition: Located | None  # a function, class or constant
    module: Path | None  # the name is a module of the workspace (`from . import utils`)


@dataclass(frozen=True)
class ContextReport:
    """What the last prompt was given, for the log and the status (a user can see what was sent)."""

    path: str
    definitions: tuple[tuple[str, str], ...]  # (defining file, name)
    chars: int
    resolved: int  # imported names found in the workspace


def _resolve(index: WorkspaceIndex, importer: Path, names: tuple[ImportedName, ...]) -> tuple[Resolved, ...]:
    out = []
    for imp in names:
        if imp.name is None:  # `import pkg.mod [as m]`: a module
            target = index.resolve_module(importer, imp.level, imp.module)
            if target is not None:
                index.outline(target)
                out.append(Resolved(imp, None, target))
            continue
        module_file = index.resolve_module(importer, imp.level, imp.module)
        if module_file is None:
            continue
        sub = index.submodule(module_file, imp.name)
        if sub is not None:
            index.outline(sub)
            out.append(Resolved(imp, None, sub))
            continue
        found = index.definition(module_file, imp.name)
        if found is not None:
            out.append(Resolved(imp, found, None))
    return tuple(out)


@dataclass(frozen=True)
class _Pending:
    imports: str  # the file's import statements when the resolution started
    generation: int  # the index's generation then (a saved file or new exclusions make it stale)
    future: asyncio.Future  # of tuple[Resolved, ...]
    statements: Callable[[str], list[str]]  # the file language's import-statement finder
    # The last resolution of the same document under the same index generation, used while this one
    # runs: typing an import line changes the imports on every keystroke, and no keystroke should wait.
    previous: tuple[Resolved, ...] | None = None

    def result(self) -> tuple[Resolved, ...] | None:
        f = self.future
        return f.result() if f.done() and not f.cancelled() and f.exception() is None else self.previous


def _imports_of(path: Path) -> tuple[Callable[[str], list[str]], Callable[[str], tuple[ImportedName, ...]]]:
    if path.suffix in TS_SUFFIXES:
        return import_statements_ts, imported_names_ts
    return import_statements, imported_names


class RepositoryContext:
    def __init__(self, index: WorkspaceIndex) -> None:
        self.index = index
        self._pending: dict[str, _Pending] = {}
        self._versions: dict[str, object] = {}  # uri -> the document version `prepare` last saw
        # uri -> (the resolution, budget, cursor offset, what was chosen): see `snippets`
        self._chosen: dict[str, tuple[tuple[Resolved, ...], int, int | None, list[tuple[Located, str]]]] = {}
        self.last: ContextReport | None = None

    def forget(self, uri: str) -> None:
        self._versions.pop(uri, None)
        self._chosen.pop(uri, None)
        entry = self._pending.pop(uri, None)
        if entry is not None:
            entry.future.cancel()

    def prepare(self, uri: str, path: Path | None, text: str, version: object = None) -> None:
        """Start resolving the document's imports unless the same imports are resolved or in flight
        (a new version costs one scan for `import`: 0.5 ms on a 220 KB module)."""
        entry = self._pending.get(uri)
        fresh = entry is not None and entry.generation == self.index.generation
        if version is not None and self._versions.get(uri) == version and fresh:
            return
        self._versions[uri] = version
        if path is None or self.index.root_of(path) is None:
            return
        statements, names = _imports_of(path)
        key = "\n".join(statements(text))
        if fresh and entry.imports == key:
            return
        previous = entry.result() if fresh else None  # never across a generation: exclusions may have changed
        if entry is not None:
            entry.future.cancel()
        future = asyncio.ensure_future(asyncio.to_thread(_resolve, self.index, path, names(key)))
        future.add_done_callback(_log_failure)
        self._pending[uri] = _Pending(key, self.index.generation, future, statements, previous)

    async def ready(self, uri: str, path: Path | None, text: str, version: object, wait_s: float) -> None:
        """Prepare, and wait at most `wait_s` for the resolution (it goes on in the background) when
        there is no earlier one of this document to use meanwhile."""
        self.prepare(uri, path, text, version)
        entry = self._pending.get(uri)
        if entry is None or entry.future.done() or entry.previous is not None or wait_s <= 0:
            return
        try:  # shield: a request that stops waiting leaves the resolution running for the next one
            await asyncio.wait_for(asyncio.shield(entry.future), wait_s)
        except asyncio.TimeoutError:
            pass

    def snippets(self, uri: str, shown_path: str, window_before: str, budget_chars: int,
                 cursor: int | None = None, after: str = "") -> tuple[Snippet, ...]:
        """The definitions to put before the file in the prompt (import order, grouped by file); while
        the document's imports are being resolved again, the earlier resolution's; () before any.
        `cursor` (its offset in the document): near where the last choice was made, with the same
        resolution and budget, the same choice is kept, so the prompt's start does not change while a
        line is typed (typing a name's first use would otherwise re-rank, and re-send, the context).
        `after`: the text after the cursor (names used soon below it come first)."""
        entry = self._pending.get(uri)
        resolved = None if entry is None or entry.generation != self.index.generation else entry.result()
        if budget_chars <= 0 or resolved is None:
            self.last = ContextReport(shown_path, (), 0, 0)  # this prompt went without
            return ()
        kept = self._chosen.get(uri)
        if (kept is not None and kept[0] is resolved and kept[1] == budget_chars and cursor is not None
                and kept[2] is not None and abs(cursor - kept[2]) <= STICKY_CHARS):
            chosen = kept[3]
        else:
            chosen = self._select(resolved, entry.statements, window_before, after[:NEAR_AFTER_CHARS], budget_chars)
            self._chosen[uri] = (resolved, budget_chars, cursor, chosen)
        self.last = ContextReport(shown_path, tuple((f.path, f.name) for f, _ in chosen),
                                  sum(len(t) for _, t in chosen), len(resolved))
        by_file: dict[str, list[str]] = {}
        for found, text in chosen:
            by_file.setdefault(found.path, []).append(text)
        return tuple(Snippet(path=p, text="\n\n".join(texts)) for p, texts in by_file.items())

    def _select(self, resolved: tuple[Resolved, ...], statements: Callable[[str], list[str]], window_before: str,
                after: str, budget: int) -> list[tuple[Located, str]]:
        """(definition, its text in the prompt: outline or header) in prompt order (import order),
        within budget. Names not yet used above the cursor come first, the ones used soonest below
        it (`after`) before the rest: each gets its one-line header, then as many as fit get their
        whole outline (in that priority order, then import order); names already used follow, whole
        or not at all."""
        for statement in statements(window_before):
            window_before = window_before.replace(statement, "")
        used = set(_IDENT.findall(window_before))
        attrs_read = {u for u in used if "." in u}
        below: dict[str, int] = {}  # a name -> where it is next read below the cursor
        for match in _IDENT.finditer(after):
            below.setdefault(match.group(0).split(".")[0], match.start())
        never = len(after) + 1
        candidates: list[tuple[int, int, int, Located]] = []  # (priority, distance below, import order, definition)
        for order, item in enumerate(resolved):
            bound = item.imported.bound
            if item.definition is not None:
                first_use = not any(u == bound or u.startswith(bound + ".") for u in used)
                candidates.append((0, below.get(bound, never), order, item.definition) if first_use
                                  else (1, 0, order, item.definition))
            elif item.module is not None:  # the attributes the code above reads from it (`utils.x`)
                attrs = {u[len(bound) + 1 :].split(".")[0] for u in attrs_read if u.startswith(bound + ".")}
                for attr in sorted(attrs)[:MAX_MODULE_ATTRS]:
                    found = self.index.definition(item.module, attr)
                    if found is not None:
                        candidates.append((1, 0, order, found))
        candidates.sort(key=lambda c: c[:3])
        chosen: dict[tuple[str, str], tuple[int, Located, str]] = {}
        left = budget
        for priority, _, order, found in candidates:  # pass 1: a header for every first use
            key = (found.path, found.name)
            if priority == 0 and key not in chosen and len(found.header) + 2 <= left:
                chosen[key] = (order, found, found.header)
                left -= len(found.header) + 2
        for _, _, order, found in candidates:  # pass 2: whole outlines while they fit
            key = (found.path, found.name)
            have = chosen[key][2] if key in chosen else ""
            if have == found.text:
                continue
            cost = len(found.text) - len(have) + (0 if have else 2)
            if cost <= left:
                chosen[key] = (order, found, found.text)
                left -= cost
        ordered = sorted(chosen.values(), key=lambda c: c[0])  # prompt order: import order
        return [(found, text) for _, found, text in ordered]


def _log_failure(future: asyncio.Future) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("repository context: resolving imports failed: %r", future.exception())
