"""Per-server state: settings, the active provider and the engines that use it.

`server.py` handlers call into this; this owns provider lifecycle (create once, prewarm,
replace on configuration change) and translates between LSP types and the engines.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from . import redact
from .chat.engine import ChatEngine
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
        self.effective = self.settings  # what the provider runs with (the local model fills in gaps)
        self.engine = InlineCompletionEngine(self.settings.completion, self.status)
        self.neighbors = NeighborIndex()
        self.chat = ChatEngine(self._notify)
        from .edits.next_edit import EditHistory

        self.edit_history = EditHistory()
        self.provider: Provider | None = None
        self.local = None  # LocalModelServer when the embedded model runs
        self._init_options: dict[str, Any] = {}
        self._changed: dict[str, Any] = {}
        self._api_key: str | None = None  # from kestrel/setApiKey, or the startup options
        self._api_key_set = False  # kestrel/setApiKey was called (its null clears the startup key)
        self._recent: dict[str, float] = {}  # uri -> last edit/open time
        self._ready = asyncio.Event()
        self._background: set[asyncio.Task] = set()
        self._configuring = asyncio.Lock()
        self._pending_configs = 0

    # -- transport helpers -------------------------------------------------------------
    def _notify(self, method: str, params: Any) -> None:
        self.server.protocol.notify(method, params)

    def _show_message(self, message: str, kind: int) -> None:
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType(kind), message=redact.redact(message))
        )

    # -- configuration -----------------------------------------------------------------
    def initialize(self, options: Any) -> None:
        options = plain(options) if options is not None else {}
        self._init_options = options if isinstance(options, dict) else {}
        section = (self._init_options.get("kestrel") or self._init_options) if self._init_options else {}
        key = section.get("apiKey") if isinstance(section, dict) else None
        if key:
            redact.register_secret(key)
            self._api_key = key

    def start(self) -> None:
        """After `initialized`: build the provider off the request path (importing openai is slow)."""
        self._schedule_configure()

    def configuration_changed(self, settings: Any) -> None:
        self._changed = plain(settings) if settings is not None else {}
        self._changed = self._changed if isinstance(self._changed, dict) else {}
        self._schedule_configure()

    def set_api_key(self, key: str | None) -> None:
        self._api_key = key or None  # null clears it (back to the environment's key, if any)
        self._api_key_set = True
        if key:
            redact.register_secret(key)
        self._schedule_configure()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _schedule_configure(self) -> None:
        """Requests arriving from now on wait (bounded) until every scheduled change has applied."""
        self._pending_configs += 1
        self._ready.clear()
        self._spawn(self._configure())

    async def _configure(self) -> None:
        try:
            async with self._configuring:  # changes apply in arrival order, one at a time
                await self._configure_locked()
        finally:
            self._pending_configs -= 1
            if self._pending_configs == 0:  # requests go ahead only once the LAST change applied
                self._ready.set()

    async def _configure_locked(self) -> None:
        try:
            # A configuration change carries the client's whole `kestrel` section: it replaces the
            # startup options (so a value can be cleared), on top of the environment.
            new = load_settings(None if self._changed else self._init_options, self._changed)
        except SettingsError as exc:
            self.status.unconfigured(f"Kestrel: invalid settings: {exc}")
            return
        if self._api_key or self._api_key_set:
            env_key = load_settings(None, None).api_key if not self._api_key and new.provider else None
            new = dataclasses.replace(new, api_key=self._api_key or env_key)
        redact.register_secret(new.api_key)
        old, self.settings = self.settings, new
        transport_changed = (old.provider, old.base_url, old.model, old.api_key, old.http2, old.fim_template, old.local) != (
            new.provider, new.base_url, new.model, new.api_key, new.http2, new.fim_template, new.local
        ) or self.provider is None
        if transport_changed:
            await self._replace_provider(new)
        else:
            self.engine.settings = self._completion_settings(new)

    def _completion_settings(self, settings: Settings):
        if self.local is None:
            return settings.completion
        # CPU-sized windows for the embedded model, unless the user asked for smaller.
        c, loc = settings.completion, settings.local
        return dataclasses.replace(
            c, prefix_tokens=min(c.prefix_tokens, loc.prefix_tokens), suffix_tokens=min(c.suffix_tokens, loc.suffix_tokens),
            max_tokens=min(c.max_tokens, loc.max_tokens), context_tokens=min(c.context_tokens, 200),
        )

    async def _replace_provider(self, settings: Settings) -> None:
        previous, self.provider = self.provider, None
        self.engine.set_provider(None)
        if previous is not None:
            self._spawn(previous.aclose())
        if self.local is not None and (settings.configured or not settings.local.enabled or
                                       settings.local != self.effective.local):
            await self.local.stop()
            self.local = None
        if not settings.configured and settings.local.enabled:
            from .local.models import runtime_available

            if runtime_available():
                settings = await self._start_local(settings)
                if settings is None:
                    return
        self.effective = settings
        self.engine.settings = self._completion_settings(settings)
        if not settings.configured:
            self.status.unconfigured(
                "Kestrel: no model configured. Set kestrel.provider (or KESTREL_PROVIDER / OPENAI_API_KEY), "
                "or start the mock: python -m kestrel.testing.mock_model"
            )
            return
        from .providers import create_provider

        # Importing the SDK takes ~0.5 s of CPU: do it off the event loop so the server keeps
        # answering (didOpen, status, cancellations) meanwhile.
        await asyncio.to_thread(__import__, "openai")
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

    async def _start_local(self, settings: Settings) -> Settings | None:
        """Start the embedded model (llama.cpp child process) and return settings that use it."""
        from .local.models import ModelNotFound, resolve_model
        from .local.runtime import LocalModelServer, LocalRuntimeError

        progress = WorkDoneProgress(self.server, "Kestrel: starting the local model")
        await progress.begin()
        loop = asyncio.get_running_loop()

        def report(message: str, percent: int | None) -> None:  # called from the resolver thread
            loop.call_soon_threadsafe(progress.report, message, percent)

        try:
            model = await asyncio.to_thread(resolve_model, settings.local.model_path, report)
            progress.report(f"loading {model.path.name}", None)
            if self.local is None:
                self.local = LocalModelServer(
                    model, n_ctx=settings.local.context, threads=settings.local.threads, on_event=self._local_event
                )
                await self.local.start()
        except (ModelNotFound, LocalRuntimeError) as exc:
            self.local = None
            self.status.unconfigured(f"Kestrel: the local model is unavailable: {exc}")
            return None
        finally:
            progress.end()
        log.info("local model %s (%s) at %s", self.local.model.name, self.local.model.source, self.local.base_url)
        return dataclasses.replace(
            settings, provider="fim", preset="local", base_url=self.local.base_url, model=self.local.model.name,
            api_key=None, http2="off", max_retries=1,  # one retry absorbs a pooled socket to a restarted child
        )

    def _local_event(self, message: str) -> None:
        """Lifecycle of the llama.cpp child: requests wait (bounded) while it restarts."""
        log.warning("local model: %s", message)
        if message == "restarted":
            self.status.succeeded()
            self.status.publish()
            self._ready.set()
        elif "restarting" in message:
            self._ready.clear()
            self.status.state, self.status.message = "offline", f"Kestrel: {message}"
            self.status.publish()
        else:  # gave up: let requests fail fast with the reason
            self._ready.set()
            self.status.error_once("local", f"Kestrel: {message}")

    async def wait_ready(self, timeout: float = 10.0) -> None:
        if not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except asyncio.TimeoutError:
                pass

    # -- documents ---------------------------------------------------------------------
    def touched(self, uri: str) -> None:
        self._recent[uri] = time.monotonic()

    def opened(self, uri: str) -> None:
        self.touched(uri)
        doc = self.server.workspace.text_documents.get(uri)
        if doc is not None:
            self.edit_history.opened(uri, doc.source)

    def closed(self, uri: str) -> None:
        self._recent.pop(uri, None)
        self.edit_history.forget(uri)
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

    def _encoding(self) -> str:
        """The position encoding negotiated at `initialize` (UTF-16 unless the client chose another)."""
        return str(self.server.server_capabilities.position_encoding or "utf-16")

    # -- features ----------------------------------------------------------------------
    def _startup_budget(self) -> float:
        """How long a request may wait for set-up: loading the local model takes a while."""
        return 120.0 if self.settings.local.enabled and not self.settings.configured else 10.0

    async def inline_completion(self, params: types.InlineCompletionParams) -> types.InlineCompletionList | None:
        await self.wait_ready(self._startup_budget())
        uri = params.text_document.uri
        doc = self.server.workspace.text_documents.get(uri)
        settings = self.settings.completion
        if doc is None or not settings.enabled or len(doc.source) > MAX_DOCUMENT_CHARS:
            return None
        if self.provider is None:
            return None  # the status already says why (unconfigured / local model unavailable)
        language = doc.language_id or ""
        if language in settings.disabled_languages or is_excluded(uri, settings.exclude_globs):
            return None
        encoding = self._encoding()
        version = doc.version
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
                self.status.report(exc)
            return None
        if not text or doc.version != version:
            return None  # empty, or the document moved on while we waited: never show a stale item
        return types.InlineCompletionList(
            items=[types.InlineCompletionItem(insert_text=text, range=types.Range(start=pos, end=pos))]
        )

    # -- quick fixes -------------------------------------------------------------------
    def _supports_resolve(self) -> bool:
        caps = self.server.client_capabilities.text_document
        support = caps.code_action.resolve_support if caps and caps.code_action else None
        return bool(support and "edit" in (support.properties or []))

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """One "Fix" and one "Explain" per diagnostic; no model call until one is picked."""
        uri = params.text_document.uri
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None or is_excluded(uri, self.settings.completion.exclude_globs):
            return []
        lazy_resolve = self._supports_resolve()
        actions = []
        for diag in params.context.diagnostics[:10]:
            if diag.source == "kestrel":
                continue
            data = {
                "uri": uri, "version": doc.version, "message": diag.message,
                "startLine": diag.range.start.line, "endLine": diag.range.end.line,
            }
            short = diag.message.splitlines()[0][:60] if diag.message else "problem"
            fix = types.CodeAction(
                title=f"Fix with Kestrel: {short}", kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                data={**data, "action": "fix"},
            )
            if not lazy_resolve:  # clients without resolve support run the fix as a command when picked
                fix.command = types.Command(title=fix.title, command="kestrel.fix", arguments=[{**data, "action": "fix"}])
            explain = types.CodeAction(
                title="Explain with Kestrel", kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                command=types.Command(title="Explain with Kestrel", command="kestrel.explain", arguments=[data]),
            )
            actions += [fix, explain]
        return actions

    async def _fix_edit(self, data: dict) -> types.WorkspaceEdit:
        from .edits.quickfix import compute_fix, region_for

        await self.wait_ready(self._startup_budget())
        uri = data["uri"]
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None:
            raise ProviderError("the document is no longer open")
        if self.provider is None:
            raise ProviderError("no model is configured: set kestrel.provider or KESTREL_PROVIDER")
        if doc.version != data.get("version"):
            raise ProviderError("the document changed since the fix was offered: ask for the fix again")
        text, version = doc.source, doc.version
        region = region_for(text, int(data["startLine"]), int(data["endLine"]))
        edit = await compute_fix(
            self.provider, text, region, data.get("message", ""), doc.language_id or "", uri_to_path(uri),
            self._encoding(),
        )
        current = self.server.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            raise ProviderError("the document changed while the fix was computed: nothing was applied")
        edits = [] if edit is None else [types.TextEdit(
            range=types.Range(start=types.Position(**edit["range"]["start"]), end=types.Position(**edit["range"]["end"])),
            new_text=edit["newText"],
        )]
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits,
        )])

    async def resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        data = plain(action.data)
        if not isinstance(data, dict) or data.get("action") != "fix" or not self._supports_resolve():
            return action  # (without resolve support the action's command does the work: never twice)
        try:
            action.edit = await self._fix_edit(data)
        except ProviderError as exc:
            self.status.report(exc)
        return action

    async def run_fix(self, data: Any) -> bool:
        try:
            edit = await self._fix_edit(plain(data))
        except ProviderError as exc:
            self.status.report(exc)
            return False
        result = await self.server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="Kestrel fix"))
        return bool(result and result.applied)

    async def explain(self, data: Any) -> str | None:
        from .edits.quickfix import collect, explain_messages, region_for

        data = plain(data)
        await self.wait_ready(self._startup_budget())
        doc = self.server.workspace.text_documents.get(data.get("uri", ""))
        if doc is None or self.provider is None:
            self.status.error_once("explain", "Kestrel: nothing to explain (no open document or no model configured)")
            return None
        region = region_for(doc.source, int(data["startLine"]), int(data["endLine"]))
        try:
            answer = await collect(self.provider, explain_messages(
                doc.source, region, data.get("message", ""), doc.language_id or "", uri_to_path(doc.uri)))
        except ProviderError as exc:
            self.status.report(exc)
            return None
        self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=answer))
        return answer

    def diagnostics(self) -> dict:
        """Resource counts for soak tests and bug reports (no document text, no secrets)."""
        import os

        try:
            fds = len(os.listdir("/proc/self/fd"))
            rss_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            fds, rss_kb = -1, -1
        return {
            "tasks": len(asyncio.all_tasks()),
            "openFiles": fds,
            "rssMb": round(rss_kb / 1024, 1),
            "documents": len(self.server.workspace.text_documents),
            "liveGenerations": sum(1 for g in self.engine._live.values() if g.live),
            "pendingRequests": len(self.server.protocol._request_futures),
            "generationsStarted": self.engine.generations_started,
        }

    # -- chat ----------------------------------------------------------------------------
    async def chat_turn(self, params: Any) -> dict:
        data = plain(params) or {}
        await self.wait_ready(self._startup_budget())
        turn_id = str(data.get("id") or f"turn-{time.monotonic_ns()}")
        messages = data.get("messages") or [{"role": "user", "content": str(data.get("prompt", ""))}]
        if self.provider is None:
            return {"id": turn_id, "text": "", "error": self.status.message or "no model is configured"}
        self.status.generation_started()
        result = await self.chat.turn(self.provider, turn_id, messages)
        self.status.busy = max(self.status.busy - 1, 0)
        self.status.publish()
        return result

    # -- inline edits --------------------------------------------------------------------
    async def inline_edit(self, params: Any) -> dict:
        """Rewrite the selection (or the enclosing block) from an instruction, streamed as
        `kestrel/editDelta`; answers minimal edits against the current document version."""
        from .edits.inline_edit import EditRefused, clean_rewrite, edit_messages, minimal_edits, rebase, target_for, to_lsp_edits

        data = plain(params) or {}
        edit_id = str(data.get("id") or f"edit-{time.monotonic_ns()}")
        await self.wait_ready(self._startup_budget())
        uri = str(data.get("uri", ""))
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None:
            return {"id": edit_id, "error": "the document is not open"}
        if is_excluded(uri, self.settings.completion.exclude_globs):
            return {"id": edit_id, "error": "this file is excluded from Kestrel (secrets or excludeGlobs)"}
        if self.provider is None:
            return {"id": edit_id, "error": self.status.message or "no model is configured"}
        instruction = str(data.get("instruction", "")).strip()
        if not instruction:
            return {"id": edit_id, "error": "the instruction is empty"}
        rng = data.get("range") or {}
        start, end = rng.get("start") or {}, rng.get("end") or rng.get("start") or {}
        text, version = doc.source, doc.version
        target = target_for(text, int(start.get("line", 0)), int(start.get("character", 0)),
                            int(end.get("line", 0)), int(end.get("character", 0)))
        encoding = self._encoding()
        self._notify("kestrel/editStarted", {"id": edit_id, "edits": to_lsp_edits(text, target.start, [(0, len(target.text), target.text)], encoding)})
        seen = {"version": version, "refused": None}

        def watch(_delta: str) -> None:  # the user may type while the edit streams
            if doc.version != seen["version"] and seen["refused"] is None:
                seen["version"] = doc.version
                try:
                    rebase(doc.source, target)
                except EditRefused as exc:
                    seen["refused"] = str(exc)
                    self.chat.stop(edit_id)

        messages = edit_messages(text, target, instruction, doc.language_id or "", uri_to_path(uri))
        # No resume for edits: a rewrite stitched across a dropped stream is not trustworthy code.
        result = await self.chat.turn(self.provider, edit_id, messages, delta_method="kestrel/editDelta", on_delta=watch,
                                      prediction=target.text, resume=False)
        if seen["refused"]:
            return {"id": edit_id, "error": seen["refused"]}
        if result.get("error"):
            return {"id": edit_id, "error": f"the edit failed: {result['error']}; the document was not changed"}
        rewritten = clean_rewrite(result["text"], target.text)
        current = self.server.workspace.text_documents.get(uri)
        if current is None:
            return {"id": edit_id, "error": "the document was closed"}
        try:
            base = rebase(current.source, target)
        except EditRefused as exc:
            return {"id": edit_id, "error": str(exc)}
        edits = minimal_edits(target.text, rewritten)
        return {
            "id": edit_id, "version": current.version, "newText": rewritten,
            "edits": to_lsp_edits(current.source, base, edits, encoding),
            "steers": result.get("steers", []), "stopped": bool(result.get("stopped")),
        }

    async def next_edit(self, params: Any) -> dict | None:
        """The edit the user will likely make next near the cursor, or None (also when disabled)."""
        from .edits.inline_edit import to_lsp_edits
        from .edits.next_edit import next_edit_messages, region_around, suggested_edits

        await self.wait_ready(self._startup_budget())
        if not self.settings.next_edit:
            return None
        data = plain(params) or {}
        uri = str(data.get("uri", ""))
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None or self.provider is None or is_excluded(uri, self.settings.completion.exclude_globs):
            return None
        text, version = doc.source, doc.version
        diff = self.edit_history.recent_diff(uri, text)
        if not diff:
            return None
        line = int((data.get("position") or {}).get("line", 0))
        target = region_around(text, line)
        from .edits.quickfix import collect

        try:
            answer = await collect(self.provider, next_edit_messages(diff, text, target, doc.language_id or "", uri_to_path(uri)),
                                   prediction=target.text)
        except ProviderError as exc:
            self.status.report(exc)
            return None
        if doc.version != version:
            return None  # the user kept typing: this suggestion is already stale
        edits = suggested_edits(answer, target)
        self.edit_history.settle(uri, text)
        if not edits:
            return None
        encoding = self._encoding()
        return {"uri": uri, "version": version, "edits": to_lsp_edits(text, target.start, edits, encoding)}

    async def steer_chat(self, params: Any) -> dict:
        data = plain(params) or {}
        return await self.chat.steer(str(data.get("id", "")), str(data.get("text", "")))

    def stop_chat(self, params: Any) -> bool:
        data = plain(params) or {}
        return self.chat.stop(str(data.get("id", "")))

    async def shutdown(self) -> None:
        await self.engine.aclose()
        if self.provider is not None:
            await self.provider.aclose()
            self.provider = None
        if self.local is not None:
            await self.local.stop()
            self.local = None


def plain(value: Any) -> Any:
    """Custom payloads reach us as pygls named tuples or dicts: normalise to dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class WorkDoneProgress:
    """`$/progress` for a long server-side task, when the client supports it."""

    def __init__(self, server: Any, title: str) -> None:
        self.server = server
        self.title = title
        self.token = f"kestrel-{uuid.uuid4().hex[:8]}"
        self.active = False

    async def begin(self) -> None:
        window = self.server.client_capabilities.window
        if not (window and window.work_done_progress):
            return
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(self.token), 5)
        except Exception:
            return
        self.server.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(title=self.title, cancellable=False))
        self.active = True

    def report(self, message: str, percent: int | None = None) -> None:
        if self.active:
            self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message, percentage=percent))

    def end(self) -> None:
        if self.active:
            self.active = False
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd())
