"""raw: one chat request to the same llama.cpp server through the openai SDK, with the whole file
and the same information Kestrel gets (the diagnostic, or the instruction with the failing
assertion): "fix this; reply with the corrected function in a code block". The code block is put
in place of the function (from its `def` line to the end of the file, where HumanEval keeps it);
whatever else the block holds (an import, a helper) goes in with it. Greedy, one answer."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from .data import EditTask
from .mutate import def_line

SYSTEM = "You are an expert Python programmer."
MAX_TOKENS = 1024
_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.S)


def messages(task: EditTask) -> list[dict[str, str]]:
    m = task.mutant
    if task.diagnostic is not None:
        d = task.diagnostic
        problem = (f"The linter ({d['source']}) reports on line {d['range']['start']['line'] + 1}: "
                   f"{d['code']}: {d['message']}")
    else:
        problem = task.instruction
    user = (f"```python\n{m.broken}\n```\n{problem}\n\nFix this. Reply with the corrected function "
            f"`{m.problem.entry_point}` in a code block.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def code_block(answer: str) -> str | None:
    blocks = _BLOCK.findall(answer)
    return blocks[0].strip("\n") if blocks else None


def put_in_place(document: str, name: str, code: str) -> str:
    """`code` in place of the function `name` (its `def` line to the end of the file)."""
    first = def_line(document, name)
    if first is None:
        return document
    lines = document.split("\n")
    return "\n".join(lines[:first]) + "\n" + code + "\n"


@dataclass
class RawEditAnswer:
    document: str
    latency_ms: float
    offered: bool
    error: str | None = None


class RawChatFix:
    def __init__(self, base_url: str, model: str) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.client = AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0, timeout=600)

    async def fix(self, task: EditTask) -> RawEditAnswer:
        document = task.mutant.broken
        t0 = time.perf_counter()
        try:
            resp: Any = await self.client.chat.completions.create(
                model=self.model, messages=messages(task), temperature=0, max_tokens=MAX_TOKENS)
            answer = resp.choices[0].message.content or ""
        except Exception as exc:
            return RawEditAnswer(document, (time.perf_counter() - t0) * 1000, False, f"{type(exc).__name__}: {exc}")
        latency = (time.perf_counter() - t0) * 1000
        code = code_block(answer)
        if code is None:
            return RawEditAnswer(document, latency, False, "no code block in the answer")
        return RawEditAnswer(put_in_place(document, task.mutant.problem.entry_point, code), latency, True)

    async def close(self) -> None:
        await self.client.close()
