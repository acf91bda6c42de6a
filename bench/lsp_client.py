"""The one LSP client for Kestrel's server in bench/: `KestrelClient`, pygls' LanguageClient
driving `kestrel-lsp` (`python -m kestrel`, or the console script) over stdio with a clean
environment (no model settings from the shell),
recording the notifications it receives, with the requests the benches and evals make.

Also here, shared with tests/conftest.py (so they exist once): `clean_env`, `server_command`,
`inline_params`, `result_text`, `open_doc` / `change_doc`; and the position helpers the evals
need, on top of Kestrel's own UTF-16 conversion (`kestrel.context.window`).

The latency benches (`make bench`) talk to the server through `bench/rawclient.py` by default
(`--client raw`): a wire-level instrument, not a second client (see its docstring).
`kestrel_server()` starts either; `wait_ready()` and `stop_server()` take either.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from lsprotocol import types
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

from kestrel.context.window import offset_to_position, split_at
from kestrel.core.payload import plain

from .constants import REPO, URI

log = logging.getLogger("bench.client")
as_dict = plain  # pygls hands custom (kestrel/*) payloads over as named tuples: plain dicts


# --- the server process ------------------------------------------------------------------
def server_command(log_level: str = "WARNING", console_script: bool = False) -> list[str]:
    """`python -m kestrel` (what the latency benches and tests spawn), or with `console_script`
    the installed `kestrel-lsp` next to this interpreter (what an editor spawns) when it exists."""
    script = Path(sys.executable).with_name("kestrel-lsp")
    base = [str(script)] if console_script and script.exists() else [sys.executable, "-m", "kestrel"]
    return [*base, "--log-level", log_level]


SERVER_CMD = server_command()


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without model settings from the developer's shell, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KESTREL_", "OPENAI_"))}
    env.update(extra)
    return env


# --- LSP params and results (pygls' typed forms) ------------------------------------------
def inline_params(uri: str, line: int, character: int) -> types.InlineCompletionParams:
    """An inlineCompletion request as VS Code sends one while typing (trigger Automatic)."""
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic),
    )


def result_items(result: Any) -> list[types.InlineCompletionItem]:
    items = result.items if isinstance(result, types.InlineCompletionList) else result
    return list(items or [])


def result_text(result: Any) -> str | None:
    """The first item's text of an inlineCompletion result, None when there is none. Typed
    (pygls) or plain JSON (RawClient; Copilot's server), a list or an InlineCompletionList."""
    items = result.get("items") if isinstance(result, dict) else getattr(result, "items", result)
    if not items:
        return None
    item = items[0]
    text = item.get("insertText") if isinstance(item, dict) else item.insert_text
    if isinstance(text, dict):
        return text.get("value")
    return text if text is None or isinstance(text, str) else text.value


def open_doc(client: LanguageClient, uri: str, text: str, language: str = "python", version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def client_capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            inline_completion=types.InlineCompletionClientCapabilities(dynamic_registration=False),
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            code_action=types.CodeActionClientCapabilities(  # as VS Code: the fix is computed on resolve
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]), data_support=True),
        ),
        general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    )


# --- positions: Kestrel's own UTF-16 conversion -------------------------------------------
def position_of(text: str, offset: int) -> types.Position:
    return types.Position(**offset_to_position(text, offset))


def offset_of(text: str, pos: types.Position) -> int:
    """The string offset of an LSP position; a line past the last one means the end of the text
    (as VS Code clamps it)."""
    if pos.line > text.count("\n"):
        return len(text)
    return len(split_at(text, pos.line, pos.character).before)


# --- the client ----------------------------------------------------------------------------
async def start_stdio(client: LanguageClient, cmd: list[str], env: dict[str, str], stderr: Any,
                      cwd: str | Path) -> asyncio.subprocess.Process:
    """What pygls' `start_io` does, but the server's stderr goes to `stderr` (a file): pygls pipes
    it and never reads it, and a full pipe blocks the server. Also used for Copilot's server."""
    server = await asyncio.create_subprocess_exec(
        *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env, cwd=str(cwd))
    assert server.stdout is not None and server.stdin is not None
    client.protocol.set_writer(server.stdin)
    connection = asyncio.create_task(run_async(
        stop_event=client._stop_event, reader=server.stdout, protocol=client.protocol, logger=log,
        error_handler=client.report_server_error))
    client._server = server
    client._async_tasks.extend([connection, asyncio.create_task(client._server_exit())])
    return server


