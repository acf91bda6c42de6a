"""What the two raw systems send: the model's FIM prompt on the file alone (bench.quality.raw's
`fim_prompt`, the windows of bench.quality.lang_tasks.raw_window), and the same with the oracle
definitions in Qwen2.5-Coder's repository format:

    <|repo_name|>{repo}\\n
    <|file_sep|>{path}\\n{content}\\n            (one per context file)
    <|file_sep|>{current path}\\n<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>

A `<|file_sep|>` header with no other files made the 0.5B ignore the suffix (shared/DESIGN.md);
with no context files this falls back to the bare FIM prompt.

`RepoFim` is bench.quality.raw.RawFim (same stops, caps and single-line cut) that can also send a
whole prompt, and carry a key for an OpenAI-compatible endpoint other than the local llama.cpp.
"""

from __future__ import annotations

import time
from typing import Any

from bench.quality.raw import MODEL_STOPS, SINGLE_LINE_CAP, RawAnswer, RawFim, cut_single_line, fim_prompt

REPO_NAME, FILE_SEP = "<|repo_name|>", "<|file_sep|>"


def repo_prompt(repo: str, context: tuple[tuple[str, str], ...] | list[tuple[str, str]], path: str, prefix: str,
                suffix: str) -> str:
    """Qwen2.5-Coder's repository-level FIM prompt (see the module docstring)."""
    if not context:
        return fim_prompt(prefix, suffix)
    files = "".join(f"{FILE_SEP}{p}\n{content}\n" for p, content in context)
    return f"{REPO_NAME}{repo}\n{files}{FILE_SEP}{path}\n{fim_prompt(prefix, suffix)}"


class RepoFim(RawFim):
    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        super().__init__(base_url, model)
        if api_key:
            from openai import AsyncOpenAI

            self.client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=300)

    async def complete_prompt(self, prompt: str) -> RawAnswer:
        """One line for `prompt` (single-line treatment: cut after the first newline)."""
        t0 = time.perf_counter()
        text, n, finish = "", 0, "stop"
        stream: Any = await self.client.completions.create(
            model=self.model, prompt=prompt, max_tokens=SINGLE_LINE_CAP, temperature=0, stream=True, stop=MODEL_STOPS)
        try:
            async for chunk in stream:
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                if choice.text:
                    text += choice.text
                    n += 1
                if "\n" in text:
                    text, finish = cut_single_line(text), "newline"
                    break
                if choice.finish_reason:
                    finish = choice.finish_reason
        finally:
            await stream.close()  # closes the HTTP stream: llama.cpp stops generating
        return RawAnswer(text, (time.perf_counter() - t0) * 1000, n, finish)
