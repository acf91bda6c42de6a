"""`responses`: the Responses API over HTTP SSE (and the WebSocket provider's fallback)."""

from __future__ import annotations

from typing import AsyncIterator

from ..config import Settings
from .base import CompletionPrompt, ProviderError, StreamBrokenError, StreamStats
from .openai_http import HttpProvider
from .prompts import completion_messages

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})


def responses_params(
    settings: Settings, messages: list[dict], *, max_tokens: int | None, effort: str | None,
    tools: list[dict] | None = None,
) -> dict:
    """Map chat-style messages onto Responses `instructions` + `input` (an assistant's native calls
    become `function_call` items, a `tool` message a `function_call_output`), and Chat Completions'
    function tools onto the Responses' flat ones."""
    instructions = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    items: list[dict] = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m.get("tool_call_id") or "", "output": m.get("content") or ""})
            continue
        if m.get("content") or not m.get("tool_calls"):
            items.append({"role": m["role"], "content": m.get("content") or ""})
        for call in m.get("tool_calls") or ():
            fn = call.get("function") or {}
            items.append({"type": "function_call", "call_id": call.get("id") or "", "name": fn.get("name") or "",
                          "arguments": fn.get("arguments") or "{}"})
    params: dict = {"model": settings.model, "input": items, "store": False}
    if tools:
        # `strict` off: the tools' schemas have optional parameters, which strict mode refuses.
        params["tools"] = [{"type": "function", "name": t["function"]["name"], "strict": False,
                            "description": t["function"].get("description", ""),
                            "parameters": t["function"].get("parameters") or {"type": "object", "properties": {}}}
                           for t in tools]
    if instructions:
        params["instructions"] = instructions
    if max_tokens:
        params["max_output_tokens"] = max_tokens
    if effort:
        params["reasoning"] = {"effort": effort}
    return params


def text_of(event: dict, stats: StreamStats) -> str | None:
    """The text delta in a Responses event, or None; raises on failure events."""
    kind = event.get("type")
    if kind == "response.output_item.done" and (event.get("item") or {}).get("type") == "function_call":
        item = event["item"]  # a native call, complete: kept in Chat Completions' shape
        stats.tool_calls.append({"id": item.get("call_id") or item.get("id") or "", "type": "function",
                                 "function": {"name": item.get("name") or "", "arguments": item.get("arguments") or ""}})
        return None
    if kind == "response.output_text.delta":
        delta = event.get("delta")
        if delta:
            stats.mark_delta()
        return delta
    if kind in ("response.completed", "response.incomplete"):
        details = (event.get("response") or {}).get("incomplete_details") or {}
        stats.stop_reason = "length" if details.get("reason") == "max_output_tokens" else "stop"
        return None
    if kind == "response.failed":
        err = ((event.get("response") or {}).get("error") or {}).get("message") or "unknown error"
        raise ProviderError(f"the model failed: {err}")
    if kind == "error":
        err = event.get("error") or event
        raise StreamBrokenError(f"the model reported an error: {err.get('message') or err.get('code') or 'unknown'}")
    return None


class ResponsesHttpProvider(HttpProvider):
    kind = "responses"
    native_tools = True

    def complete(self, prompt: CompletionPrompt, stats: StreamStats) -> AsyncIterator[str]:
        # Inline completion always runs at the lowest effort: it must be instant.
        return self.chat(completion_messages(prompt), stats, max_tokens=prompt.max_tokens, effort="low", retries=False)

    async def chat(
        self, messages: list[dict], stats: StreamStats, *, max_tokens: int | None = None, effort: str | None = None,
        retries: bool = True, prediction: str | None = None,  # (Predicted Outputs: Chat Completions only)
        deterministic: bool = False,  # (reasoning models take no temperature: the effort setting rules)
        tools: list[dict] | None = None,
    ) -> AsyncIterator[str]:
        params = responses_params(self.settings, messages, max_tokens=max_tokens, effort=effort or self.settings.effort,
                                  tools=tools)
        client = self.http.client if retries else self.http.completion_client
        async with self.http.sse(client.responses, **params) as events:
            async for event in events:
                text = text_of(event, stats)
                if text:
                    yield text  # (read on to the end of the body: that returns the connection to the pool)
