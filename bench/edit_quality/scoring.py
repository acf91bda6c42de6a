"""What an applied edit did, judged by the task's tests and by where it changed the file.

- fixed: every counted test passes (synthetic and HumanEvalFix: the HumanEval check; QuixBugs:
  the program's tests that pass with the correct function; CanItEdit: the program's tests, i.e. the
  instructed change is made).
- harm: a counted test that passed on the broken file fails after the edit, or the edit changed
  code outside its target (the function). Adding import lines, or a new top-level function or
  class (a helper the fix brings), is not "outside": a user applying a fix expects those.
- the ESLint set (TypeScript quick fixes) has no tests: ESLint's own fix is the truth, see
  eslint_set.judge; its new findings are ESLint's.
- new lint findings (ruff F, E9, that neither the working nor the broken file has) are reported
  on their own; they are not harm (Kestrel checks them before it offers anything, so counting them
  as harm would score its own filter).
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from typing import Any

from bench.quality import scoring

from . import canitedit, eslint_set, lint, quixbugs
from .data import EditTask


@dataclass(frozen=True)
class Verdict:
    fixed: bool
    harm: bool
    outside: bool  # touched code outside the target
    broke: list[str]  # counted tests that passed before and fail now
    new_findings: list[str]
    lines_changed: int
    result: str
    passed: list[str] = field(default_factory=list)


def _is_import(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith(("import ", "from "))


def changes(before: str, after: str) -> tuple[int, list[tuple[int, int, list[str], list[str], int]]]:
    """(lines changed, the changed runs as (first old line, end old line, old lines, new lines, first new line))."""
    a, b = before.split("\n"), after.split("\n")
    runs = []
    n = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            n += max(i2 - i1, j2 - j1)
            runs.append((i1, i2, a[i1:i2], b[j1:j2], j1))
    return n, runs


def _new_definition_lines(before: str, after: str) -> set[int]:
    """0-based lines of `after` that belong to top-level functions/classes `before` does not define."""
    def names(src: str) -> dict[str, tuple[int, int]]:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            return {}
        return {n.name: (n.lineno - 1 - len(getattr(n, "decorator_list", [])), n.end_lineno - 1) for n in tree.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}

    old = names(before)
    return {i for name, (lo, hi) in names(after).items() if name not in old for i in range(lo, hi + 1)}


def touched_outside(task: EditTask, after: str) -> bool:
    """Did the edit change anything outside the target lines, other than imports and new definitions?"""
    first, last = task.target
    runs = changes(task.broken, after)[1]
    new_defs = _new_definition_lines(task.broken, after) if runs else set()

    def harmless(new: list[str], j1: int) -> bool:
        return all(_is_import(x) or (j1 + k) in new_defs for k, x in enumerate(new))

    for i1, i2, old, new, j1 in runs:
        outside_old = [x for k, x in enumerate(old, i1) if not first <= k <= last]
        if i1 == i2:  # an insertion before old line i1: inside the target, or indented right after it
            within = first < i1 <= last or (i1 == last + 1 and all(not x.strip() or x[:1].isspace() for x in new))
            if within or harmless(new, j1):
                continue
            return True
        if not outside_old:
            continue  # only the function's own lines changed
        if all(_is_import(x) for x in outside_old) and harmless(new, j1) if len(outside_old) == len(old) else \
                all(_is_import(x) for x in outside_old):
            continue  # import lines (a straddling run: its inside part is the function's own business)
        return True
    return False


@dataclass(frozen=True)
class Checked:
    passed: frozenset[str]
    result: str


class EditScorer:
    def __init__(self, timeout: float = scoring.TIMEOUT_S) -> None:
        self.timeout = timeout
        self._memo: dict[tuple[str, str], Checked] = {}
        self._known: dict[str, set[tuple[str, str]]] = {}  # per task: findings of its working and broken file
        self._eslint_known: dict[str, Any] = {}  # the ESLint set: per task, the file's findings

    async def check(self, task: EditTask, document: str) -> Checked:
        key = (task.task_id, document)
        if key in self._memo:
            return self._memo[key]
        if task.set == "quixbugs":
            run = await quixbugs.run_tests_async(task.entry_point, document)
            passed = frozenset(run.passed() & task.counted)
            missing = [t for t in run.tests if t in task.counted and t not in passed]
            missing += sorted(task.counted - set(run.tests))
            if not missing:
                result = "passed"
            else:
                text = run.texts.get(missing[0], "")
                err = next((ln[4:].strip() for ln in text.split("\n") if ln.startswith("E   ")), "did not run")
                result = f"failed: {len(missing)} of {len(task.counted)} tests, {missing[0]}: {err[:150]}"
        elif task.set == "canitedit":  # the program's own tests after the file
            outcome = await canitedit.run_async(document, task.check_code)
            passed = frozenset({"check"}) if outcome.passed else frozenset()
            result = outcome.result
        else:  # HumanEval-style: the problem's check function after the file
            source = f"{document}\n\n{task.check_code}\ncheck({task.entry_point})\n"
            outcome = await scoring.run_async(source, self.timeout)
            passed = frozenset({"check"}) if outcome.passed else frozenset()
            result = outcome.result
        checked = self._memo[key] = Checked(passed, result)
        return checked

    async def _eslint_verdict(self, task: EditTask, after: str) -> Verdict:
        """ESLint's findings instead of tests (see eslint_set.judge); harm = lines outside the finding changed."""
        n, _ = changes(task.broken, after)
        if after == task.broken:
            return Verdict(False, False, False, [], [], 0, "nothing changed")
        fixed, fresh, result = await eslint_set.judge(task, after, self._eslint_known)
        outside = touched_outside(task, after)
        return Verdict(fixed, outside, outside, [], fresh, n, result, ["check"] if fixed else [])

    def counted(self, task: EditTask) -> frozenset[str]:
        return task.counted if task.set == "quixbugs" else frozenset({"check"})

    async def verdict(self, task: EditTask, after: str) -> Verdict:
        if task.set == "eslint":
            return await self._eslint_verdict(task, after)
        checked = await self.check(task, after)
        fixed = self.counted(task) <= checked.passed
        n, _ = changes(task.broken, after)
        if after == task.broken:
            return Verdict(False, False, False, [], [], 0, checked.result, sorted(checked.passed))
        broke = sorted(task.passing_before - checked.passed)
        known = self._known.get(task.task_id)
        if known is None:  # raw and Kestrel are scored against the same two files
            known = self._known[task.task_id] = {lint.key(f) for f in lint.ruff_json(task.original) + lint.ruff_json(task.broken)}
        fresh = [f"{c}: {msg}" for c, msg in (lint.key(f) for f in lint.ruff_json(after)) if (c, msg) not in known]
        outside = touched_outside(task, after)
        return Verdict(fixed, outside or bool(broke), outside, broke, fresh, n, checked.result, sorted(checked.passed))
