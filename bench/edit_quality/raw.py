"""raw: the same model asked in a chat, as a user would ask it, with the same facts Kestrel's own
prompts carry (see PROMPTS.md): the file (so its imports), the diagnostic as the editor reports
it (quick fix) or the instruction with the failing test as pasted (inline edit), and Kestrel's
sentence about a needed import. Greedy, one answer, one request.

The answer is applied the way a user applies a chat answer: from its first Python code block,
the definitions (functions, classes) replace the file's ones of the same name in place, new ones
go just above the target function, import lines the file lacks go to its import block; anything
else in the block (asserts and example calls echoed from the question, prints, a `__main__`
block) is left out. A block that does not parse is applied only if it holds the function: from
its `def` line to the end of that function's indentation."""

from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass
from typing import Any

from .data import EditTask

SYSTEM = ("You are an expert Python programmer. You fix the problem in the code, changing as little as possible. "
          "If the fix needs a new import, put the import line first in your code block.")
MAX_TOKENS = 1024
_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.S)
_IMPORT = re.compile(r"^(import\s+\w|from\s+[\w.]+\s+import\s)")


def path_of(task: EditTask) -> str:
    return f"{task.entry_point}.py"


def messages(task: EditTask) -> list[dict[str, str]]:
    if task.diagnostic is not None:
        d = task.diagnostic
        problem = (f"{path_of(task)}, line {d['range']['start']['line'] + 1}: {d['source']} {d['code']}: "
                   f"{d['message']}\n\nFix this.")
    else:
        problem = task.instruction
    user = (f"```python\n{task.broken}\n```\n{problem}\n\nReply with the corrected function `{task.entry_point}` "
            "in a code block.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def code_block(answer: str) -> str | None:
    blocks = _BLOCK.findall(answer)
    return blocks[0].strip("\n") if blocks else None


def _definitions(code: str) -> tuple[list[str], list[tuple[str, str]]] | None:
    """(import lines, [(name, source)] of top-level defs/classes) of a block, None if it does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    lines = code.split("\n")
    imports, defs = [], []
    for node in tree.body:
        text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports += [ln for ln in text.split("\n") if ln.strip()]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            defs.append((node.name, "\n".join(lines[first - 1 : node.end_lineno])))
    return imports, defs


def _function_by_indentation(code: str, name: str) -> tuple[list[str], list[tuple[str, str]]]:
    lines = code.split("\n")
    imports = [ln for ln in lines if _IMPORT.match(ln)]
    start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*def {re.escape(name)}\s*\(", ln)), None)
    if start is None:
        return imports, []
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= indent:
            break
        if lines[i].strip():
            end = i
    body = [ln[indent:] if ln[:indent].isspace() else ln for ln in lines[start : end + 1]]
    return imports, [(name, "\n".join(body))]


def _top_level_spans(document: str) -> dict[str, tuple[int, int]]:
    try:
        tree = ast.parse(document)
    except SyntaxError:
        return {}
    return {n.name: (min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1, n.end_lineno - 1)
            for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def apply_answer(task: EditTask, code: str) -> tuple[str, str | None]:
    """(the document after the user applies the block, why nothing was applied or None)."""
    found = _definitions(code)
    if found is None:
        found = _function_by_indentation(code, task.entry_point)
    imports, defs = found
    if not any(name == task.entry_point for name, _ in defs):
        return task.broken, f"the answer has no function `{task.entry_point}`"
    lines = task.broken.split("\n")
    spans = _top_level_spans(task.broken)
    first, last = task.target
    spans[task.entry_point] = (first, last)  # the target as the harness knows it (the buggy file may not parse)
    replaced: list[tuple[int, int, list[str]]] = []
    helpers: list[str] = []
    for name, src in defs:
        if name in spans:
            lo, hi = spans[name]
            replaced.append((lo, hi, src.split("\n")))
        else:
            helpers += src.split("\n") + ["", ""]
    for lo, hi, new in sorted(replaced, reverse=True):
        if lo == first and helpers:
            new = helpers + new
        lines[lo : hi + 1] = new
    document = "\n".join(lines)
    have = set(document.split("\n"))
    missing = [ln for ln in dict.fromkeys(imports) if ln not in have]
    if missing:
        from kestrel.edits.quick_fix import import_insertion_offset

        at = import_insertion_offset(document)
        document = document[:at] + "".join(ln + "\n" for ln in missing) + document[at:]
    return document, None


@dataclass
class RawEditAnswer:
    document: str
    latency_ms: float
    offered: bool
    error: str | None = None
    made_by: str = "model"


class RawChatFix:
    def __init__(self, base_url: str, model: str) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.client = AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0, timeout=600)

    async def fix(self, task: EditTask) -> RawEditAnswer:
        document = task.broken
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
        new, why = apply_answer(task, code)
        if why:
            return RawEditAnswer(document, latency, False, why)
        return RawEditAnswer(new, latency, new != document, None if new != document else "the answer changes nothing")

    async def close(self) -> None:
        await self.client.close()
