"""Agent runs (`kestrel/agent`): the model reads the workspace through tools until it can answer
(agent/loop.py), streamed as `kestrel/chatDelta` with each step's tools as `kestrel/agentStep`.
Steered and stopped with `kestrel/steer` / `kestrel/stopChat` on the run's id. With `allowWrites`
and a client that confirms annotated edits, it may propose changes (agent/write_tools.py); with
`allowCommands`, run the commands the user approves one by one (agent/run_tool.py)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable

from lsprotocol import types

from .. import protocol
from ..agent.native_probe import NativeToolsCache
from ..core import Core, chat_guard
from ..protocol import AgentParams, AgentResult, SteerParams, SteerResult

if TYPE_CHECKING:
    from ..agent.loop import AgentRun, Runner
    from ..agent.read_tools import ToolResult
    from ..agent.tool_calls import ToolCall
    from ..agent.write_tools import ProposedChange, WorkspaceWriter

READ_BACK_S = 0.5  # how long an accepted change may take to reach the server as the editor's text
RUN, DONT_RUN = "Run", "Don't run"  # the user's answers to a command the agent asks to run

# The agent's loop and tools are imported by the first run, not at the server's start
# (docs/design-notes.md#pyserverkestrelcompiled_methodspy).


class AgentFeature:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.runs: dict[str, AgentRun] = {}
        self.native_tools = NativeToolsCache()

    async def run(self, params: AgentParams) -> AgentResult:
        from ..agent.loop import DEFAULT_STEPS, MAX_STEPS, AgentRun, run_agent
        from ..agent.read_tools import WorkspaceReader
        from ..agent.write_tools import WorkspaceWriter, client_can_review
        from ..chat.fit import known_window

        core = self.core
        await core.host.wait_ready()
        run_id = params.id or f"agent-{time.monotonic_ns()}"
        messages = protocol.conversation(params.messages, params.prompt)
        refused = chat_guard.cannot_start(core, messages)  # secrets and oversized text never reach a model
        if refused:
            return AgentResult.refused(run_id, refused)
        provider = core.host.provider
        assert provider is not None  # cannot_start said so, and nothing ran since
        if not core.workspace.roots:
            return AgentResult.refused(run_id, "the agent reads a workspace: open a folder first")
        if run_id in self.runs:
            return AgentResult.refused(run_id, f"an agent run with the id {run_id} is already working")
        settings = core.host.settings
        cap = settings.local.chat_max_tokens if core.host.embedded.running else settings.chat.max_tokens
        steps = min(max(params.max_steps or DEFAULT_STEPS, 1), MAX_STEPS)
        run = self.runs[run_id] = AgentRun(run_id)
        if not core.codebase.ready.is_set():
            core.index_codebase()  # search_code uses the index; the other tools read the disk
        core.status.generation_started()
        try:
            # The embedded model prints its calls (never native): no probe for it.
            native = not core.host.embedded.running and await self.native_tools.native(provider)
            reader = WorkspaceReader(core.codebase, self._open_text)
            # Writes only where the client asked for them (VS Code: a trusted workspace) and asks the user
            # before keeping an edit (change annotations that need confirmation).
            may_write = bool(params.allow_writes) and client_can_review(core.server.client_capabilities)
            write = self._proposer(run_id, WorkspaceWriter(reader)) if may_write else None
            # Commands only where the client allowed them (VS Code: a trusted workspace); each one is put to
            # the user (window/showMessageRequest, which every client shows) and runs only on their Run.
            commands = (self._commander(run_id, core.workspace.roots[-1], params.allowed_commands or [])
                        if params.allow_commands else None)
            result = await run_agent(run, provider, core.chat_engine, messages, reader, core.notify, steps,
                                     cap or None, native=native, write=write, run_command=commands,
                                     window=known_window(core.host))
        finally:  # also when the run raised or was cancelled: the status bar must not stay busy
            self.runs.pop(run_id, None)
            core.status.busy = max(core.status.busy - 1, 0)
            core.status.publish()
        return protocol.from_wire(result, AgentResult)

    def _open_text(self, file: Path) -> str | None:
        return self.core.documents.text(file.as_uri())

    def _proposer(self, run_id: str, writer: WorkspaceWriter) -> Callable[[list[ToolCall]], Awaitable[list[ToolResult]]]:
        """A step's write calls → their changes proposed to the user together (one `workspace/applyEdit`,
        every hunk needing confirmation) → what they kept of each file, told to the model per call."""
        from ..agent.read_tools import ToolResult
        from ..agent.write_tools import outcome, together, workspace_edit

        async def propose(calls: list[ToolCall]) -> list[ToolResult]:
            # In a thread: a rename's analysis (jedi) reads the project, and the server keeps serving meanwhile.
            changes, planned = await asyncio.to_thread(writer.plan, [(c.name, c.arguments) for c in calls])
            results: dict[int, ToolResult] = {}
            if changes:
                verb = "create" if all(c.before is None for c in changes) else "change"
                label = f"Kestrel agent: {verb} {', '.join(c.rel for c in changes)}"
                # The step's text (its calls) is done with; the client says where the user's answer is awaited.
                self.core.notify("kestrel/agentReview", {"id": run_id, "files": [c.rel for c in changes]})
                try:
                    answer = await self.core.server.workspace_apply_edit_async(
                        types.ApplyWorkspaceEditParams(edit=workspace_edit(changes, label), label=label))
                    applied = bool(answer and answer.applied)
                    for k, change in enumerate(changes):
                        results[k] = outcome(change, applied, await self._read_back(change) if applied else None)
                except Exception as exc:  # noqa: BLE001 - the client failed the request: the model is told, the run goes on
                    for k, change in enumerate(changes):
                        results[k] = ToolResult(False, f"the editor could not apply the change to {change.rel} ({exc}); nothing was changed")
            return [ToolResult(False, str(p)) if isinstance(p, Exception) else together([results[k] for k in p])
                    for p in planned]

        return propose

    def _commander(self, run_id: str, root: Path, allowed: list[str]) -> Runner:
        """A command call → the user asked about that exact command (unless their allow-list covers it) →
        run in `root` if they said Run → what came of it, told to the model. The chat is told first, so it
        can say what is awaited."""
        from ..agent.read_tools import ToolRefused, ToolResult
        from ..agent.run_tool import allowed_unasked, command_of, run_command

        async def run(call: ToolCall, agent_run: AgentRun) -> ToolResult:
            try:
                command = command_of(call.arguments)
            except ToolRefused as exc:
                return ToolResult(False, str(exc))
            if allowed_unasked(command, allowed):
                return await running(command, agent_run)
            self.core.notify("kestrel/agentReview", {"id": run_id, "files": [], "command": command})
            try:
                answer = await self.core.server.window_show_message_request_async(types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=f"Kestrel's agent asks to run a command in {root.name}:\n\n{command}",
                    # Don't run first: the default a stray Enter picks (VS Code's modal, Neovim's prompt).
                    actions=[types.MessageActionItem(title=DONT_RUN), types.MessageActionItem(title=RUN)]))
            except Exception as exc:  # noqa: BLE001 - the client failed the request: nothing runs, the model is told
                return ToolResult(False, f"the editor could not ask the user about `{command}` ({exc}); it was not run")
            if agent_run.stopped:
                return ToolResult(False, f"the run was stopped; `{command}` was not run")
            if answer is None or answer.title != RUN:
                return ToolResult(False, f"The user chose not to run `{command}`; it was not run. Do not ask for it "
                                         "again; go on without it or answer.")
            return await running(command, agent_run)

        async def running(command: str, agent_run: AgentRun) -> ToolResult:
            self.core.notify("kestrel/agentReview", {"id": run_id, "files": [], "command": command, "running": True})
            try:
                return (await run_command(command, root, lambda: agent_run.stopped)).for_model(command)
            except OSError as exc:  # /bin/sh missing, the folder gone: the model is told, the run goes on
                return ToolResult(False, f"`{command}` could not be started ({exc.strerror or exc})")

        return run

    async def _read_back(self, change: ProposedChange) -> str | None:
        """The file's text after the user's review: the editor's (VS Code opened every file of the
        preview, so the server holds it; a change arrives a moment after the answer), else the disk's
        (a client that saves what it applies); None when neither can be read."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + READ_BACK_S
        text = self.core.documents.text(change.uri)
        while (text is None or text == change.before) and loop.time() < deadline:
            await asyncio.sleep(0.02)
            text = self.core.documents.text(change.uri)
        if text is not None:
            return text
        if change.before is None and not change.file.exists():
            return ""  # a new file left out
        try:
            return change.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def steer(self, params: SteerParams) -> SteerResult | None:
        """A steer for a run between two model calls (its tools are running): kept for the next call.
        None when the id is no run of the agent's, or its model call is streaming (the turn streamer
        steers that, as in chat)."""
        run = self.runs.get(params.id)
        if run is None or run.streaming:
            return None
        refused = chat_guard.refusal(self.core, [params.text])
        if refused or not params.text.strip():
            return SteerResult(accepted=False, error=refused or "the steering message is empty")
        run.steers.append(params.text)
        return SteerResult(accepted=True, mode="queued")

    def stop(self, run_id: str) -> bool:
        run = self.runs.get(run_id)
        if run is None:
            return False
        run.stopped = True
        self.core.chat_engine.stop(run_id)
        return True
