"""EditTask (one task of any set: QuixBugs and HumanEvalFix, real bugs, see quixbugs.py and
humanevalfix.py; CanItEdit, instructed edits that are not repairs, see canitedit.py; synthetic, below) and the synthetic set: mutants of HumanEval solutions (see
mutate.py) kept only when they are really broken.

- quick fix: ruff reports at least one diagnostic the working file does not have; the first
  such diagnostic is the one the editor offers the fix for (as an LSP Diagnostic).
- inline edit: the file still compiles, and the problem's tests fail; the first failing
  assertion goes into the instruction, as a person would paste it.
Both: the tests fail on the broken file (a mutant the tests cannot see is dropped).
"""

from __future__ import annotations

import random
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from bench.quality import scoring
from bench.quality.data import load_problems

from . import lint, mutate
from .mutate import Mutant, def_line

SAMPLE_SEED = 13
DEFAULT_SAMPLE = {"quick-fix": 30, "inline-edit": 30}  # spread evenly over the kinds of each family
SLICE_SAMPLE = {"quick-fix": 6, "inline-edit": 6}
FAMILIES = {"quick-fix": mutate.QUICK_FIX_KINDS, "inline-edit": mutate.INLINE_KINDS}
_CHECK_LINE = re.compile(r'File "[^"]*candidate\.py", line (\d+), in check\n\s+(.+)')


@dataclass(frozen=True)
class EditTask:
    set: str  # "quixbugs", "humanevalfix" (real bugs), "canitedit" (instructed edits) or "synthetic" (mutants)
    family: str  # "quick-fix" or "inline-edit"
    kind: str
    task_id: str
    note: str  # what is wrong, for the report
    original: str  # a working file (synthetic: the solution; QuixBugs: the buggy file with the correct function)
    broken: str
    entry_point: str  # the function the edit is about
    target: tuple[int, int]  # its first and last line in `broken` (0-based): the region edited
    diagnostic: dict[str, Any] | None = None  # quick fix: the LSP diagnostic to fix
    failing: str = ""  # inline edit: the first failing test, as pasted
    counted: frozenset[str] = frozenset()  # QuixBugs: the tests that pass on `original` (the check)
    passing_before: frozenset[str] = frozenset()  # QuixBugs: those of them that pass on `broken`
    check_code: str = ""  # HumanEval-style sets: the `check(candidate)` function; CanItEdit: its tests (after the file)
    request: str = ""  # instructed sets: the benchmark's own instruction, given as it is
    mutant: Mutant | None = field(default=None, compare=False)  # synthetic: the HumanEval problem and mutation
    language: str = "python"  # the document's languageId
    filename: str = ""  # the name the editor opens it under (default: <entry_point>.py)
    lint_path: str = ""  # eslint: the file's path as ESLint is given it (package key / path in the package)

    @property
    def instruction(self) -> str:
        if self.request:
            return self.request
        if self.set == "quixbugs":
            return f"Fix the bug.\n{self.failing}"
        return f"Fix the bug. The tests fail: {self.failing}"


def target_of(document: str, name: str) -> tuple[int, int]:
    """HumanEval keeps the function last: from its `def` line to the file's last non-blank line."""
    lines = document.split("\n")
    first = def_line(document, name) or 0
    last = len(lines) - 1
    while last > first and not lines[last].strip():
        last -= 1
    return first, last


def _task(m: Mutant, family: str, **kw: Any) -> EditTask:
    return EditTask("synthetic", family, m.kind, m.task_id, m.note, m.original, m.broken, m.problem.entry_point,
                    target_of(m.broken, m.problem.entry_point), mutant=m, check_code=m.problem.test, **kw)


def program(m: Mutant, document: str) -> str:
    return f"{document}\n\n{m.problem.test}\ncheck({m.problem.entry_point})\n"


def first_failing_assertion(m: Mutant, document: str) -> str | None:
    return first_failing(program(m, document))


