"""One trial of an agent task: a fresh copy of its workspace, `kestrel-lsp` over stdio opened on it, the
request sent as `kestrel/agent` with the write and run tools, the client playing a user who keeps every
proposed change (applied and saved to disk, as VS Code's Refactor Preview with everything ticked then
Save), lets `python -m pytest` run unasked (the allow-list) and declines any other command. Then the
task's check on the folder."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from bench.edit_quality.lsp import apply_text_edits
from bench.lsp_client import KestrelClient, client_capabilities, server_command, stop_server, wait_ready

from .tasks import ALLOWED_COMMANDS, AgentTask

# The endpoint's context window, as a user of their own llama.cpp server sets it (`chat.contextTokens`):
# the agent keeps its history within it (agent/history.py). The bench's llama.cpp reads N_CTX tokens.

MAX_STEPS = 10


def capabilities() -> types.ClientCapabilities:
    """The bench client's, plus what the agent's writes need (a client that confirms annotated edits) and
    the questions it asks (`window/showMessageRequest`)."""
    caps = client_capabilities()
    caps.workspace = types.WorkspaceClientCapabilities(apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(
        document_changes=True, change_annotation_support=types.ChangeAnnotationsSupportOptions(groups_on_label=True),
        resource_operations=[types.ResourceOperationKind.Create]))
    caps.window = types.WindowClientCapabilities(show_message=types.ShowMessageRequestClientCapabilities())
    return caps


def apply_to_disk(edit: types.WorkspaceEdit) -> None:
    """A WorkspaceEdit as an editor applies it and saves: created files, then each document's edits."""
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(change.uri.removeprefix("file://"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        elif isinstance(change, types.TextDocumentEdit):
            path = Path(change.text_document.uri.removeprefix("file://"))
            path.write_text(apply_text_edits(path.read_text(encoding="utf-8"), list(change.edits)), encoding="utf-8")


def _fields(value: Any) -> dict[str, Any]:
    """A result object's fields (pygls reads a custom method's result as namedtuples)."""
    return value._asdict() if hasattr(value, "_asdict") else dict(value or {})


async def trial(task: AgentTask, env: dict[str, str], log: Any, n: int, kestrel_src: str | None = None,
                context_tokens: int = 0) -> dict[str, Any]:
    """Trial `n` of `task`: the outcome, the steps and calls (a failed call with what the model was told),
    seconds. `context_tokens`: the endpoint's window, told to Kestrel as `chat.contextTokens` (0: not told)."""
    folder = Path(tempfile.mkdtemp(prefix="kestrel-agent-task-"))
    task.fill(folder)
    client = KestrelClient("kestrel-agent-tasks")
    asked: list[str] = []
    client.feature(types.WORKSPACE_APPLY_EDIT)(
        lambda params: (apply_to_disk(params.edit), types.ApplyWorkspaceEditResult(applied=True))[1])
    client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(lambda params: (asked.append(params.message), None)[1])
    await client.spawn(server_command(console_script=not kestrel_src), env, log, Path(tempfile.mkdtemp()))
    folder_ref = types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)
    await client.initialize_async(types.InitializeParams(capabilities=capabilities(), process_id=os.getpid(),
                                                         root_uri=folder_ref.uri, workspace_folders=[folder_ref],
                                                         initialization_options={"kestrel": {"chat": {"contextTokens": context_tokens}}}))
    client.initialized(types.InitializedParams())
    await wait_ready(client, 120.0, connected=False, strict=False)
    started = time.perf_counter()
    try:
        result = await client.protocol.send_request_async("kestrel/agent", {
            "id": f"{task.id}#{n}", "prompt": task.request, "maxSteps": MAX_STEPS, "allowWrites": True,
            "allowCommands": True, "allowedCommands": ALLOWED_COMMANDS})
        error = getattr(result, "error", None)
    except Exception as exc:  # noqa: BLE001 - a failed run is a failed trial, reported
        result, error = None, f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - started
    await stop_server(client, timeout=10.0)
    passed, why = task.check(folder)
    steps = list(getattr(result, "steps", None) or [])
    calls = [c for s in steps for c in s.calls]
    return {"task": task.id, "kind": task.kind, "trial": n, "passed": passed, "why": why, "seconds": round(seconds, 1),
            "steps": len(steps), "calls": [c.name for c in calls], "failedCalls": sum(not c.ok for c in calls),
            "refusals": [f"{c.name}: {c.result[:200]}" for c in calls if not c.ok],
            "refusedArguments": [{k: str(v)[:160] for k, v in _fields(c.arguments).items()} for c in calls if not c.ok],
            "declined": asked, "stepLimit": bool(getattr(result, "stepLimit", False)), "error": error,
            "trimmed": getattr(result, "trimmed", None), "answer": (getattr(result, "text", "") or "")[:300]}
