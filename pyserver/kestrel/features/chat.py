"""Chat (`kestrel/chat`, `kestrel/steer`, `kestrel/stopChat`): one streamed, steerable turn
per request. Tokens reach the editor as `kestrel/chatDelta` from `chat.engine.ChatEngine`."""

from __future__ import annotations

import time
from typing import Any

from ..core import Core, plain
from . import chat_guard


class ChatFeature:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def turn(self, params: Any) -> dict:
        core = self.core
        data = plain(params) or {}
        await core.host.wait_ready()
        turn_id = str(data.get("id") or f"turn-{time.monotonic_ns()}")
        messages = data.get("messages") or [{"role": "user", "content": str(data.get("prompt", ""))}]
        refused = chat_guard.refusal(core, messages)  # secrets and oversized text never reach a model
        if refused:
            return {"id": turn_id, "text": "", "error": refused}
        provider = core.host.provider
        if provider is None:
            return {"id": turn_id, "text": "", "error": core.status.message or "no model is configured"}
        core.status.generation_started()
        result = await core.turns.turn(provider, turn_id, messages)
        core.status.busy = max(core.status.busy - 1, 0)
        core.status.publish()
        return result

    async def steer(self, params: Any) -> dict:
        """Redirect a running turn (a chat answer or an inline edit) without starting over."""
        data = plain(params) or {}
        refused = chat_guard.refusal(self.core, [str(data.get("text", ""))])
        if refused:
            return {"accepted": False, "error": refused}
        return await self.core.turns.steer(str(data.get("id", "")), str(data.get("text", "")))

    def stop(self, params: Any) -> bool:
        data = plain(params) or {}
        return self.core.turns.stop(str(data.get("id", "")))