class _Protocol(LanguageServerProtocol):
    """Every notification from the server goes to `KestrelClient.note` first; one nothing else
    handles (another commit's server may send methods this one does not) stops there quietly."""

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method is not None and not hasattr(message, "id"):
            self._server.note(method, getattr(message, "params", None))  # type: ignore[attr-defined]
            if method not in self.fm.features and method not in self.fm.builtin_features:
                return
        super().handle_message(message)


class StdioClient(LanguageClient):
    """A pygls client of a server process over stdio: the shutdown and close every bench needs."""

    async def shutdown(self) -> None:
        await self.shutdown_async(None)
        self.exit(None)

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.stop(), 5)
        except Exception:
            pass


class KestrelClient(StdioClient):
    """pygls' LanguageClient for `kestrel-lsp` over stdio. Notifications: counted per method in
    `notifications`, `kestrel/status` kept in `status_events`, and handed to `on_notification(method,
    params, perf_counter())` when set."""

    def __init__(self, name: str = "kestrel-bench") -> None:
        super().__init__(name, "1", protocol_cls=_Protocol)
        self.status_events: list[dict] = []
        self.notifications: dict[str, int] = {}
        self.on_notification: Callable[[str, Any, float], None] | None = None
        self.version = 1
        self.proc: asyncio.subprocess.Process | None = None

    def note(self, method: str, params: Any) -> None:
        self.notifications[method] = self.notifications.get(method, 0) + 1
        if method == "kestrel/status":
            self.status_events.append(as_dict(params))
        if self.on_notification is not None:
            self.on_notification(method, as_dict(params), time.perf_counter())

    async def spawn(self, cmd: list[str] = SERVER_CMD, env: dict[str, str] | None = None, stderr: Any = None,
                    cwd: str | Path = REPO) -> None:
        """Start the server: `cmd` in `cwd` with `env` (default: clean_env()), stderr to `stderr`
        (an open file; default: discarded)."""
        self.proc = await start_stdio(self, cmd, clean_env() if env is None else env,
                                      subprocess.DEVNULL if stderr is None else stderr, cwd)

    # --- session ---
    async def initialize(self, options: dict | None = None, root: Path | None = None) -> types.InitializeResult:
        """initialize (with `options` as initializationOptions, `root` as the workspace folder),
        then initialized."""
        root_uri = root.as_uri() if root is not None else None
        result = await self.initialize_async(types.InitializeParams(
            capabilities=client_capabilities(), initialization_options=options, process_id=os.getpid(),
            root_uri=root_uri,
            workspace_folders=[types.WorkspaceFolder(uri=root_uri, name=root.name)] if root is not None else None))
        self.initialized(types.InitializedParams())
        return result

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.protocol.send_request_async(method, params)

    async def get_status(self) -> dict:
        return as_dict(await self.protocol.send_request_async("kestrel/getStatus", None))

    def cancel(self, msg_id: Any) -> None:
        self.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))

    # --- documents ---
    def open(self, text: str, uri: str = URI) -> None:
        self.version = 1
        open_doc(self, uri, text)

    def change(self, text: str, uri: str = URI) -> None:
        self.version += 1
        change_doc(self, uri, text, self.version)

    def close_doc(self, uri: str) -> None:
        self.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    # --- requests ---
    def send_inline(self, line: int, character: int, uri: str = URI, msg_id: Any = None) -> tuple[Any, Any]:
        """Send an inlineCompletion without waiting: (its id, a future of its result)."""
        msg_id = msg_id if msg_id is not None else f"bench-{id(object())}-{time.perf_counter_ns()}"
        fut = self.protocol.send_request_async(types.TEXT_DOCUMENT_INLINE_COMPLETION,
                                               inline_params(uri, line, character), msg_id=msg_id)
        return msg_id, asyncio.ensure_future(fut)

    async def inline(self, line: int, character: int, uri: str = URI) -> str | None:
        """The first suggestion's text at (line, character), None when there is none."""
        return result_text(await self.text_document_inline_completion_async(inline_params(uri, line, character)))

    async def inline_items(self, params: types.InlineCompletionParams) -> list[types.InlineCompletionItem]:
        return result_items(await self.text_document_inline_completion_async(params))

    async def quick_fix(self, uri: str, diagnostic: types.Diagnostic) -> types.CodeAction | None:
        """As VS Code's light bulb: codeAction (quick fixes for `diagnostic`), pick "Fix with
        Kestrel", codeAction/resolve it (the model runs there). None when it is not offered."""
        actions = await self.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=[types.CodeActionKind.QuickFix])))
        fix = next((a for a in actions or []
                    if isinstance(a, types.CodeAction) and a.title.startswith("Fix with Kestrel")), None)
        return None if fix is None else await self.code_action_resolve_async(fix)

    async def edit(self, params: dict) -> dict:
        """`kestrel/edit` (an inline edit: {id, uri, instruction, range}); the result as a dict."""
        return as_dict(await self.protocol.send_request_async("kestrel/edit", params)) or {}


