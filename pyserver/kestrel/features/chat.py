"""Chat (`kestrel/chat`, `kestrel/steer`, `kestrel/stopChat`): one streamed, steerable turn
per request. Tokens reach the editor as `kestrel/chatDelta` from `chat.engine.ChatEngine`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import protocol
from ..context.excluded_text import message_text
from ..context.exclusion import uri_to_path
from ..core import Core
from ..protocol import CHAT_SOURCES, ChatParams, ChatResult, SteerParams, SteerResult, StopChatParams
from ..core import chat_guard

if TYPE_CHECKING:
    from ..chat import codebase

INDEX_WAIT_S = 2.0
ANSWER_TOKENS = 512  # of a small context window, kept for the answer (chat/fit.py)
# Codebase search (chat/codebase.py) is imported by the first chat turn, not at the server's start
# (docs/design-notes.md#pyserverkestrelcompiled_methodspy).


class ChatFeature:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def turn(self, params: ChatParams) -> ChatResult:
        from ..chat import codebase, fit

        core = self.core
        await core.host.wait_ready()
        turn_id = params.id or f"turn-{time.monotonic_ns()}"
        messages = protocol.conversation(params.messages, params.prompt)
        refused = chat_guard.cannot_start(core, messages)  # secrets and oversized text never reach a model
        if refused:
            return ChatResult.refused(turn_id, refused)
        provider = core.host.provider
        assert provider is not None  # cannot_start said so, and nothing ran since
        core.status.generation_started()
        try:
            sources = await self._search(params, turn_id, messages)
            settings = core.host.settings
            try:
                fitted = self._fit(messages, sources)
            except fit.DoesNotFit as exc:
                return ChatResult.refused(turn_id, str(exc))
            cap = settings.local.chat_max_tokens if core.host.embedded.running else settings.chat.max_tokens
            result = await core.chat_engine.turn(provider, turn_id, codebase.with_sources(fitted.messages, sources),
                                                 max_tokens=cap or None)
            if fitted.note:
                result["trimmed"] = f"The model reads {fit.known_window(core.host):,} tokens at most: {fitted.note}."
        finally:  # also when the turn raised or was cancelled: the status bar must not stay busy
            core.status.busy = max(core.status.busy - 1, 0)
            core.status.publish()
        if sources:
            result["sources"] = [s.ref() for s in sources]
        if sources or params.codebase:
            result["citations"], result["inventedCitations"] = codebase.citations(core.codebase, result["text"], sources)
            result["inventedPaths"] = codebase.unknown_paths(core.codebase, result["text"])
        return protocol.from_wire(result, ChatResult)

    def _fit(self, messages: list[dict], sources: list[codebase.Source]) -> Any:
        """The conversation within the model's context window, the sources and the answer's room kept
        (chat/fit.py); as it is when the window is not known (a remote model's is far larger)."""
        from ..chat import codebase, fit

        window = fit.known_window(self.core.host)
        if not window:
            return fit.Fitted(messages)
        added = fit.size(codebase.with_sources([{"role": "user", "content": ""}], sources)) if sources else 0
        return fit.fit(messages, window - ANSWER_TOKENS - added)

    async def _search(self, params: ChatParams, turn_id: str, messages: list[dict]) -> list[codebase.Source]:
        """The workspace code this question needs (none when it needs none), announced to the client
        before the answer starts. The index is read in a worker thread: the event loop keeps serving."""
        from ..chat import codebase

        core = self.core
        settings = core.host.settings
        question = codebase.question_for(params.codebase, messages, settings.chat.codebase)
        if question is None or not core.workspace.roots:
            return []
        started = time.perf_counter()
        budget = settings.local.chat_codebase_tokens if core.host.embedded.running else settings.chat.codebase_tokens
        if not core.codebase.ready.is_set():  # the first question after the start: the index is being built
            core.index_codebase()
            # A large workspace takes seconds: after INDEX_WAIT_S the question searches what is indexed so far.
            await asyncio.to_thread(core.codebase.ready.wait, INDEX_WAIT_S)
        held = "\n".join(message_text(m) for m in messages)
        recent = [Path(uri_to_path(uri)) for uri in core.documents.recent() if uri.startswith("file:")]

        def find() -> list[codebase.Source]:
            near = codebase.near_files(core.codebase, recent, held)
            return codebase.gather(core.codebase, question, budget, held, near)

        sources = await asyncio.to_thread(find)
        core.notify(CHAT_SOURCES.method, {"id": turn_id, "sources": [s.ref() for s in sources],
                                          "searchMs": round((time.perf_counter() - started) * 1000, 1)})
        return sources

    async def steer(self, params: SteerParams) -> SteerResult:
        """Redirect a running turn (a chat answer or an inline edit) without starting over."""
        refused = chat_guard.refusal(self.core, [params.text])
        if refused:
            return SteerResult(accepted=False, error=refused)
        return protocol.from_wire(await self.core.chat_engine.steer(params.id, params.text), SteerResult)

    def stop(self, params: StopChatParams) -> bool:
        return self.core.chat_engine.stop(params.id)
