"""`chat`: Chat Completions SSE — Cerebras, Groq, vLLM, Ollama, llama.cpp, any OpenAI-compatible server."""

from __future__ import annotations

from typing import AsyncIterator

from .base import CompletionPrompt, ProviderError, StreamStats
from .openai_http import HttpProvider
from .prompts import completion_messages
from .reasoning import COMPLETION_EFFORT, chat_completions_effort, is_openai_reasoning_model


# llama.cpp's Python server answers a prompt longer than the model's context window with a stream that
# ends at once, empty and with no error (the same request unstreamed is a clear HTTP 400).
NOTHING_BACK = ("the model's server ended the answer without sending anything or saying why; a prompt longer "
                "than the model's context window does that on llama.cpp: send less")


class ChatCompletionsProvider(HttpProvider):
    kind = "chat"
    native_tools = True

    @property
    def supports_prediction(self) -> bool:
        # OpenAI's reasoning models refuse `prediction` (HTTP 400), as they refuse `max_tokens`.
        if is_openai_reasoning_model(self.model):
            return False
        return "api.openai.com" in (self.settings.base_url or "") or self.settings.predicted_outputs

    def complete(self, prompt: CompletionPrompt, stats: StreamStats) -> AsyncIterator[str]:
        # Ghost text runs at the lowest effort (where the model takes one): it must be instant.
        return self.chat(completion_messages(prompt), stats, max_tokens=prompt.max_tokens, temperature=0.0,
                         retries=False, effort=COMPLETION_EFFORT)

    async def chat(
        self, messages: list[dict], stats: StreamStats, *, max_tokens: int | None = None,
        temperature: float | None = None, retries: bool = True, prediction: str | None = None,
        deterministic: bool = False, effort: str | None = None, tools: list[dict] | None = None,
        top_logprobs: int = 0,
    ) -> AsyncIterator[str]:
        params: dict = {"model": self.model, "messages": messages}
        if tools:
            params["tools"] = tools
        if top_logprobs:  # each answer token's alternatives land in `stats.tokens`
            params["logprobs"], params["top_logprobs"] = True, top_logprobs
        # Chat turns and fixes use the configured effort (read per request: the picker changes it live).
        reasoning_effort = chat_completions_effort(self.model, effort or self.settings.effort)
        if reasoning_effort:
            params["reasoning_effort"] = reasoning_effort
        fixed_sampling = is_openai_reasoning_model(self.model)
        if deterministic and temperature is None:
            temperature = 0.0  # a fix or an edit: the model's best answer, not a sample (servers default to ~0.8)
        if prediction is not None and self.supports_prediction:
            # Predicted Outputs: unchanged text streams at full speed (OpenAI Chat Completions only).
            params["prediction"] = {"type": "content", "content": prediction}
        if max_tokens:
            # OpenAI's reasoning models refuse `max_tokens` (HTTP 400): they take `max_completion_tokens`.
            params["max_completion_tokens" if fixed_sampling else "max_tokens"] = max_tokens
        if temperature is not None and not fixed_sampling:  # (they refuse any temperature but the default)
            params["temperature"] = temperature
        client = self.http.client if retries else self.http.completion_client
        async with self.http.sse(client.chat.completions, **params) as events:
            calls: dict[int, dict] = {}
            seen = False
            async for event in events:
                seen = True
                for choice in event.get("choices") or ():
                    if choice.get("finish_reason"):
                        stats.stop_reason = choice["finish_reason"]  # "length": cut at its token limit
                    delta = choice.get("delta") or {}
                    for part in delta.get("tool_calls") or ():
                        _add_call_delta(calls, part)
                    if top_logprobs:
                        _keep_logprobs(choice.get("logprobs"), stats)
                    text = delta.get("content")
                    if text:
                        stats.mark_delta()
                        yield text
            stats.tool_calls.extend(calls[k] for k in sorted(calls) if calls[k]["function"]["name"])
            if not seen:
                raise ProviderError(NOTHING_BACK)


def _keep_logprobs(logprobs: dict | None, stats: StreamStats) -> None:
    """Chat Completions' shape: `content`, one entry per token with its `top_logprobs` list."""
    for entry in (logprobs or {}).get("content") or ():
        top = {str(t.get("token")): float(t.get("logprob")) for t in entry.get("top_logprobs") or ()
               if isinstance(t, dict) and t.get("logprob") is not None}
        if isinstance(entry.get("token"), str) and top:
            stats.tokens.append((entry["token"], top))


def _add_call_delta(calls: dict[int, dict], part: dict) -> None:
    """One streamed piece of a native call: the first names it, later ones add to its arguments."""
    call = calls.setdefault(int(part.get("index") or 0),
                            {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
    fn = part.get("function") or {}
    call["id"] = part.get("id") or call["id"]
    call["function"]["name"] += fn.get("name") or ""
    call["function"]["arguments"] += fn.get("arguments") or ""