# --- start, wait, stop (either client) ---------------------------------------------------
CLIENT_KIND = "raw"  # or "pygls" (bench.run --client)


def new_client(raw: bool = False) -> Any:
    from .rawclient import RawClient  # (which imports this module)

    if CLIENT_KIND == "pygls" and not raw:
        return KestrelClient()
    return RawClient()


@asynccontextmanager
async def kestrel_server(options: dict, log_path: Path | None, ready: bool = True, raw: bool = False,
                         env: dict[str, str] | None = None) -> AsyncIterator[Any]:
    """Spawn `python -m kestrel`, initialize it and (by default) wait until the provider is ready.
    raw=True: always the RawClient (benches whose timestamps must not include pygls' per-message
    cost; see rawclient)."""
    client = new_client(raw)
    log_file = open(log_path, "ab") if log_path else subprocess.DEVNULL
    try:
        # As the VS Code extension starts it: no early embedded-model process when a provider is set.
        remote = isinstance(options.get("kestrel"), dict) and bool(options["kestrel"].get("provider"))
        await client.spawn([*SERVER_CMD, *(["--no-prestart-local"] if remote else [])], clean_env(**(env or {})), log_file)
        await client.initialize(options)
        if ready:
            await wait_ready(client)
        yield client
    finally:
        await stop_server(client)
        if log_file is not subprocess.DEVNULL:
            log_file.close()


async def stop_server(client: Any, timeout: float = 5.0) -> None:
    """shutdown/exit politely (`timeout` s each), else kill; then close the client."""
    try:
        if client.proc is not None and client.proc.returncode is None:
            await asyncio.wait_for(client.shutdown(), timeout)
            await asyncio.wait_for(client.proc.wait(), timeout)
    except Exception:
        pass
    if client.proc is not None and client.proc.returncode is None:
        client.proc.kill()
        await client.proc.wait()
    await client.close()


async def wait_ready(client: Any, timeout: float = 30.0, connected: bool = True, strict: bool = True) -> bool:
    """The provider is created after `initialized` (importing openai is slow): wait for the status
    that says it is configured (state ready or busy) and, with `connected`, its prewarm finished.
    Raises when unconfigured. At the timeout, or when getStatus fails: raises, or with
    `strict=False` (another commit's server may not know getStatus) returns False."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            st = as_dict(await client.get_status())
        except Exception:
            if strict:
                raise
            st = None
        state = st.get("state") if isinstance(st, dict) else None
        if state in ("ready", "busy") and (not connected or st.get("connection") not in (None, "idle")):
            return True
        if state == "unconfigured":
            raise RuntimeError(f"kestrel is unconfigured: {st.get('message')}")
        await asyncio.sleep(0.02)
    if strict:
        raise RuntimeError("kestrel did not become ready")
    return False
