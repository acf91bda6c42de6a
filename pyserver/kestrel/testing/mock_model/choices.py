"""The ``choices`` wire format shared by Chat Completions and legacy Completions.

Both stream ``data: {chunk}`` SSE frames with the same envelope (id, object,
created, model, system_fingerprint, choices), an optional usage chunk and
``data: [DONE]``; their non-streaming bodies share the same envelope too.  A
subclass only spells its ``choices[0]`` entries.
"""

from __future__ import annotations

import time
from typing import Any

from .script import Plan
from .streaming import HttpGeneration
from .wire import JSON, MALFORMED, new_id, sse_data


def usage_chat(plan: Plan, n: int) -> dict[str, Any]:
    return {
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": n,
        "total_tokens": plan.prompt_tokens + n,
    }


class ChoiceGeneration(HttpGeneration):
    id_prefix = ""
    object = ""  # non-streaming object type
    chunk_object = ""  # streaming chunk object type
    head_choices: tuple[str, ...] = ()  # choices of the chunks sent before the first token
    token_choice = ("", "")  # a token chunk's choice is token_choice[0] + JSON(token) + token_choice[1]
    finish_choice = ("", "")  # the last choice is finish_choice[0] + JSON(finish_reason) + finish_choice[1]
    malformed = sse_data(MALFORMED)

    def __init__(self, body: dict, model: str, plan: Plan) -> None:
        super().__init__(body, model, plan)
        self.id = new_id(self.id_prefix)
        self.created = int(time.time())

    def message_choice(self, text: str) -> dict[str, Any]:
        """``choices[0]`` of the non-streaming body."""
        raise NotImplementedError

    def json_body(self, tokens: list[str]) -> dict:
        return {
            "id": self.id,
            "object": self.object,
            "created": self.created,
            "model": self.model,
            "choices": [self.message_choice("".join(tokens))],
            "usage": usage_chat(self.plan, len(tokens)),
            "system_fingerprint": "fp_mock",
        }

    def open_stream(self) -> list[bytes]:
        self.include_usage = bool((self.body.get("stream_options") or {}).get("include_usage"))
        common = '{"id":"' + self.id + '","object":"' + self.chunk_object + '","created":' + str(self.created)
        common += ',"model":' + JSON(self.model) + ',"system_fingerprint":"fp_mock","choices":'
        self.common = common
        self.pre = ("data: " + common + "[" + self.token_choice[0]).encode()
        self.post = (self.token_choice[1] + "]}\n\n").encode()
        return [self.chunk(c) for c in self.head_choices]

    def chunk(self, choice: str) -> bytes:
        return sse_data(self.common + "[" + choice + "]}")

    def token(self, tok: str) -> bytes:
        return self.pre + JSON(tok).encode() + self.post

    def tail(self, sent: list[str]) -> list[bytes]:
        before, after = self.finish_choice
        frames = [self.chunk(before + JSON(self.plan.finish_reason) + after)]
        if self.include_usage:
            frames.append(sse_data(self.common + '[],"usage":' + JSON(usage_chat(self.plan, len(sent))) + "}"))
        frames.append(sse_data("[DONE]"))
        return frames
