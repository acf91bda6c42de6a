"""The LSP feature registry: each handler is a few lines that delegate to a feature
(`features/`), which receive the small `core/` (settings + provider, documents, status).

pygls only advertises inline completion when it is registered with options, hence
`InlineCompletionOptions()` below.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from . import __version__, redact
from .core import Core
from .features.chat import ChatFeature
from .features.completion import InlineCompletionFeature
from .features.inline_edit import InlineEditFeature
from .features.next_edit import NextEditFeature
from .features.quick_fix import QuickFixFeature


class KestrelProtocol(LanguageServerProtocol):
    """pygls drops a request whose params fail to parse without answering it, which leaves
    the client waiting forever. Answer it with InvalidParams (-32602) instead."""

    def structure_message(self, data: dict) -> Any:
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
        super().__init__(name="kestrel-lsp", version=__version__, protocol_cls=KestrelProtocol)
        self.core = Core(self)
        self.completion = InlineCompletionFeature(self.core)
        self.quick_fix = QuickFixFeature(self.core)
        self.inline_edit = InlineEditFeature(self.core)
        self.next_edit = NextEditFeature(self.core)
        self.chat = ChatFeature(self.core)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Errors already went back to the client as JSON-RPC errors; a popup per bad
        # message would flood the editor. They stay in the log.
        import logging

        logging.getLogger(__name__).warning("request failed: %s", error)


def create_server() -> KestrelLanguageServer:
    server = KestrelLanguageServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: KestrelLanguageServer, params: types.InitializeParams) -> None:
        ls.core.host.initialize(params.initialization_options)

    @server.feature(types.INITIALIZED)
    def initialized(ls: KestrelLanguageServer, params: types.InitializedParams) -> None:
        ls.core.host.start()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: KestrelLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.core.host.configuration_changed(params.settings)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: KestrelLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.core.documents.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KestrelLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.core.documents.touched(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KestrelLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.core.documents.closed(params.text_document.uri)

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

    @server.command("kestrel.fix")
    async def fix(ls: KestrelLanguageServer, data: Any) -> bool:
        return await ls.quick_fix.run_fix(data)

    @server.command("kestrel.explain")
    async def explain(ls: KestrelLanguageServer, data: Any) -> str | None:
        return await ls.quick_fix.explain(data)

    @server.feature("kestrel/chat")
    async def chat(ls: KestrelLanguageServer, params: Any) -> dict:
        return await ls.chat.turn(params)

    @server.feature("kestrel/edit")
    async def inline_edit(ls: KestrelLanguageServer, params: Any) -> dict:
        return await ls.inline_edit.edit(params)

    @server.feature("kestrel/nextEdit")
    async def next_edit(ls: KestrelLanguageServer, params: Any) -> dict | None:
        return await ls.next_edit.suggest(params)

    @server.feature("kestrel/steer")
    async def steer(ls: KestrelLanguageServer, params: Any) -> dict:
        return await ls.chat.steer(params)

    @server.feature("kestrel/stopChat")
    def stop_chat(ls: KestrelLanguageServer, params: Any) -> bool:
        return ls.chat.stop(params)

    @server.feature("kestrel/setApiKey")
    def set_api_key(ls: KestrelLanguageServer, params: Any) -> None:
        ls.core.host.set_api_key(params)

    @server.feature("kestrel/getStatus")
    def get_status(ls: KestrelLanguageServer, params: Any) -> dict:
        return ls.core.status.snapshot()

    @server.feature("kestrel/diagnostics")
    def diagnostics(ls: KestrelLanguageServer, params: Any) -> dict:
        return {**ls.core.resources(), **ls.completion.counters()}

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: KestrelLanguageServer, params: Any) -> None:
        await ls.completion.aclose()
        await ls.core.aclose()

    return server
