"""The open documents as the features see them: text, language, version, how recently each
was touched (for neighbour snippets), and the position encoding the client negotiated.

A document larger than `MAX_DOCUMENT_CHARS` is set aside when it is opened or grows past the
limit: its text is dropped from memory at once (pygls would otherwise re-split it on every
keystroke) and no feature sees it (`get` answers None, `too_large` says why) until the editor
closes it; the LSP sync is incremental, so the server cannot know its text again before that."""

from __future__ import annotations

import time
from typing import Any, Callable
from urllib.parse import unquote

from ..context.exclusion import is_excluded, linked_to_excluded, uri_to_path

# One limit for every feature that reads a document (completion, edits, fixes, chat context):
# the size at which VS Code turns on its own large-file optimizations (20 MB). Without it an inline
# edit on a 219 MB document took 13 s and 1 GB. (Below it, an edit or fix on a Python file still
# compiles the whole file to check the result: ~2.4 GB at peak for 19 MB.)
MAX_DOCUMENT_CHARS = 20_000_000
MAX_NEIGHBOR_CHARS = 1_000_000  # a neighbour larger than this is not worth scanning for snippets


def too_large_message(what: str, chars: int) -> str:
    return (f"{what} is too large for Kestrel ({chars:,} characters; the limit is {MAX_DOCUMENT_CHARS:,}): "
            "Kestrel sends nothing from it")


