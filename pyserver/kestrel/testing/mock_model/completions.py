"""``POST /v1/completions``: legacy Completions (FIM ``suffix``, ``stop``), SSE or JSON."""

from __future__ import annotations

import math
from typing import Any

from .choices import ChoiceGeneration
from .script import haystack
from .wire import JSON

FILLER_LOGPROB = -30.0  # the listed alternatives nobody scripted: as good as impossible


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

    def open_stream(self) -> list[bytes]:
        frames = super().open_stream()
        n = self.body.get("logprobs")
        self.top_n = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0
        self.offset = 0
        return frames

    def token(self, tok: str) -> bytes:
        if not self.top_n:
            return super().token(tok)
        # llama.cpp's shape: parallel one-element lists per streamed token.
        others = {t: lp for t, lp in self.plan.alternatives.items() if t != tok}
        left = 1.0 - sum(math.exp(lp) for lp in others.values())
        chosen = math.log(left) if left > 1e-9 else min(others.values(), default=0.0)
        top = {tok: chosen, **dict(sorted(others.items(), key=lambda kv: -kv[1])[: self.top_n - 1])}
        for i in range(self.top_n - len(top)):
            top[f"\ufffd{i}"] = FILLER_LOGPROB
        logprobs = {"text_offset": [self.offset], "token_logprobs": [chosen], "tokens": [tok], "top_logprobs": [top]}
        self.offset += len(tok)
        return self.chunk('{"text":' + JSON(tok) + ',"index":0,"logprobs":' + JSON(logprobs) + ',"finish_reason":null}')
