"""Chat (`kestrel/chat`, `kestrel/steer`, `kestrel/stopChat`): one streamed, steerable turn
per request. Tokens reach the editor as `kestrel/chatDelta` from `chat.engine.ChatEngine`."""

from __future__ import annotations

import time

from .. import protocol
from ..core import Core
from ..protocol import ChatParams, ChatResult, SteerParams, SteerResult, StopChatParams
from . import chat_guard


class ChatFeature:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def turn(self, params: ChatParams) -> ChatResult:
        core = self.core
        await core.host.wait_ready()
        turn_id = params.id or f"turn-{time.monotonic_ns()}"
        messages = ([protocol.to_wire(message) for message in params.messages] if params.messages
                    else [{"role": "user", "content": params.prompt or ""}])
        refused = chat_guard.refusal(core, messages)  # secrets and oversized text never reach a model
        if refused:
            return ChatResult.refused(turn_id, refused)
        provider = core.host.provider
        if provider is None:
            return ChatResult.refused(turn_id, core.status.message or "no model is configured")
        core.status.generation_started()
        try:
            result = await core.chat_engine.turn(provider, turn_id, messages)
        finally:  # also when the turn raised or was cancelled: the status bar must not stay busy
            core.status.busy = max(core.status.busy - 1, 0)
            core.status.publish()
        return protocol.from_wire(result, ChatResult)

    async def steer(self, params: SteerParams) -> SteerResult:
        """Redirect a running turn (a chat answer or an inline edit) without starting over."""
        refused = chat_guard.refusal(self.core, [params.text])
        if refused:
            return SteerResult(accepted=False, error=refused)
        return protocol.from_wire(await self.core.chat_engine.steer(params.id, params.text), SteerResult)

    def stop(self, params: StopChatParams) -> bool:
        return self.core.chat_engine.stop(params.id)
