"""Snippets from other open documents that look like the code around the cursor.

Copilot-style "neighbouring tabs": slide a window over each recently used document,
score it by Jaccard similarity of identifiers against the lines above the cursor's line,
keep the best within the budget. Window token sets are cached per document version so a
keystroke costs only set intersections; the cursor's own line is left out of the query so that
typing along it never changes the snippets (they come before the prefix: the prompt cache holds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..providers.base import Snippet

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
WINDOW_LINES = 20
STRIDE = 10
MAX_DOCS = 12
MAX_LINES_SCANNED = 4000


@dataclass
class _DocWindows:
    version: object
    windows: list[tuple[str, frozenset[str]]] = field(default_factory=list)


class NeighborIndex:
    def __init__(self) -> None:
        self._cache: dict[str, _DocWindows] = {}

    def forget(self, uri: str) -> None:
        self._cache.pop(uri, None)

    def _windows(self, uri: str, version: object, text: str) -> list[tuple[str, frozenset[str]]]:
        cached = self._cache.get(uri)
        if cached is not None and cached.version == version:
            return cached.windows
        lines = text.splitlines()[:MAX_LINES_SCANNED]
        windows = []
        for start in range(0, max(len(lines) - WINDOW_LINES, 0) + 1, STRIDE):
            chunk = "\n".join(lines[start : start + WINDOW_LINES])
            idents = frozenset(_IDENT.findall(chunk))
            if idents:
                windows.append((chunk, idents))
        self._cache[uri] = _DocWindows(version, windows)
        return windows

    def snippets(
        self,
        query_text: str,
        candidates: list[tuple[str, str, object, str]],  # (uri, path, version, text), most recent first
        budget_chars: int,
    ) -> tuple[Snippet, ...]:
        above = query_text[: query_text.rfind("\n") + 1]  # whole lines: not the one being typed
        query = frozenset(_IDENT.findall("\n".join(above.splitlines()[-WINDOW_LINES:])))
        if not query or budget_chars <= 0:
            return ()
        scored: list[tuple[float, str, str]] = []
        for uri, path, version, text in candidates[:MAX_DOCS]:
            best, best_chunk = 0.0, ""
            for chunk, idents in self._windows(uri, version, text):
                inter = len(query & idents)
                if inter:
                    score = inter / len(query | idents)
                    if score > best:
                        best, best_chunk = score, chunk
            if best > 0.05:
                scored.append((best, path, best_chunk))
        scored.sort(key=lambda item: item[0], reverse=True)
        out, used = [], 0
        for _, path, chunk in scored:
            if used + len(chunk) > budget_chars:
                continue
            out.append(Snippet(path=path, text=chunk))
            used += len(chunk)
        return tuple(out)
