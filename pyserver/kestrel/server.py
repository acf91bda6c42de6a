"""The LSP feature registry: each handler is a few lines that delegate to a feature
(`features/`), which receive the small `core/` (settings + provider, documents, status).
The custom `kestrel/*` methods are registered with `kestrel_method`: their handlers get the
params already parsed into the types of `protocol.py`.

pygls only advertises inline completion when it is registered with options, hence
`InlineCompletionOptions()` below.
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Any, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from . import __version__, protocol, redact
from .core import Core, plain
from .features.agent import AgentFeature
from .features.chat import ChatFeature
from .features.workspace_symbols import WorkspaceSymbolFeature
from .features.completion import InlineCompletionFeature
from .features.inline_edit import InlineEditFeature
from .features.next_edit import NextEditFeature
from .features.quick_fix import QuickFixFeature

log = logging.getLogger(__name__)


class KestrelProtocol(LanguageServerProtocol):
    """pygls drops a request whose params fail to parse without answering it, which leaves
    the client waiting forever. Answer it with InvalidParams (-32602) instead."""

    def structure_message(self, data: dict) -> Any:
        if isinstance(data, dict) and "method" in data and "params" not in data:
            # JSON-RPC lets a request leave params out (a client asking `kestrel/getStatus`); pygls'
            # message type for methods it does not know requires them and answered Internal Error.
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            return {"kestrel_unparsable": True}

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict):  # unparsable: already answered above, or a notification
            return
        super().handle_message(message)

    def _serialize_message(self, data: Any) -> Any:
        """Every message to the client is serialized here: one redactor sees all of it (a key an
        endpoint echoes in an error, in a status, a chat answer or a log message never leaves)."""
        return redact.redact_payload(super()._serialize_message(data))

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        """Answer a message pygls never saw (not JSON, too large: see `transport/inbox.py`)."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": redact.redact(message)}})

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # VS Code cancels requests that already finished all the time: not worth a warning.
        if msg_id in self._request_futures:
            super()._handle_cancel_notification(msg_id)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        """pygls 2.1.1 files a Future under a fresh id for every notification handled by a
        generator (didOpen/didChange/...) and never removes it: ~1.6 KB leaked per keystroke
        (measured in bench `rss_mb`). Drop the entry once the notification is handled."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if callback == self._check_handler_result:
            future = self._request_futures.get(msg_id)
            if future is not None:
                if future.done():
                    self._request_futures.pop(msg_id, None)
                else:
                    future.add_done_callback(lambda _: self._request_futures.pop(msg_id, None))


class KestrelLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(name="kestrel-lsp", version=__version__, protocol_cls=KestrelProtocol,
                         converter_factory=protocol.converter)  # one converter for pygls and kestrel/*
        self.core = Core(self)
        self.completion = InlineCompletionFeature(self.core)
        self.quick_fix = QuickFixFeature(self.core)
        self.inline_edit = InlineEditFeature(self.core)
        self.next_edit = NextEditFeature(self.core)
        self.chat = ChatFeature(self.core)
        self.agent = AgentFeature(self.core)
        self.workspace_symbols = WorkspaceSymbolFeature(self.core)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Errors already went back to the client as JSON-RPC errors; a popup per bad
        # message would flood the editor. They stay in the log.
        log.warning("request failed: %s", error)


def create_server() -> KestrelLanguageServer:
    server = KestrelLanguageServer()
    _register_lifecycle(server)
    _register_documents(server)
    _register_lsp_features(server)
    _register_kestrel_methods(server)
    return server


def _register_lifecycle(server: KestrelLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: KestrelLanguageServer, params: types.InitializeParams) -> None:
        ls.core.host.initialize(params.initialization_options)
        ls.core.workspace_opened(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: KestrelLanguageServer, params: types.InitializedParams) -> None:
        ls.core.host.start()
        ls.core.watch_files()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: KestrelLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.core.files_changed([change.uri for change in params.changes])

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: KestrelLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.core.host.configuration_changed(params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: KestrelLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.core.workspace_folders_changed()

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: KestrelLanguageServer, params: Any) -> None:
        await ls.completion.aclose()
        await ls.core.aclose()


def _register_documents(server: KestrelLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: KestrelLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.core.documents.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KestrelLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.core.documents.touched(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: KestrelLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.core.file_saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KestrelLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.core.documents.closed(params.text_document.uri)


def _register_lsp_features(server: KestrelLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: KestrelLanguageServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        return await ls.completion.complete(params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True),
    )
    def code_action(ls: KestrelLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.quick_fix.actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: KestrelLanguageServer, params: types.CodeAction) -> types.CodeAction:
        return await ls.quick_fix.resolve(params)

    @server.feature(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolOptions())
    def workspace_symbol(ls: KestrelLanguageServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
        return ls.workspace_symbols.find(params)

    @server.command("kestrel.fix")
    async def fix(ls: KestrelLanguageServer, data: Any) -> bool:
        return await ls.quick_fix.run_fix(data)

    @server.command("kestrel.explain")
    async def explain(ls: KestrelLanguageServer, data: Any) -> str | None:
        return await ls.quick_fix.explain(data)


def _register_kestrel_methods(server: KestrelLanguageServer) -> None:
    """The custom methods of `protocol.py`: each handler gets its typed params."""
    on = functools.partial(kestrel_method, server)

    @on(protocol.CHAT)
    async def chat(ls: KestrelLanguageServer, params: protocol.ChatParams) -> protocol.ChatResult:
        return await ls.chat.turn(params)

    @on(protocol.STEER)
    async def steer(ls: KestrelLanguageServer, params: protocol.SteerParams) -> protocol.SteerResult:
        queued = ls.agent.steer(params)  # an agent run between model calls keeps it for the next one
        return queued if queued is not None else await ls.chat.steer(params)

    @on(protocol.STOP_CHAT)
    def stop_chat(ls: KestrelLanguageServer, params: protocol.StopChatParams) -> bool:
        return ls.agent.stop(params.id) or ls.chat.stop(params)

    @on(protocol.AGENT)
    async def agent(ls: KestrelLanguageServer, params: protocol.AgentParams) -> protocol.AgentResult:
        return await ls.agent.run(params)

    @on(protocol.EDIT)
    async def inline_edit(ls: KestrelLanguageServer, params: protocol.EditParams) -> protocol.EditResult:
        return await ls.inline_edit.edit(params)

    @on(protocol.NEXT_EDIT)
    async def next_edit(ls: KestrelLanguageServer, params: protocol.NextEditParams) -> protocol.NextEditResult | None:
        return await ls.next_edit.suggest(params)

    @on(protocol.CURSOR)
    async def cursor(ls: KestrelLanguageServer, params: protocol.CursorParams) -> None:
        await ls.completion.cursor_rested(params)

    @on(protocol.SET_API_KEY)
    def set_api_key(ls: KestrelLanguageServer, params: protocol.SetApiKeyParams) -> None:
        ls.core.host.set_api_key(protocol.to_wire(params))

    @on(protocol.GET_STATUS)
    def get_status(ls: KestrelLanguageServer, params: protocol.NoParams) -> protocol.Status:
        return protocol.from_wire(ls.core.status.snapshot(), protocol.Status)

    @on(protocol.DIAGNOSTICS)
    def diagnostics(ls: KestrelLanguageServer, params: protocol.NoParams) -> protocol.DiagnosticsResult:
        return protocol.from_wire({**ls.core.resources(), **ls.completion.counters()}, protocol.DiagnosticsResult)

    @on(protocol.COMPLETION_CONTEXT)
    def completion_context(ls: KestrelLanguageServer, params: protocol.NoParams) -> protocol.CompletionContext:
        return protocol.from_wire(ls.completion.context_report(), protocol.CompletionContext)


def kestrel_method(server: KestrelLanguageServer, method: protocol.Request | protocol.Notification) -> Callable:
    """Registers the decorated handler for `method`, called with the params parsed into
    `method.params`. Params that do not fit are logged and answered with the method's own error
    result (`Request.malformed`), never an exception; a notification has no answer."""

    def parse(params: Any) -> tuple[Any, Any]:
        """(the typed params, None), or (None, the answer to params that do not fit)."""
        raw = plain(params)
        try:
            return method.parse(raw), None
        except protocol.MalformedParams as exc:
            log.warning("%s", exc)
            if not isinstance(method, protocol.Request):
                return None, None
            raw_id = raw.get("id") if isinstance(raw, dict) else None
            return None, method.malformed(str(raw_id or ""), str(exc))

    def register(handler: Callable) -> Callable:
        async def handle_async(ls: KestrelLanguageServer, params: Any) -> Any:
            parsed, answer = parse(params)
            return answer if parsed is None else await handler(ls, parsed)

        def handle(ls: KestrelLanguageServer, params: Any) -> Any:  # answered at once, not from a task
            parsed, answer = parse(params)
            return answer if parsed is None else handler(ls, parsed)

        server.feature(method.method)(handle_async if inspect.iscoroutinefunction(handler) else handle)
        return handler

    return register
