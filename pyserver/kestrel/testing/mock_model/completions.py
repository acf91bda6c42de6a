"""``POST /v1/completions``: legacy Completions (FIM ``suffix``, ``stop``), SSE or JSON."""

from __future__ import annotations

from typing import Any

from .choices import ChoiceGeneration
from .script import haystack


class Completion(ChoiceGeneration):
    id_prefix = "cmpl-"
    object = "text_completion"
    chunk_object = "text_completion"
    token_choice = ('{"text":', ',"index":0,"logprobs":null,"finish_reason":null}')
    finish_choice = ('{"text":"","index":0,"logprobs":null,"finish_reason":', "}")

    @staticmethod
    def plan_inputs(body: dict) -> tuple[str, Any, Any]:
        return haystack(body.get("prompt"), body.get("suffix")), body.get("stop"), body.get("max_tokens")

    def message_choice(self, text: str) -> dict[str, Any]:
        return {"text": text, "index": 0, "logprobs": None, "finish_reason": self.plan.finish_reason}
