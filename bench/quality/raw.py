"""raw: the model's own FIM answer, straight from llama.cpp through the openai SDK.

The prompt is the model's plain FIM prompt (`<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}
<|fim_middle|>`, the whole prefix and suffix, nothing else), greedy. Treatment per the FIM
paper:
- single-line: no stop sequence; the stream is read until its first newline and cut right
  after it (the newline is kept: the task's middle is the line *and* its newline). The
  stream is closed there, which stops llama.cpp generating. An answer without any newline
  (the model stopped first, or hit the cap) is used as it is.
- multi-line / random-span: the model's own stop (its end-of-text / FIM special tokens)
  with a token cap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

QWEN_FIM = ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
# The model's own end markers (special tokens), not heuristics: in case the server does not
# already treat them as end-of-generation.
MODEL_STOPS = ["<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>", "<|fim_prefix|>"]
SINGLE_LINE_CAP = 64  # the same caps Kestrel uses for its own requests (single-line / multi-line)
MULTI_LINE_CAP = 160


def fim_prompt(prefix: str, suffix: str) -> str:
    begin, hole, end = QWEN_FIM
    return f"{begin}{prefix}{hole}{suffix}{end}"


def cut_single_line(text: str) -> str:
    """Single-line treatment: everything up to and including the first newline."""
    nl = text.find("\n")
    return text if nl < 0 else text[: nl + 1]


@dataclass
class RawAnswer:
    text: str
    latency_ms: float
    tokens: int  # streamed chunks (one per token with llama.cpp)
    finish: str  # "newline" (single-line cut), "stop", "length", or an error


class RawFim:
    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.client = AsyncOpenAI(base_url=base_url, api_key=api_key or "local", max_retries=0, timeout=300)

    async def complete(self, prefix: str, suffix: str, single_line: bool) -> RawAnswer:
        return await self.complete_prompt(fim_prompt(prefix, suffix), single_line)

    async def complete_prompt(self, prompt: str, single_line: bool) -> RawAnswer:
        """The model's answer to a whole prompt: single-line treatment (cut after the first newline,
        SINGLE_LINE_CAP tokens) or the model's own stop (MULTI_LINE_CAP)."""
        cap = SINGLE_LINE_CAP if single_line else MULTI_LINE_CAP
        t0 = time.perf_counter()
        text, n, finish = "", 0, "stop"
        stream: Any = await self.client.completions.create(
            model=self.model, prompt=prompt, max_tokens=cap, temperature=0, stream=True, stop=MODEL_STOPS,
        )
        try:
            async for chunk in stream:
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                if choice.text:
                    text += choice.text
                    n += 1
                if single_line and "\n" in text:
                    text = cut_single_line(text)
                    finish = "newline"
                    break
                if choice.finish_reason:
                    finish = choice.finish_reason
        finally:
            await stream.close()  # closes the HTTP stream: llama.cpp stops generating
        return RawAnswer(text, (time.perf_counter() - t0) * 1000, n, finish)

    async def close(self) -> None:
        await self.client.close()
