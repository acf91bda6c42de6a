"""`chat`: Chat Completions SSE — Cerebras, Groq, vLLM, Ollama, llama.cpp, any OpenAI-compatible server."""

from __future__ import annotations

from typing import AsyncIterator

from .base import CompletionPrompt, StreamStats
from .openai_http import HttpProvider
from .prompts import completion_messages


class ChatCompletionsProvider(HttpProvider):
    kind = "chat"

    @property
    def supports_prediction(self) -> bool:
        return "api.openai.com" in (self.settings.base_url or "") or self.settings.predicted_outputs
    def complete(self, prompt: CompletionPrompt, stats: StreamStats) -> AsyncIterator[str]:
        return self.chat(completion_messages(prompt), stats, max_tokens=prompt.max_tokens, temperature=0.0,
                         retries=False)

    async def chat(
        self, messages: list[dict], stats: StreamStats, *, max_tokens: int | None = None,
        temperature: float | None = None, retries: bool = True, prediction: str | None = None,
        deterministic: bool = False,
    ) -> AsyncIterator[str]:
        params: dict = {"model": self.model, "messages": messages}
        if deterministic and temperature is None:
            temperature = 0.0  # a fix or an edit: the model's best answer, not a sample (servers default to ~0.8)
        if prediction is not None and self.supports_prediction:
            # Predicted Outputs: unchanged text streams at full speed (OpenAI Chat Completions only).
            params["prediction"] = {"type": "content", "content": prediction}
        if max_tokens:
            params["max_tokens"] = max_tokens
        if temperature is not None:
            params["temperature"] = temperature
        client = self.http.client if retries else self.http.completion_client
        async with self.http.sse(client.chat.completions, **params) as events:
            async for event in events:
                for choice in event.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        stats.mark_delta()
                        yield text
