"""What an applied edit did: fixed (the tests pass), harm (it changed text outside its target, or
ruff finds something new that neither the working nor the broken file has), lines changed."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from bench.quality import scoring

from . import lint
from .data import EditTask, program
from .mutate import def_line


@dataclass(frozen=True)
class Verdict:
    fixed: bool
    harm: bool
    outside: bool  # touched text outside the target
    new_findings: list[str]
    lines_changed: int
    result: str


def _is_import(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith(("import ", "from "))


def changes(before: str, after: str) -> tuple[int, list[tuple[int, int, list[str], list[str]]]]:
    """(lines changed, the changed runs as (first old line, end old line, old lines, new lines))."""
    a, b = before.split("\n"), after.split("\n")
    runs = []
    n = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            n += max(i2 - i1, j2 - j1)
            runs.append((i1, i2, a[i1:i2], b[j1:j2]))
    return n, runs


def touched_outside(task: EditTask, after: str) -> bool:
    """The target is the broken function (its `def` line to the end); a quick fix may also add or
    change import lines above it (a missing import is fixed there)."""
    before = task.mutant.broken
    name = task.mutant.problem.entry_point
    first = def_line(before, name) or 0
    for i1, _i2, old, new in changes(before, after)[1]:
        if i1 >= first:
            continue
        if task.family == "quick-fix" and all(_is_import(x) for x in old + new):
            continue
        return True
    return False


class EditScorer:
    def __init__(self, timeout: float = scoring.TIMEOUT_S) -> None:
        self.timeout = timeout
        self._memo: dict[str, scoring.Outcome] = {}
        self._known: dict[str, set[tuple[str, str]]] = {}  # per task: findings of its working and broken file

    async def verdict(self, task: EditTask, after: str) -> Verdict:
        m = task.mutant
        source = program(m, after)
        outcome = self._memo.get(source)
        if outcome is None:
            outcome = self._memo[source] = await scoring.run_async(source, self.timeout)
        n, _ = changes(m.broken, after)
        if after == m.broken:
            return Verdict(False, False, False, [], 0, outcome.result)
        known = self._known.get(task.task_id)
        if known is None:  # raw and Kestrel are scored against the same two files
            known = self._known[task.task_id] = {lint.key(f) for f in lint.ruff_json(m.original) + lint.ruff_json(m.broken)}
        fresh = [f"{c}: {msg}" for c, msg in (lint.key(f) for f in lint.ruff_json(after)) if (c, msg) not in known]
        outside = touched_outside(task, after)
        return Verdict(outcome.passed, outside or bool(fresh), outside, fresh, n, outcome.result)
