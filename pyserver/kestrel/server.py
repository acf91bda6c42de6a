"""The LSP feature registry: each handler is a few lines that delegate to the session.

pygls only advertises inline completion when it is registered with options, hence
`InlineCompletionOptions()` below.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from . import __version__
from .session import KestrelSession


class KestrelLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(name="kestrel-lsp", version=__version__)
        self.session = KestrelSession(self)


def create_server() -> KestrelLanguageServer:
    server = KestrelLanguageServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: KestrelLanguageServer, params: types.InitializeParams) -> None:
        ls.session.initialize(params.initialization_options)

    @server.feature(types.INITIALIZED)
    def initialized(ls: KestrelLanguageServer, params: types.InitializedParams) -> None:
        ls.session.start()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: KestrelLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.session.configuration_changed(params.settings)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: KestrelLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.session.touched(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KestrelLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.session.touched(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KestrelLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.session.closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: KestrelLanguageServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        return await ls.session.inline_completion(params)

    @server.feature("kestrel/setApiKey")
    def set_api_key(ls: KestrelLanguageServer, params: Any) -> None:
        ls.session.set_api_key(getattr(params, "apiKey", None) or getattr(params, "api_key", None))

    @server.feature("kestrel/getStatus")
    def get_status(ls: KestrelLanguageServer, params: Any) -> dict:
        return ls.session.status.snapshot()

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: KestrelLanguageServer, params: Any) -> None:
        await ls.session.shutdown()

    return server
