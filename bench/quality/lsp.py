"""kestrel: the same tasks through `kestrel-lsp` over stdio, as an editor drives it.

One server process per run (env: KESTREL_PROVIDER=fim, KESTREL_BASE_URL=<llama.cpp>/v1,
KESTREL_MODEL=<model name>, KESTREL_LOCAL=0), a temporary workspace folder as rootUri, and
per task: write + didOpen `tasks/<entry_point>.py`, inlineCompletion at the cursor (Automatic
trigger), take the first item, apply its insertText over its range (which may replace text),
didClose. Latency is request -> response.

The client is pygls' own LanguageClient (the server's stderr goes to a log file: an unread
stderr pipe would block the server).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient

log = logging.getLogger(__name__)


def server_command(kestrel_src: str | None = None) -> list[str]:
    """The installed console script next to this interpreter, else `python -m kestrel`
    (always the latter for another source tree, which goes first on PYTHONPATH)."""
    script = Path(sys.executable).with_name("kestrel-lsp")
    base = [str(script)] if script.exists() and not kestrel_src else [sys.executable, "-m", "kestrel"]
    return [*base, "--log-level", "WARNING"]


def server_env(base_url: str, model: str, fim_template: str | None = None, kestrel_src: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KESTREL_", "OPENAI_"))}
    env.update(KESTREL_PROVIDER="fim", KESTREL_BASE_URL=base_url, KESTREL_MODEL=model, KESTREL_LOCAL="0")
    if fim_template:
        env["KESTREL_FIM_TEMPLATE"] = fim_template
    if kestrel_src:  # a directory holding the `kestrel` package (e.g. an export of another commit's pyserver/)
        env["PYTHONPATH"] = os.pathsep.join([kestrel_src, *filter(None, [env.get("PYTHONPATH")])])
    return env


# --- positions (LSP default encoding: UTF-16 code units) ---------------------------------
def _u16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def position_of(text: str, offset: int) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    return types.Position(line=line, character=_u16(before[before.rfind("\n") + 1 :]))


def offset_of(text: str, pos: types.Position) -> int:
    start = 0
    for _ in range(pos.line):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    end = text.find("\n", start)
    line = text[start : end if end >= 0 else len(text)]
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(line)


def apply_item(document: str, cursor: int, item: types.InlineCompletionItem) -> tuple[str, str]:
    """(the document after accepting `item`, the text inserted). Honours `item.range`."""
    text = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
    if item.range is None:
        start = end = cursor
    else:
        start, end = offset_of(document, item.range.start), offset_of(document, item.range.end)
    return document[:start] + text + document[end:], text


@dataclass
class LspAnswer:
    document: str  # the editor's text after accepting the first item (unchanged if none)
    text: str  # the inserted text ("" when nothing was shown)
    latency_ms: float
    replaced: int  # characters the item's range replaced (0 = a plain insertion)
    error: str | None = None


class _Client(LanguageClient):
    async def spawn(self, cmd: list[str], env: dict[str, str], stderr: Any, cwd: str) -> None:
        server = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env, cwd=cwd,
        )
        assert server.stdout is not None and server.stdin is not None
        self.protocol.set_writer(server.stdin)
        connection = asyncio.create_task(run_async(
            stop_event=self._stop_event, reader=server.stdout, protocol=self.protocol, logger=log,
            error_handler=self.report_server_error,
        ))
        self._server = server
        self._async_tasks.extend([connection, asyncio.create_task(self._server_exit())])


class KestrelSession:
    """One kestrel-lsp process and a temporary workspace folder."""

    def __init__(self, base_url: str, model: str, log_path: Path, fim_template: str | None = None,
                 kestrel_src: str | None = None) -> None:
        self.kestrel_src = kestrel_src
        self.base_url = base_url
        self.model = model
        self.log_path = log_path
        self.fim_template = fim_template
        self.client = _Client("kestrel-quality-eval", "1")
        self.workspace = Path(tempfile.mkdtemp(prefix="kestrel-eval-ws-"))
        self._log: Any = None

        @self.client.feature("kestrel/status")
        def _status(params: Any) -> None:
            pass

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def _log_message(params: Any) -> None:
            pass

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def _show_message(params: Any) -> None:
            pass

    @property
    def proc(self) -> asyncio.subprocess.Process | None:
        return self.client._server  # type: ignore[attr-defined]

    async def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        (self.workspace / "tasks").mkdir(parents=True, exist_ok=True)
        await self.client.spawn(server_command(self.kestrel_src),
                                server_env(self.base_url, self.model, self.fim_template, self.kestrel_src), self._log,
                                str(self.workspace))
        caps = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                inline_completion=types.InlineCompletionClientCapabilities(dynamic_registration=False),
                synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
                code_action=types.CodeActionClientCapabilities(  # as VS Code: the fix is computed on resolve
                    resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]), data_support=True),
            ),
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
        )
        root = self.workspace.as_uri()
        result = await self.client.initialize_async(types.InitializeParams(
            capabilities=caps, process_id=os.getpid(), root_uri=root,
            workspace_folders=[types.WorkspaceFolder(uri=root, name=self.workspace.name)],
        ))
        if result.capabilities.inline_completion_provider is None:
            raise RuntimeError("kestrel-lsp does not advertise textDocument/inlineCompletion")
        self.client.initialized(types.InitializedParams())
        await self._wait_ready()

    async def _wait_ready(self, timeout: float = 60.0) -> None:
        """The provider is created after `initialized`: wait for a status that says so."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                st = await self.client.protocol.send_request_async("kestrel/getStatus", None)
            except Exception:
                st = None
            state = getattr(st, "state", None) if not isinstance(st, dict) else st.get("state")
            if state in ("ready", "busy"):
                return
            if state == "unconfigured":
                raise RuntimeError("kestrel-lsp says it is unconfigured")
            await asyncio.sleep(0.05)
        log.warning("kestrel-lsp did not report ready in %.0f s; continuing", timeout)

    async def complete(self, name: str, prefix: str, suffix: str) -> LspAnswer:
        document = prefix + suffix
        cursor = len(prefix)
        path = self.workspace / "tasks" / f"{name}.py"
        path.write_text(document, encoding="utf-8")
        uri = path.as_uri()
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=document)))
        params = types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(document, cursor),
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic),
        )
        error = None
        t0 = time.perf_counter()
        try:
            result = await self.client.text_document_inline_completion_async(params)
        except Exception as exc:  # an error answer counts as nothing shown
            result, error = None, f"{type(exc).__name__}: {exc}"
        latency = (time.perf_counter() - t0) * 1000
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        path.unlink(missing_ok=True)
        items = (result.items if isinstance(result, types.InlineCompletionList) else result) or []
        if not items:
            return LspAnswer(document, "", latency, 0, error)
        new_doc, text = apply_item(document, cursor, items[0])
        replaced = len(document) - (len(new_doc) - len(text))
        return LspAnswer(new_doc, text, latency, replaced, error)

    async def stop(self) -> None:
        proc = self.proc
        try:
            if proc is not None and proc.returncode is None:
                await asyncio.wait_for(self.client.shutdown_async(None), 10)
                self.client.exit(None)
                await asyncio.wait_for(proc.wait(), 10)
        except Exception:
            pass
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        try:
            await asyncio.wait_for(self.client.stop(), 5)
        except Exception:
            pass
        if self._log is not None:
            self._log.close()
        shutil.rmtree(self.workspace, ignore_errors=True)
