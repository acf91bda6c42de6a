"""``POST /v1/chat/completions``: Chat Completions, SSE chunks or one JSON body."""

from __future__ import annotations

from typing import Any

from .choices import ChoiceGeneration
from .script import haystack


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

    def message_choice(self, text: str) -> dict[str, Any]:
        return {
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": None},
            "logprobs": None,
            "finish_reason": self.plan.finish_reason,
        }
