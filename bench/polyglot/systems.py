"""The two systems on an exercise, each given the same facts (the instructions, the file, and on the
second try the test output), each answer applied as its user would apply it.

- **raw**: the model in a chat with Aider's "whole" edit format (our wording): the answer is the file's
  whole new text in a fenced block; the block is the new file. No block = a malformed answer.
- **kestrel**: `kestrel/edit` (the inline edit) over the whole file, the request as its instruction, the
  returned edits applied. Kestrel's checks (it parses, no new lint, nothing lost) decide what is offered;
  nothing offered leaves the file as it was.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from bench.edit_quality.data import EditTask
from bench.edit_quality.lsp import EditSession

from .data import Exercise

MAX_TOKENS = 1024  # the longest reference solution is ~1,000 tokens; the median ~400 (Kestrel's chat cap on a CPU is 1,024 too)
RAW_SYSTEM = (
    "You are an expert software developer. To change a file, reply with the file's whole new content in "
    "one fenced code block, with the file's name on the line just before the block. Always give the "
    "complete file: never leave parts out or write placeholders for them."
)
_BLOCK = re.compile(r"```[^\n`]*\n(.*?)```", re.S)


def first_request(ex: Exercise) -> str:
    """The task as a user writes it (the same words for both systems)."""
    return (f"{ex.instructions}\n"
            f"Use these instructions to change {ex.solution_file}. Keep the names of its functions and classes "
            "(tests use them). Use only Python's standard library.")


def retry_request(ex: Exercise, output: str) -> str:
    return (f"The tests fail:\n\n{output}\n\nThe tests are right: change the code in {ex.solution_file} "
            "so that they pass.")


@dataclass
class Answer:
    document: str  # the file after applying the answer (unchanged when nothing could be applied)
    seconds: float
    well_formed: bool  # raw: a fenced block that parses as Python; kestrel: an edit offered (it parsed)
    error: str | None = None


def _parses(code: str) -> bool:
    try:
        compile(code, "<answer>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def whole_file(answer: str, solution_file: str) -> str | None:
    """The block that is the new file: the last one the file's name introduces, else the longest."""
    blocks = list(_BLOCK.finditer(answer))
    if not blocks:
        return None
    named = [b for b in blocks if solution_file in "\n".join(answer[:b.start()].split("\n")[-3:])]
    return (named[-1] if named else max(blocks, key=lambda b: len(b.group(1)))).group(1)


class RawWhole:
    def __init__(self, base_url: str, model: str) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.client = AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0, timeout=900)

    async def answer(self, ex: Exercise, history: list[dict[str, str]], document: str) -> tuple[Answer, list[dict[str, str]]]:
        """`history`: the conversation so far (the user's last message last); the reply and the new history."""
        t0 = time.perf_counter()
        try:
            resp: Any = await self.client.chat.completions.create(
                model=self.model, messages=[{"role": "system", "content": RAW_SYSTEM}, *history],
                temperature=0, max_tokens=MAX_TOKENS)
            text = resp.choices[0].message.content or ""
        except Exception as exc:  # noqa: BLE001 - recorded as the try's error
            return Answer(document, time.perf_counter() - t0, False, f"{type(exc).__name__}: {exc}"), history
        seconds = time.perf_counter() - t0
        history = [*history, {"role": "assistant", "content": text}]
        code = whole_file(text, ex.solution_file)
        if code is None:
            return Answer(document, seconds, False, "no code block in the answer"), history
        if not _parses(code):
            return Answer(document, seconds, False, "the file in the answer does not parse"), history
        return Answer(code, seconds, True), history

    async def close(self) -> None:
        await self.client.close()


async def kestrel_edit(kest: EditSession, ex: Exercise, document: str, request: str, attempt: int) -> Answer:
    """`kestrel/edit` over the whole file (as a user selects all and asks)."""
    lines = document.split("\n")
    last = len(lines) - 1
    while last > 0 and not lines[last].strip():
        last -= 1
    task = EditTask("polyglot", "inline-edit", "exercise", f"polyglot/{ex.name}/{attempt}", ex.name,
                    original=ex.reference, broken=document, entry_point=ex.solution_file.removesuffix(".py"),
                    target=(0, last), request=request)
    ans = await kest.inline_edit(task)
    return Answer(ans.document, ans.latency_ms / 1000, ans.offered, None if ans.offered else ans.error)