def first_failing(source: str) -> str | None:
    """The source line of the first assertion that fails (None when the tests pass), or the
    error the run ended with."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="kestrel-edit-eval-") as tmp:
        path = Path(tmp) / "candidate.py"
        path.write_text(source, encoding="utf-8")
        try:
            proc = subprocess.run([sys.executable, "-I", str(path)], cwd=tmp, capture_output=True, text=True,
                                  timeout=scoring.TIMEOUT_S, env=scoring._env())
        except subprocess.TimeoutExpired:
            return "the tests time out"
    if proc.returncode == 0:
        return None
    hits = _CHECK_LINE.findall(proc.stderr)
    last = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:] or ["the tests fail"]
    if hits:
        line = hits[-1][1].strip()
        return line if last[0].strip() == "AssertionError" else f"{line} ({last[0].strip()})"
    return last[0].strip()


def _check(m: Mutant) -> EditTask | None:
    family = "quick-fix" if m.kind in mutate.QUICK_FIX_KINDS else "inline-edit"
    if family == "quick-fix":
        fresh = lint.new_findings(m.original, m.broken)
        if not fresh or scoring.run_sync(program(m, m.broken)).passed:
            return None
        fresh.sort(key=lambda f: (f["location"]["row"], f["location"]["column"]))
        return _task(m, family, diagnostic=lint.to_lsp(fresh[0]))
    try:
        compile(m.broken, "candidate.py", "exec")
    except SyntaxError:
        return None
    failing = first_failing_assertion(m, m.broken)
    return None if failing is None else _task(m, family, failing=failing)


def all_tasks() -> dict[str, list[EditTask]]:
    problems = load_problems()
    muts = mutate.candidates(problems, mutate.QUICK_FIX_KINDS + mutate.INLINE_KINDS)
    with ThreadPoolExecutor(max_workers=4) as pool:
        checked = [t for t in pool.map(_check, muts) if t is not None]
    return {fam: [t for t in checked if t.family == fam] for fam in FAMILIES}


def sample(tasks: dict[str, list[EditTask]], sizes: dict[str, int] | None, seed: int = SAMPLE_SEED) -> dict[str, list[EditTask]]:
    """A seeded sample per family, as even over its kinds as the kinds allow (None: everything)."""
    if sizes is None:
        return tasks
    out = {}
    for fam, fam_tasks in tasks.items():
        n = sizes.get(fam, 0)
        kinds = FAMILIES[fam]
        by_kind = {k: [t for t in fam_tasks if t.kind == k] for k in kinds}
        picked: list[EditTask] = []
        rng = random.Random(f"{seed}:{fam}")
        pools = {k: rng.sample(v, len(v)) for k, v in by_kind.items()}
        while len(picked) < n and any(pools.values()):
            for k in kinds:
                if pools[k] and len(picked) < n:
                    picked.append(pools[k].pop())
        out[fam] = sorted(picked, key=lambda t: t.task_id)
    return out


def counts(tasks: dict[str, list[EditTask]]) -> dict[str, int]:
    c: dict[str, int] = {}
    for fam_tasks in tasks.values():
        for t in fam_tasks:
            c[t.kind] = c.get(t.kind, 0) + 1
    return c


def build_families(build: Callable[[Any], tuple[str, list[EditTask] | str]],
                   keys: Iterable[Any]) -> tuple[dict[str, list[EditTask]], dict[str, str]]:
    """Runs `build` over `keys` (two at a time: each runs tests) into ({family: tasks}, {skipped: why});
    `build` answers (key, its tasks) or (key, why it has none)."""
    out: dict[str, list[EditTask]] = {family: [] for family in FAMILIES}
    skipped: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for key, made in pool.map(build, keys):
            if isinstance(made, str):
                skipped[key] = made
            else:
                for t in made:
                    out[t.family].append(t)
    return out, skipped
