"""`chat`: Chat Completions SSE — Cerebras, Groq, vLLM, Ollama, llama.cpp, any OpenAI-compatible server."""

from __future__ import annotations

from typing import AsyncIterator

from ..config import Settings
from .base import CompletionPrompt, StreamStats
from .openai_http import HttpStreamer
from .prompts import completion_messages


class ChatCompletionsProvider:
    kind = "chat"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model = settings.model or ""
        self.http = HttpStreamer(settings)

    @property
    def connection_state(self) -> str:
        return self.http.state

    async def prewarm(self) -> None:
        await self.http.prewarm()

    def complete(self, prompt: CompletionPrompt, stats: StreamStats) -> AsyncIterator[str]:
        return self.chat(completion_messages(prompt), stats, max_tokens=prompt.max_tokens, temperature=0.0)

    async def chat(
        self, messages: list[dict], stats: StreamStats, *, max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncIterator[str]:
        params: dict = {"model": self.model, "messages": messages}
        if max_tokens:
            params["max_tokens"] = max_tokens
        if temperature is not None:
            params["temperature"] = temperature
        async with self.http.sse(self.http.client.chat.completions, **params) as events:
            async for event in events:
                for choice in event.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        stats.mark_delta()
                        yield text

    async def aclose(self) -> None:
        await self.http.aclose()
