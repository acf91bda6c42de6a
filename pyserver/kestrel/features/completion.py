"""Inline completions (`textDocument/inlineCompletion`): ghost text at the cursor.

What to ask and what to show is decided by `completion.engine.InlineCompletionEngine`; this
module feeds it the cursor, the document and neighbour snippets, and never answers for a
document version the user has already left."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types

from .. import protocol
from ..config import CompletionSettings, Settings
from ..completion.engine import CompletionInput, InlineCompletionEngine
from ..context.exclusion import uri_to_path
from ..context.neighbors import NeighborIndex
from ..context.repository import RepositoryContext
from ..context.window import split_at
from ..completion.remembered import Remembered, endpoint_key
from ..core import Core, private_cache
from ..providers.base import ProviderError
from ..providers.openai_http import is_loopback
from . import NotReady, model_ready

log = logging.getLogger(__name__)

# How long a completion waits for its file's imports to be resolved when they changed (or the file
# was just opened) and are not resolved yet: after the workspace scan that is a few stat calls; a
# slower resolution goes on in the background and the next request has it.
RESOLVE_WAIT_S = 0.05
# Languages whose imports the workspace index resolves (Python by its import system; TypeScript and
# JavaScript by relative specifiers: `./x`, `../y/index`).
REPOSITORY_LANGUAGES = frozenset({"python", "typescript", "typescriptreact", "javascript", "javascriptreact"})


def completion_settings(settings: Settings, embedded: bool) -> CompletionSettings:
    """CPU-sized windows for the embedded model, unless the user asked for smaller."""
    c = settings.completion
    if not embedded:
        return c
    loc = settings.local
    return dataclasses.replace(
        c, prefix_tokens=min(c.prefix_tokens, loc.prefix_tokens), suffix_tokens=min(c.suffix_tokens, loc.suffix_tokens),
        max_tokens=min(c.max_tokens, loc.max_tokens), context_tokens=min(c.context_tokens, 200),
    )


class InlineCompletionFeature:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.engine = InlineCompletionEngine(core.host.settings.completion, core.status)
        self.neighbors = NeighborIndex()
        self.repository = RepositoryContext(core.workspace)
        self._logged: object = None  # the repository context last written to the log
        core.host.subscribe(self._model_changed)
        core.documents.subscribe(opened=self._opened, closed=self._closed)

    def _model_changed(self) -> None:
        host = self.core.host
        self.engine.settings = completion_settings(host.settings, host.embedded.running)
        if self.engine.provider is not host.provider:
            remember = host.provider is not None and host.settings.completion.remember_endpoints
            remembered = Remembered(private_cache("endpoints")) if remember else None
            # Drops streams of the old provider (what was learned about it is saved where it was kept).
            self.engine.set_provider(host.provider, self._endpoint(), remembered)

    def _endpoint(self) -> str:
        """The current provider's key for what completions learned about it (completion/remembered.py)."""
        provider = self.core.host.provider
        if provider is None:
            return ""
        settings = getattr(provider, "settings", None)
        return endpoint_key(provider.kind, str(getattr(provider, "model", "")), getattr(settings, "base_url", None),
                            self.core.host.embedded.running)

    def _uses_repository(self, language: str) -> bool:
        return self.core.host.settings.completion.repository_context and language in REPOSITORY_LANGUAGES

    def _opened(self, uri: str, text: str) -> None:
        doc = self.core.documents.get(uri)
        if doc is not None and self._uses_repository(doc.language_id or "") and not self.core.excluded(uri):
            self.repository.prepare(uri, Path(uri_to_path(uri)), text, doc.version)

    def _closed(self, uri: str) -> None:
        self.neighbors.forget(uri)
        self.repository.forget(uri)
        self.engine.forget(uri)

    async def complete(self, params: types.InlineCompletionParams) -> types.InlineCompletionList | None:
        core = self.core
        uri = params.text_document.uri
        ready = await model_ready(core, uri)
        settings = core.host.settings.completion
        if isinstance(ready, NotReady) or not settings.enabled:
            return None  # no model: the status already says why (unconfigured / local model unavailable)
        doc = ready.doc
        language = doc.language_id or ""
        if language in settings.disabled_languages:
            return None
        version = doc.version
        pos = params.position
        request = await self._input(uri, doc, pos)
        try:
            text = await self.engine.complete(request)
        except asyncio.CancelledError:
            self.engine.request_cancelled(uri, core.documents.text(uri))
            raise
        except ProviderError as exc:
            if exc.message != "cancelled":
                core.status.report(exc)
            return None
        if not text or doc.version != version:
            return None  # empty, or the document moved on while we waited: never show a stale item
        return types.InlineCompletionList(
            items=[types.InlineCompletionItem(insert_text=text, range=types.Range(start=pos, end=pos))]
        )

    async def cursor_rested(self, params: protocol.CursorParams) -> None:
        """`kestrel/cursor`: the cursor rests here before a keystroke. A model on this machine reads the
        prompt of a suggestion here meanwhile (completion/read_ahead.py); a remote one is not asked."""
        core = self.core
        host = core.host
        settings = host.settings.completion
        if not (settings.enabled and settings.read_ahead):
            return
        ready = await model_ready(core, params.uri)
        if (isinstance(ready, NotReady) or (ready.doc.language_id or "") in settings.disabled_languages
                or not (self.engine.reads_ahead and is_loopback(host.effective.base_url))):
            return
        self.engine.cursor_rested(await self._input(params.uri, ready.doc, params.position))

    async def _input(self, uri: str, doc: Any, pos: types.Position) -> CompletionInput:
        """What the engine needs to ask at `pos` of the open document `doc`."""
        core = self.core
        settings = core.host.settings.completion
        language = doc.language_id or ""
        cur = split_at(doc.source, pos.line, pos.character, core.documents.encoding())
        shown_path = core.documents.path(uri)
        if self._uses_repository(language):
            await self.repository.ready(uri, Path(uri_to_path(uri)), doc.source, doc.version, RESOLVE_WAIT_S)
        return CompletionInput(
            uri=uri,
            path=shown_path,
            language=language,
            cur=cur,
            neighbors=lambda query, budget: self.neighbors.snippets(
                query, core.documents.neighbor_candidates(uri, language, settings.exclude_globs), budget
            ),
            definitions=lambda window, budget: self._definitions(uri, language, shown_path, window, budget,
                                                                 len(cur.before), cur.after),
            repo=core.documents.repository(uri),
        )

    def _definitions(self, uri: str, language: str, shown_path: str, window: str, budget: int, cursor: int,
                     after: str) -> tuple:
        """Called when a new generation starts: the imported definitions for its prompt, logged so
        that the user can see what was sent (Kestrel: Show Logs)."""
        if not self._uses_repository(language):
            return ()
        snippets = self.repository.snippets(uri, shown_path, window, budget, cursor, after)
        report = self.repository.last
        if snippets and report is not None and report != self._logged:  # once per change, not per keystroke
            self._logged = report
            log.info("completion context for %s: %s (%d characters)", report.path,
                     ", ".join(f"{name} from {path}" for path, name in report.definitions), report.chars)
        return snippets

    def context_report(self) -> dict:
        """`kestrel/completionContext`: what the last prompt with repository context was given."""
        report = self.repository.last
        enabled = self.core.host.settings.completion.repository_context
        if report is None:
            return {"path": None, "definitions": [], "chars": 0, "resolved": 0, "enabled": enabled}
        return {"path": report.path, "definitions": [{"path": p, "name": n} for p, n in report.definitions],
                "chars": report.chars, "resolved": report.resolved, "enabled": enabled}

    def counters(self) -> dict:
        return {
            "liveGenerations": self.engine.live_generations,
            "generationsStarted": self.engine.generations_started,
            # The endpoint's time to the first token of the last generation started (the model's own wait,
            # which a cache-stable prompt shortens; the answer's time adds decoding and the cut).
            "lastGenerationTtftMs": last.stats.ttft_ms if (last := self.engine.last_started) is not None else None,
            # What followed a shown suggestion, asked for before it was accepted; used: a request took it.
            "preparedGenerations": self.engine.prepared_started,
            "preparedUsed": self.engine.prepared_used,
            # Prompts read where the cursor rested, before a keystroke; used: the next suggestion's prompt began with one.
            "readAheads": self.engine.read_ahead.started,
            "readAheadsUsed": self.engine.read_ahead.used,
        }

    async def aclose(self) -> None:
        await self.engine.aclose()
