"""The open documents as the features see them: text, language, version, how recently each
was touched (for neighbour snippets), and the position encoding the client negotiated."""

from __future__ import annotations

import time
from typing import Any, Callable

from ..context.exclusion import is_excluded, uri_to_path

MAX_NEIGHBOR_CHARS = 1_000_000  # a neighbour larger than this is not worth scanning for snippets


class Documents:
    def __init__(self, server: Any) -> None:
        self._server = server
        self._recent: dict[str, float] = {}  # uri -> last edit/open time
        self._on_open: list[Callable[[str, str], None]] = []
        self._on_close: list[Callable[[str], None]] = []

    def subscribe(self, *, opened: Callable[[str, str], None] | None = None,
                  closed: Callable[[str], None] | None = None) -> None:
        if opened is not None:
            self._on_open.append(opened)
        if closed is not None:
            self._on_close.append(closed)

    # -- events from the client ----------------------------------------------------------
    def touched(self, uri: str) -> None:
        self._recent[uri] = time.monotonic()

    def opened(self, uri: str) -> None:
        self.touched(uri)
        doc = self.get(uri)
        if doc is not None:
            for listener in self._on_open:
                listener(uri, doc.source)

    def closed(self, uri: str) -> None:
        self._recent.pop(uri, None)
        for listener in self._on_close:
            listener(uri)

    # -- reading -------------------------------------------------------------------------
    def get(self, uri: str) -> Any:
        """pygls's TextDocument (`source`, `version`, `language_id`), or None if not open."""
        return self._server.workspace.text_documents.get(uri)

    def text(self, uri: str) -> str | None:
        doc = self.get(uri)
        return None if doc is None else doc.source

    def count(self) -> int:
        return len(self._server.workspace.text_documents)

    def path(self, uri: str) -> str:
        """The file's path as the model sees it: relative to the workspace folder that holds it
        (never the user's absolute path, which may go to a remote model), else its file name."""
        path = uri_to_path(uri)
        workspace = self._server.workspace
        roots = [uri_to_path(f.uri) for f in (getattr(workspace, "folders", None) or {}).values()]
        if getattr(workspace, "root_path", None):
            roots.append(workspace.root_path)
        for root in sorted(filter(None, roots), key=len, reverse=True):
            root = root.rstrip("/") + "/"
            if path.startswith(root):
                return path[len(root):]
        return path.rsplit("/", 1)[-1]

    def encoding(self) -> str:
        """The position encoding negotiated at `initialize` (UTF-16 unless the client chose another)."""
        return str(self._server.server_capabilities.position_encoding or "utf-16")

    def neighbor_candidates(self, uri: str, language: str, exclude_globs: tuple[str, ...]) -> list[tuple[str, str, object, str]]:
        """Other open documents as (uri, path, version, text): same language first, then most recent."""
        docs = self._server.workspace.text_documents
        ordered = sorted(self._recent, key=self._recent.__getitem__, reverse=True)
        out = []
        for other in ordered:
            doc = docs.get(other)
            if other == uri or doc is None or is_excluded(other, exclude_globs):
                continue
            if len(doc.source) > MAX_NEIGHBOR_CHARS:
                continue
            same_language = (doc.language_id or "") == language
            out.append((0 if same_language else 1, other, self.path(other), doc.version, doc.source))
        out.sort(key=lambda item: item[0])  # stable: same language first, then most recent
        return [item[1:] for item in out]
