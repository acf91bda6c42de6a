"""Per-server state: settings, the active provider and the engines that use it.

`server.py` handlers call into this; this owns provider lifecycle (create once, prewarm,
replace on configuration change) and translates between LSP types and the engines.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from . import redact
from .completion.engine import CompletionInput, InlineCompletionEngine
from .config import Settings, SettingsError, load_settings
from .context.exclusion import is_excluded, uri_to_path
from .context.neighbors import NeighborIndex
from .context.window import split_at
from .providers.base import Provider, ProviderError
from .status import StatusReporter

if TYPE_CHECKING:
    from .server import KestrelLanguageServer

log = logging.getLogger(__name__)

MAX_DOCUMENT_CHARS = 20_000_000  # beyond this we do not even split the text


class KestrelSession:
    def __init__(self, server: "KestrelLanguageServer") -> None:
        self.server = server
        self.status = StatusReporter(self._notify, self._show_message)
        self.settings = Settings()
        self.engine = InlineCompletionEngine(self.settings.completion, self.status)
        self.neighbors = NeighborIndex()
        self.provider: Provider | None = None
        self._init_options: dict[str, Any] = {}
        self._changed: dict[str, Any] = {}
        self._api_key: str | None = None
        self._recent: dict[str, float] = {}  # uri -> last edit/open time
        self._ready = asyncio.Event()
        self._setup: asyncio.Task | None = None
        self._background: set[asyncio.Task] = set()

    # -- transport helpers -------------------------------------------------------------
    def _notify(self, method: str, params: Any) -> None:
        self.server.protocol.notify(method, params)

    def _show_message(self, message: str, kind: int) -> None:
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType(kind), message=redact.redact(message))
        )

    # -- configuration -----------------------------------------------------------------
    def initialize(self, options: Any) -> None:
        self._init_options = dict(options) if isinstance(options, dict) else {}
        key = (self._init_options.get("kestrel") or self._init_options).get("apiKey") if self._init_options else None
        if key:
            redact.register_secret(key)

    def start(self) -> None:
        """After `initialized`: build the provider off the request path (importing openai is slow)."""
        self._setup = asyncio.get_running_loop().create_task(self._configure())

    def configuration_changed(self, settings: Any) -> None:
        self._changed = dict(settings) if isinstance(settings, dict) else {}
        self._spawn(self._configure())

    def set_api_key(self, key: str | None) -> None:
        self._api_key = key or None
        if key:
            redact.register_secret(key)
        self._spawn(self._configure())

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _configure(self) -> None:
        try:
            new = load_settings(self._init_options, self._changed)
        except SettingsError as exc:
            self.status.unconfigured(f"Kestrel: invalid settings: {exc}")
            self._ready.set()
            return
        if self._api_key:
            import dataclasses

            new = dataclasses.replace(new, api_key=self._api_key)
        for secret in (new.api_key,):
            if secret:
                redact.register_secret(secret)
        old, self.settings = self.settings, new
        self.engine.settings = new.completion
        transport_changed = (old.provider, old.base_url, old.model, old.api_key, old.http2, old.fim_template) != (
            new.provider, new.base_url, new.model, new.api_key, new.http2, new.fim_template
        ) or self.provider is None
        if transport_changed:
            await self._replace_provider(new)
        self._ready.set()

    async def _replace_provider(self, settings: Settings) -> None:
        previous, self.provider = self.provider, None
        self.engine.set_provider(None)
        if previous is not None:
            self._spawn(previous.aclose())
        if not settings.configured:
            self.status.unconfigured(
                "Kestrel: no model configured. Set kestrel.provider (or KESTREL_PROVIDER / OPENAI_API_KEY), "
                "or start the mock: python -m kestrel.testing.mock_model"
            )
            return
        from .providers import create_provider

        try:
            provider = create_provider(settings)
        except (ProviderError, ValueError) as exc:
            self.status.unconfigured(f"Kestrel: {getattr(exc, 'message', exc)}")
            return
        self.provider = provider
        self.engine.set_provider(provider)
        self.status.configured(settings.preset or settings.provider or "", provider.model, provider.connection_state)
        await provider.prewarm()
        self.status.connection_changed(provider.connection_state)
        log.info("provider ready: %s (%s)", settings.describe(), provider.connection_state)

    async def wait_ready(self, timeout: float = 10.0) -> None:
        if not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except asyncio.TimeoutError:
                pass

    # -- documents ---------------------------------------------------------------------
    def touched(self, uri: str) -> None:
        self._recent[uri] = time.monotonic()

    def closed(self, uri: str) -> None:
        self._recent.pop(uri, None)
        self.neighbors.forget(uri)
        self.engine.forget(uri)

    def _document_text(self, uri: str) -> str | None:
        doc = self.server.workspace.text_documents.get(uri)
        return None if doc is None else doc.source

    def _neighbor_candidates(self, uri: str, language: str) -> list[tuple[str, str, object, str]]:
        docs = self.server.workspace.text_documents
        globs = self.settings.completion.exclude_globs
        ordered = sorted(self._recent, key=self._recent.__getitem__, reverse=True)
        out = []
        for other in ordered:
            doc = docs.get(other)
            if other == uri or doc is None or is_excluded(other, globs):
                continue
            if len(doc.source) > 1_000_000:
                continue
            same_language = (doc.language_id or "") == language
            out.append((0 if same_language else 1, other, uri_to_path(other), doc.version, doc.source))
        out.sort(key=lambda item: item[0])  # stable: same language first, then most recent
        return [item[1:] for item in out]

    # -- features ----------------------------------------------------------------------
    async def inline_completion(self, params: types.InlineCompletionParams) -> types.InlineCompletionList | None:
        await self.wait_ready()
        uri = params.text_document.uri
        doc = self.server.workspace.text_documents.get(uri)
        settings = self.settings.completion
        if doc is None or not settings.enabled or len(doc.source) > MAX_DOCUMENT_CHARS:
            return None
        language = doc.language_id or ""
        if language in settings.disabled_languages or is_excluded(uri, settings.exclude_globs):
            return None
        encoding = str(self.server.server_capabilities.position_encoding or "utf-16")
        pos = params.position
        cur = split_at(doc.source, pos.line, pos.character, encoding)
        request = CompletionInput(
            uri=uri,
            path=uri_to_path(uri),
            language=language,
            cur=cur,
            neighbors=lambda query, budget: self.neighbors.snippets(
                query, self._neighbor_candidates(uri, language), budget
            ),
        )
        try:
            text = await self.engine.complete(request)
        except asyncio.CancelledError:
            self.engine.request_cancelled(uri, self._document_text(uri))
            raise
        except ProviderError as exc:
            if exc.message != "cancelled":
                self.status.failed(exc)
                self.status.publish()
            return None
        if not text:
            return None
        return types.InlineCompletionList(
            items=[types.InlineCompletionItem(insert_text=text, range=types.Range(start=pos, end=pos))]
        )

    async def shutdown(self) -> None:
        await self.engine.aclose()
        if self.provider is not None:
            await self.provider.aclose()
            self.provider = None
