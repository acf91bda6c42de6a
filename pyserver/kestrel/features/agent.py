"""Agent runs (`kestrel/agent`): the model reads the workspace through tools until it can answer
(agent/loop.py), streamed as `kestrel/chatDelta` with each step's tools as `kestrel/agentStep`.
Steered and stopped with `kestrel/steer` / `kestrel/stopChat` on the run's id."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .. import protocol
from ..agent.native_probe import NativeToolsCache
from ..core import Core, chat_guard
from ..protocol import AgentParams, AgentResult, SteerParams, SteerResult

if TYPE_CHECKING:
    from ..agent.loop import AgentRun

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
            result = await run_agent(run, provider, core.chat_engine, messages, WorkspaceReader(core.codebase),
                                     core.notify, steps, cap or None, native=native)
        finally:  # also when the run raised or was cancelled: the status bar must not stay busy
            self.runs.pop(run_id, None)
            core.status.busy = max(core.status.busy - 1, 0)
            core.status.publish()
        return protocol.from_wire(result, AgentResult)

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