class Documents:
    def __init__(self, server: Any) -> None:
        self._server = server
        self._recent: dict[str, float] = {}  # uri -> last edit/open time
        self._too_large: dict[str, int] = {}  # key -> its size in characters when it was set aside
        # key -> (the user's globs it was judged with, whether it links to an excluded file)
        self._links: dict[str, tuple[tuple[str, ...], bool]] = {}
        self._on_open: list[Callable[[str, str], None]] = []
        self._on_close: list[Callable[[str], None]] = []

    def subscribe(self, *, opened: Callable[[str, str], None] | None = None,
                  closed: Callable[[str], None] | None = None) -> None:
        if opened is not None:
            self._on_open.append(opened)
        if closed is not None:
            self._on_close.append(closed)

    @staticmethod
    def _key(uri: str) -> str:
        return unquote(uri)  # pygls files documents under the decoded URI (`c%3A` is `c:`)

    def _stored(self, uri: str) -> Any:
        return self._server.workspace.text_documents.get(self._key(uri))

    def _set_aside_if_too_large(self, uri: str) -> None:
        doc = self._stored(uri)
        if doc is None:
            return
        key = self._key(uri)
        size = len(doc._source or "")  # never `doc.source`: pygls reads a missing text from disk
        if key in self._too_large or size > MAX_DOCUMENT_CHARS:
            self._too_large.setdefault(key, size)
            doc._source = ""  # ("" and not None, for the same reason)

    # -- events from the client ----------------------------------------------------------
    def touched(self, uri: str) -> None:
        self._recent[uri] = time.monotonic()
        self._set_aside_if_too_large(uri)

    def recent(self, n: int = 10) -> list[str]:
        """The open documents the user edited or opened last, most recent first."""
        return sorted(self._recent, key=self._recent.__getitem__, reverse=True)[:n]

    def opened(self, uri: str) -> None:
        self._too_large.pop(self._key(uri), None)  # a new text: judged afresh
        self._links.pop(self._key(uri), None)  # and where it links to, too
        self.touched(uri)
        doc = self.get(uri)
        if doc is not None:
            for listener in self._on_open:
                listener(uri, doc.source)

    def saved(self, uri: str) -> None:
        self._links.pop(self._key(uri), None)  # a save may have replaced the file by a link

    def closed(self, uri: str) -> None:
        self._recent.pop(uri, None)
        self._too_large.pop(self._key(uri), None)
        self._links.pop(self._key(uri), None)
        for listener in self._on_close:
            listener(uri)

    # -- reading -------------------------------------------------------------------------
    def excluded(self, uri: str, exclude_globs: tuple[str, ...]) -> bool:
        """A secret or excluded file by its name, or a link to one (judged once per opening of an
        open document; any other URI each time it is asked about)."""
        if is_excluded(uri, exclude_globs):
            return True
        key = self._key(uri)
        known = self._links.get(key)
        if known is None or known[0] != exclude_globs:
            path = uri_to_path(uri) if uri.startswith("file:") else ""
            known = (exclude_globs, bool(path) and linked_to_excluded(path, exclude_globs))
            if self._stored(uri) is not None:  # kept only while open (closing forgets it): bounded
                self._links[key] = known
        return known[1]

    def get(self, uri: str) -> Any:
        """pygls's TextDocument (`source`, `version`, `language_id`), or None if it is not open
        or was set aside as too large (see `too_large`)."""
        if self._key(uri) in self._too_large:
            return None
        return self._stored(uri)

    def too_large(self, uri: str) -> str | None:
        """Why the document was set aside (a message for the user), or None."""
        size = self._too_large.get(self._key(uri))
        return None if size is None else too_large_message(self.path(uri), size)

    def text(self, uri: str) -> str | None:
        doc = self.get(uri)
        return None if doc is None else doc.source

    def open_documents(self) -> list[tuple[str, str]]:
        """(uri, text) of every open document that was not set aside."""
        return [(doc.uri, doc.source) for doc in list(self._server.workspace.text_documents.values())
                if self._key(doc.uri) not in self._too_large]

    def count(self) -> int:
        return len(self._server.workspace.text_documents)

    def path(self, uri: str) -> str:
        """The file's path as the model sees it: relative to the workspace folder that holds it
        (never the user's absolute path, which may go to a remote model), else its file name."""
        path = uri_to_path(uri)
        folder = self._folder(path)
        return path[len(folder[0]):] if folder else path.rsplit("/", 1)[-1]

    def repository(self, uri: str) -> str:
        """The name of the workspace folder that holds the file, as the editor names it ("" outside
        every folder): what a model family's repository format calls the repository."""
        folder = self._folder(uri_to_path(uri))
        if folder is None:
            return ""
        root, name = folder
        return " ".join((name or root.rstrip("/").rsplit("/", 1)[-1]).split())

    def _folders(self) -> list[tuple[str, str]]:
        """(root path, the editor's name for it or "") of every workspace folder."""
        workspace = self._server.workspace
        named = (getattr(workspace, "folders", None) or {}).values()
        folders = [(uri_to_path(f.uri), getattr(f, "name", "")) for f in named]
        if getattr(workspace, "root_path", None):
            folders.append((workspace.root_path, ""))
        return [f for f in folders if f[0]]

    def folder_paths(self) -> list[str]:
        return list(dict.fromkeys(root for root, _ in self._folders()))

    def _folder(self, path: str) -> tuple[str, str] | None:
        """(its root with a trailing `/`, the editor's name for it or "") of the innermost workspace
        folder holding `path`."""
        for root, name in sorted(self._folders(), key=lambda f: len(f[0]), reverse=True):
            root = root.rstrip("/") + "/"
            if path.startswith(root):
                return root, name
        return None

    def encoding(self) -> str:
        """The position encoding negotiated at `initialize` (UTF-16 unless the client chose another)."""
        return str(self._server.server_capabilities.position_encoding or "utf-16")

    def neighbor_candidates(self, uri: str, language: str, exclude_globs: tuple[str, ...]) -> list[tuple[str, str, object, str]]:
        """Other open documents as (uri, path, version, text): same language first, then most recent."""
        ordered = sorted(self._recent, key=self._recent.__getitem__, reverse=True)
        out = []
        for other in ordered:
            doc = self.get(other)
            if other == uri or doc is None or self.excluded(other, exclude_globs):
                continue
            if len(doc.source) > MAX_NEIGHBOR_CHARS:
                continue
            same_language = (doc.language_id or "") == language
            out.append((0 if same_language else 1, other, self.path(other), doc.version, doc.source))
        out.sort(key=lambda item: item[0])  # stable: same language first, then most recent
        return [item[1:] for item in out]
