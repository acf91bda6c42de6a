"""ChatEngine: run one chat turn, streaming deltas to the client as notifications.

Deltas are coalesced per event-loop tick: at 1,000+ tokens/s, one JSON-RPC notification per
token costs more than the token; a notification per tick keeps latency at one tick.
Stopping a turn cancels only its model stream: the turn still answers with what arrived.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from ..providers.base import Provider, ProviderError, StreamStats


class ChatEngine:
    def __init__(self, notify: Callable[[str, Any], None]) -> None:
        self._notify = notify
        self._streams: dict[str, asyncio.Task] = {}

    async def turn(self, provider: Provider, turn_id: str, messages: list[dict]) -> dict:
        stats = StreamStats()
        parts: list[str] = []
        pending: list[str] = []
        flush_scheduled = False
        loop = asyncio.get_running_loop()

        def flush() -> None:
            nonlocal flush_scheduled
            flush_scheduled = False
            if pending:
                self._notify("kestrel/chatDelta", {"id": turn_id, "delta": "".join(pending)})
                pending.clear()

        async def pump() -> None:
            nonlocal flush_scheduled
            async for delta in provider.chat(messages, stats):
                parts.append(delta)
                pending.append(delta)
                if not flush_scheduled:
                    flush_scheduled = True
                    loop.call_soon(flush)

        stream = loop.create_task(pump())
        self._streams[turn_id] = stream
        result: dict = {"id": turn_id}
        try:
            await asyncio.shield(stream)
        except ProviderError as exc:
            result["error"] = exc.message  # the partial answer stays: nothing streamed is lost
        except asyncio.CancelledError:
            if not stream.cancelled():  # our caller was cancelled, not the stream: stop it too
                stream.cancel()
                raise
            result["stopped"] = True
        finally:
            self._streams.pop(turn_id, None)
            flush()
        result.update(text="".join(parts), ttftMs=stats.ttft_ms)
        return result

    def stop(self, turn_id: str) -> bool:
        stream = self._streams.get(turn_id)
        if stream is None or stream.done():
            return False
        stream.cancel()
        return True
