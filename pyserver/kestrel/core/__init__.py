"""The small core every feature receives: status, the model host (settings + the active
provider), the open documents, and the shared turn streamer (chat answers and inline edits
stream and steer through the same one)."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types

from .. import redact
from ..chat.engine import ChatEngine
from ..context.exclusion import uri_to_path
from ..context.codebase_index import CodebaseIndex
from ..context.workspace_index import INDEXED_SUFFIXES, WorkspaceIndex
from ..local import cache as local_cache
from ..local.models import cache_dir as models_cache_dir
from ..status import StatusReporter
from .documents import Documents
from .model_host import ModelHost
from .payload import plain

__all__ = ["Core", "plain"]

log = logging.getLogger(__name__)
MAX_WATCHED_BATCH = 50  # more files changed at once than this: re-walk the folders instead of one by one


class Core:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.status = StatusReporter(self.notify, self._show_message)
        self.host = ModelHost(server, self.status)
        self.documents = Documents(server)
        self.chat_engine = ChatEngine(self.notify)  # streams, steers and stops chat turns and inline edits
        self.workspace = WorkspaceIndex(self._open_text)  # the user's code, outlined (completion context)
        self.codebase = CodebaseIndex(self.workspace, lambda: private_cache("index"))  # the user's code, searchable (chat)
        self._scan_stop = threading.Event()
        self._scan: asyncio.Future | None = None
        self._rescan = False  # the folders changed during a scan: scan again when it ends
        self.host.subscribe(self._settings_changed)

    # -- the workspace ---------------------------------------------------------------------
    def _open_text(self, path: Path) -> tuple[object, str] | None:
        doc = self.documents.get(path.as_uri())
        return None if doc is None else (doc.version, doc.source)

    def workspace_opened(self, params: types.InitializeParams) -> None:
        folders = [uri_to_path(f.uri) for f in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [uri_to_path(params.root_uri)]
        elif not folders and params.root_path:
            folders = [params.root_path]
        self.workspace.set_roots(folders)

    def workspace_folders_changed(self) -> None:
        """`workspace/didChangeWorkspaceFolders` (pygls has updated its folders): index the new set."""
        folders = getattr(self.server.workspace, "folders", None) or {}
        self.workspace.set_roots([uri_to_path(f.uri) for f in folders.values()])
        self._scan_workspace()

    def file_saved(self, uri: str) -> None:
        self.files_changed([uri])

    def watch_files(self) -> None:
        """Ask the client to report files created, changed and deleted outside the editor (a
        `git checkout`, a generator), when it can register the watcher dynamically."""
        workspace = getattr(self.server.client_capabilities, "workspace", None)
        watched = getattr(workspace, "did_change_watched_files", None)
        if not getattr(watched, "dynamic_registration", False):
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[types.FileSystemWatcher(glob_pattern="**/*")])
        registration = types.Registration(id="kestrel-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                          register_options=options)
        asyncio.ensure_future(self._register(types.RegistrationParams(registrations=[registration])))

    async def _register(self, params: types.RegistrationParams) -> None:
        try:
            await self.server.client_register_capability_async(params)
        except Exception as exc:  # a client that claims dynamic registration and refuses it: saves still index
            log.info("the client did not register the file watcher (%s): files changed outside it are found "
                     "at the next start", exc)

    def files_changed(self, uris: list[str]) -> None:
        """Watched files changed: each is read again (or dropped) by both indexes; a burst (a branch
        switch) re-walks the folders instead, which costs a stat per unchanged file."""
        for uri in uris:
            self.documents.saved(uri)  # a file replaced by a link is judged again
        paths = [Path(uri_to_path(uri)) for uri in uris if uri.startswith("file:")]
        for path in paths:
            if str(path).endswith(INDEXED_SUFFIXES):
                self.workspace.file_changed(path)
        if not self.host.settings.chat.codebase or not self.codebase.ready.is_set() or not paths:
            return
        if len(paths) > MAX_WATCHED_BATCH:
            self._scan_workspace()
            return
        asyncio.ensure_future(asyncio.to_thread(lambda: [self.codebase.file_changed(p) for p in paths]))

    def _settings_changed(self) -> None:
        """Keep the index in step with the settings; the first configuration starts the scan."""
        generation = self.workspace.generation
        self.workspace.set_exclusions(self.host.settings.completion.exclude_globs)  # drops newly excluded outlines
        if self._scan is None or self.workspace.generation != generation:
            self._scan_workspace()  # also drops newly excluded files from the codebase index

    def _scan_workspace(self) -> None:
        """Outline the workspace's source files in a worker thread, so opened files resolve from
        memory; a scan asked for while one runs starts when it ends (files already outlined cost a stat)."""
        settings = self.host.settings
        if not (settings.completion.repository_context or settings.chat.codebase) or not self.workspace.roots:
            return
        if self._scan is not None and not self._scan.done():
            self._rescan = True
            return
        self._rescan = False
        self._scan = asyncio.ensure_future(asyncio.to_thread(self._index, self._scan_stop))
        self._scan.add_done_callback(self._scanned)

    def _index(self, stop: threading.Event) -> dict[str, float]:
        """Both indexes, one after the other in one worker thread (2 cores: the editor keeps one)."""
        cost: dict[str, float] = {}
        settings = self.host.settings
        # One walk of the folders for both (.gitignore, secrets and excludeGlobs applied once).
        listed = self.codebase.files(stop) if settings.chat.codebase else None
        if settings.completion.repository_context:
            cost = self.workspace.scan(stop, None if listed is None else [path for _, path in listed])
        if listed is not None and not stop.is_set():
            self._refresh_codebase(stop, listed)
        return cost

    def _refresh_codebase(self, stop: threading.Event, listed: list | None = None) -> dict[str, float]:
        codebase = self.codebase.refresh(stop, listed)
        log.info("codebase index: %d files, %d lines (%d re-read) in %.2f s", codebase.get("files", 0),
                 codebase.get("lines", 0), codebase.get("indexed", 0), codebase.get("seconds", 0))
        return {}  # what the completion outlines cost (none here), for `_indexed`'s log line

    def index_codebase(self) -> None:
        """Build the codebase index now (a `#codebase` question with automatic search off, or before
        the first scan): nothing when a scan is running, which builds it."""
        if self._scan is not None and not self._scan.done():
            return
        self._scan = asyncio.ensure_future(asyncio.to_thread(self._refresh_codebase, self._scan_stop))
        self._scan.add_done_callback(self._scanned)

    def _scanned(self, future: asyncio.Future) -> None:
        _indexed(future)
        if self._rescan and not self._scan_stop.is_set():
            self._scan_workspace()

    def notify(self, method: str, params: Any) -> None:
        self.server.protocol.notify(method, params)

    def _show_message(self, message: str, kind: int) -> None:
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType(kind), message=redact.redact(message))
        )

    def show_info(self, message: str) -> None:
        self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=message))

    def excluded(self, uri: str) -> bool:
        """Secrets files and the user's excludeGlobs never reach a model."""
        return self.documents.excluded(uri, self.host.settings.completion.exclude_globs)

    def refusal(self, uri: str) -> str | None:
        """Why nothing of this document may reach a model (a message for the user), or None: it is
        excluded (secrets, excludeGlobs) or was set aside as too large. Every feature that reads a
        document asks this first."""
        if self.excluded(uri):
            return "this file is excluded from Kestrel (secrets or excludeGlobs)"
        return self.documents.too_large(uri)

    def resources(self) -> dict:
        """Resource counts for soak tests and bug reports (no document text, no secrets)."""
        try:
            fds = len(os.listdir("/proc/self/fd"))
            rss_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            fds, rss_kb = -1, -1
        return {
            "tasks": len(asyncio.all_tasks()),
            "openFiles": fds,
            "rssMb": round(rss_kb / 1024, 1),
            "documents": self.documents.count(),
            "pendingRequests": len(self.server.protocol._request_futures),
        }

    async def aclose(self) -> None:
        self._scan_stop.set()
        await self.host.aclose()
        self.codebase.close()


def private_cache(name: str) -> Path | None:
    """A private folder in Kestrel's cache (`index`: each workspace's codebase index; `endpoints`: what
    completions learned about each endpoint); None (kept in memory only) when it cannot be made private."""
    try:
        return local_cache.private_dir(models_cache_dir().parent / name)
    except (local_cache.UnsafeCache, OSError) as exc:
        log.warning("Kestrel's %s is kept in memory: %s", name, exc)
        return None


def _indexed(future: asyncio.Future) -> None:
    if future.cancelled():
        return
    if future.exception() is not None:
        log.warning("workspace index: the scan failed: %r", future.exception())
        return
    cost = future.result()
    if not cost:
        return
    log.info("workspace index: %d source files, %d lines outlined in %.2f s",
             cost["files"], cost["lines"], cost["seconds"])
