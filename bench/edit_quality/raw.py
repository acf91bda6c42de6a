"""raw: the same model asked in a chat, as a user would ask it, with the same facts Kestrel's own
prompts carry (see PROMPTS.md): the file (so its imports), the diagnostic as the editor reports
it (quick fix), the instruction with the failing test as pasted (inline edit) or the benchmark's
instruction (instructed edit), and Kestrel's sentence about a needed import. Greedy, one answer,
one request.

The answer is applied the way a user applies a chat answer: from its first Python code block,
the definitions (functions, classes) replace the file's ones of the same name in place, new ones
go just above the target function (instructed edits: below the target's last definition; and
when the answer has none of the target's names, a rename, in the target's place), import lines
the file lacks go to its import block; anything else in the block (asserts and example calls
echoed from the question, prints, a `__main__` block) is left out. A block that does not parse is
applied only if it holds the function: from its `def` line to the end of that function's
indentation."""

from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass
from typing import Any

from .data import EditTask

SYSTEM = ("You are an expert Python programmer. You fix the problem in the code, changing as little as possible. "
          "If the fix needs a new import, put the import line first in your code block.")
# Instructed edits (CanItEdit) are not repairs: the same sentences, about the change asked for.
SYSTEM_INSTRUCTED = ("You are an expert Python programmer. You change the code as the user asks, changing nothing else. "
                     "If the change needs a new import, put the import line first in your code block.")
MAX_TOKENS = 1024
_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.S)
_IMPORT = re.compile(r"^(import\s+\w|from\s+[\w.]+\s+import\s)")


def path_of(task: EditTask) -> str:
    return f"{task.entry_point}.py"


def target_names(task: EditTask) -> list[str]:
    """The top-level functions and classes the target overlaps (the entry point when the file does not parse)."""
    first, last = task.target
    names = [name for name, (lo, hi) in _top_level_spans(task.broken).items() if lo <= last and hi >= first]
    return names or [task.entry_point]


def _asked_for(task: EditTask) -> str:
    """What the reply is asked to hold: the target's function, or (an instructed edit) its definitions."""
    if not task.request:
        return f"the corrected function `{task.entry_point}`"
    names = target_names(task)
    if len(names) > 1:
        return "the changed " + ", ".join(f"`{n}`" for n in names[:-1]) + f" and `{names[-1]}`"
    kinds = _top_level_kinds(task.broken)
    return f"the changed {kinds.get(names[0], 'function')} `{names[0]}`"


def diagnostic_lines(task: EditTask) -> tuple[int, int]:
    d = task.diagnostic or {}
    return d["range"]["start"]["line"], d["range"]["end"]["line"]


def window_messages(task: EditTask) -> list[dict[str, str]]:
    """A quick fix in a file too long to paste whole (the ESLint set's real TypeScript files): the
    lines around the finding, as many as Kestrel's prompt shows, and a request for the corrected
    finding's lines, which the user then pastes over them."""
    from kestrel.edits.quick_fix import CONTEXT_LINES

    first, last = diagnostic_lines(task)
    lines = task.broken.split("\n")
    shown = "\n".join(lines[max(first - CONTEXT_LINES, 0) : last + CONTEXT_LINES + 1])
    d = task.diagnostic or {}
    what = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
    # The asked-for lines shown again, last, as Kestrel's prompt does (quick_fix.fix_messages): both see
    # the same facts in the same form; Kestrel's own choice is which lines (the statement) to ask for.
    asked = "\n".join(lines[first : last + 1])
    user = (f"```{task.language}\n{shown}\n```\ntasks/{task.filename}, line {first + 1}: {d['source']} {d['code']}: "
            f"{d['message']}\n\nThe problem is in {what}:\n```{task.language}\n{asked}\n```\n"
            "Fix it. Reply with only these lines, corrected, in a code block.")
    system = SYSTEM.replace("Python", _LANGUAGE_NAMES.get(task.language, task.language))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_LANGUAGE_NAMES = {"typescript": "TypeScript", "javascript": "JavaScript", "go": "Go", "rust": "Rust"}


def apply_lines(task: EditTask, code: str) -> str:
    """The answer's block over the lines it was asked for."""
    first, last = diagnostic_lines(task)
    lines = task.broken.split("\n")
    lines[first : last + 1] = code.split("\n")
    return "\n".join(lines)


def messages(task: EditTask) -> list[dict[str, str]]:
    if task.set == "eslint":
        return window_messages(task)
    if task.diagnostic is not None:
        d = task.diagnostic
        problem = (f"{path_of(task)}, line {d['range']['start']['line'] + 1}: {d['source']} {d['code']}: "
                   f"{d['message']}\n\nFix this.")
    else:
        problem = task.instruction
    user = f"```python\n{task.broken}\n```\n{problem}\n\nReply with {_asked_for(task)} in a code block."
    return [{"role": "system", "content": SYSTEM_INSTRUCTED if task.request else SYSTEM}, {"role": "user", "content": user}]


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


def _top_level_defs(document: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    try:
        tree = ast.parse(document)
    except SyntaxError:
        return []
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _top_level_spans(document: str) -> dict[str, tuple[int, int]]:
    return {n.name: (min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1, n.end_lineno - 1)
            for n in _top_level_defs(document)}


def _top_level_kinds(document: str) -> dict[str, str]:
    return {n.name: "class" if isinstance(n, ast.ClassDef) else "function" for n in _top_level_defs(document)}


def apply_answer(task: EditTask, code: str) -> tuple[str, str | None]:
    """(the document after the user applies the block, why nothing was applied or None)."""
    found = _definitions(code)
    if found is None:
        found = _function_by_indentation(code, task.entry_point)
    imports, defs = found
    wanted = target_names(task)
    # An instructed edit may rename or replace what it is about: then the answer's definitions take its place.
    renamed = not any(name in wanted for name, _ in defs)
    if renamed and not (task.request and defs):
        return task.broken, f"the answer has no function `{task.entry_point}`"
    lines = task.broken.split("\n")
    spans = _top_level_spans(task.broken)
    spans.setdefault(task.entry_point, task.target)  # the target as the harness knows it (the buggy file may not parse)
    ours = [spans[n] for n in wanted if n in spans] or [spans[task.entry_point]]
    ops: list[tuple[int, int, list[str]]] = []  # (first line, last line, new lines); last < first: an insertion
    added: list[str] = []
    for name, src in defs:
        if name in spans:
            ops.append((*spans[name], src.split("\n")))
        elif task.request:
            added += ["", ""] + src.split("\n")
        else:
            added += src.split("\n") + ["", ""]
    if renamed and not added:
        return task.broken, f"the answer has no function `{task.entry_point}`"
    if renamed:  # the answer's new definitions in place of the target's
        ops.append((min(lo for lo, _ in ours), max(hi for _, hi in ours), added[2:]))
    elif added:  # a fix's helpers go above its function; an instructed edit's new code after the code it is about
        at = max(hi for _, hi in ours) + 1 if task.request else spans[task.entry_point][0]
        ops.append((at, at - 1, added))
    for lo, hi, new in sorted(ops, key=lambda op: (op[0], op[1] >= op[0]), reverse=True):
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
        new, why = (apply_lines(task, code), None) if task.set == "eslint" else apply_answer(task, code)
        if why:
            return RawEditAnswer(document, latency, False, why)
        return RawEditAnswer(new, latency, new != document, None if new != document else "the answer changes nothing")

    async def close(self) -> None:
        await self.client.close()
