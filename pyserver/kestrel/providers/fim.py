"""`fim`: `/v1/completions` with an explicit fill-in-the-middle prompt per model family.

We build the FIM string ourselves rather than relying on the server's `suffix=` support,
which is missing or broken on several local servers (llama-cpp-python 0.3.36 among them).
"""

from __future__ import annotations

from typing import AsyncIterator

from ..config import Settings
from .base import CompletionPrompt, StreamStats
from .chat import ChatCompletionsProvider
from .prompts import fim_template_for


class FimProvider(ChatCompletionsProvider):
    kind = "fim"

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.template = fim_template_for(self.model, settings.fim_template)

    async def complete(self, prompt: CompletionPrompt, stats: StreamStats) -> AsyncIterator[str]:
        # No reasoning effort here: `/v1/completions` has none, and ghost text must stay instant. Chat
        # turns and fixes go through the inherited `chat` (with the effort where the model takes one).
        params = {
            "model": self.model,
            "prompt": self.template.render(prompt),
            "max_tokens": prompt.max_tokens,
            "temperature": 0.0,
            "stop": list(self.template.stop + prompt.stop)[:4] if _strict_stop_limit(self.settings) else list(self.template.stop + prompt.stop),
        }
        if prompt.top_logprobs:
            params["logprobs"] = prompt.top_logprobs
        async with self.http.sse(self.http.completion_client.completions, **params) as events:
            async for event in events:
                for choice in event.get("choices") or ():
                    if choice.get("finish_reason"):
                        stats.stop_reason = choice["finish_reason"]
                    text = choice.get("text")
                    if prompt.top_logprobs:
                        _keep_logprobs(choice.get("logprobs"), stats)
                    if text:
                        stats.mark_delta()
                        yield text


def _keep_logprobs(logprobs: dict | None, stats: StreamStats) -> None:
    """The legacy completions shape: parallel lists `tokens` and `top_logprobs` (one dict per token)."""
    if not logprobs:
        return
    for token, top in zip(logprobs.get("tokens") or (), logprobs.get("top_logprobs") or ()):
        if isinstance(token, str) and isinstance(top, dict):
            stats.tokens.append((token, {str(k): float(v) for k, v in top.items()}))


def _strict_stop_limit(settings: Settings) -> bool:
    """OpenAI's own /v1/completions accepts at most 4 stop sequences; local servers take more."""
    return "api.openai.com" in (settings.base_url or "")
