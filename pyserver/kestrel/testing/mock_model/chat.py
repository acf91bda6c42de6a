"""``POST /v1/chat/completions``: Chat Completions, SSE chunks or one JSON body."""

from __future__ import annotations

import json
from typing import Any

from .choices import ChoiceGeneration
from .script import Plan, haystack
from .wire import JSON, new_id


class ChatCompletion(ChoiceGeneration):
    id_prefix = "chatcmpl-"
    object = "chat.completion"
    chunk_object = "chat.completion.chunk"
    head_choices = ('{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}',)
    token_choice = ('{"index":0,"delta":{"content":', '},"logprobs":null,"finish_reason":null}')
    finish_choice = ('{"index":0,"delta":{},"logprobs":null,"finish_reason":', "}")

    @staticmethod
    def plan_inputs(body: dict) -> tuple[str, Any, Any]:
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        return haystack(body.get("messages")), body.get("stop"), max_tokens

    def __init__(self, body: dict, model: str, plan: Plan) -> None:
        super().__init__(body, model, plan)
        # The plan's native calls as the API spells them (none when the request offered no tools: state.plan).
        self.calls = [{"id": new_id("call_"), "type": "function",
                       "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})}}
                      for c in plan.tool_calls]

    def message_choice(self, text: str) -> dict[str, Any]:
        calls = self.calls
        message: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else ""), "refusal": None}
        if calls:
            message["tool_calls"] = calls
        return {"index": 0, "message": message, "logprobs": None,
                "finish_reason": "tool_calls" if calls else self.plan.finish_reason}

    def tail(self, sent: list[str]) -> list[bytes]:
        """Native calls stream as `delta.tool_calls` (the name first, the arguments in pieces), then the
        finish reason says `tool_calls`."""
        calls = self.calls
        if not calls:
            return super().tail(sent)
        frames = []
        for k, call in enumerate(calls):
            args = call["function"]["arguments"]
            head = {"index": k, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}
            pieces = [args[: len(args) // 2], args[len(args) // 2 :]]
            for delta in [head, *({"index": k, "function": {"arguments": piece}} for piece in pieces if piece)]:
                frames.append(self.chunk('{"index":0,"delta":{"tool_calls":[' + JSON(delta) + ']},"logprobs":null,"finish_reason":null}'))
        rest = super().tail(sent)
        finish = self.chunk(self.finish_choice[0] + JSON(self.plan.finish_reason) + self.finish_choice[1])
        assert rest[0] == finish
        return frames + [self.chunk(self.finish_choice[0] + JSON("tool_calls") + self.finish_choice[1])] + rest[1:]
