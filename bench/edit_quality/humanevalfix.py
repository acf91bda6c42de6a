"""HumanEvalFix (bigcode-project/octopack, MIT): the 164 HumanEval problems, each with one bug
written into its solution by hand (vendored in bench/data/humanevalfix, see its README). The
second set of real, human-made bugs beside QuixBugs; the same HumanEval problems as the synthetic
set, but bugs a person wrote (missing or extra logic, a wrong value, operator, variable or
function), not a generator's one-token slips.

A problem becomes an inline edit (the file = its prompt + buggy solution; "Fix the bug. The tests
fail: <the first failing assert>"), and also a quick fix where ruff (F, E9) reports on the buggy
file something the correct one does not have. The check is the problem's own `check` function.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.quality import scoring

from . import lint

DATA = Path(__file__).resolve().parent.parent / "data" / "humanevalfix" / "humanevalfix_python.jsonl"
DEFAULT_SAMPLE = 60  # inline edits in the default run (even over the bug types, seeded); --full: all 164
SAMPLE_SEED = 27


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def _build(row: dict[str, Any]) -> tuple[str, list[Any] | str]:
    from .data import EditTask, first_failing, target_of

    name = row["entry_point"]
    broken, original = row["prompt"] + row["buggy_solution"], row["prompt"] + row["canonical_solution"]
    check = row["test"]
    program = lambda doc: f"{doc}\n\n{check}\ncheck({name})\n"  # noqa: E731
    if not scoring.run_sync(program(original)).passed:
        return row["task_id"], "the correct solution fails its tests here"
    try:
        compile(broken, "candidate.py", "exec")
    except SyntaxError:
        return row["task_id"], "the buggy file does not parse"
    failing = first_failing(program(broken))
    if failing is None:
        return row["task_id"], "the tests pass on the buggy solution"
    number = row["task_id"].split("/")[-1]
    common = dict(kind=row["bug_type"], note=f"HumanEvalFix {number}: {row['bug_type']}", original=original,
                  broken=broken, entry_point=name, target=target_of(broken, name), check_code=check)
    tasks = [EditTask("humanevalfix", "inline-edit", task_id=f"HumanEvalFix/inline-edit/{number}", failing=failing,
                      **common)]
    fresh = lint.new_findings(original, broken)
    if fresh:
        fresh.sort(key=lambda f: (f["location"]["row"], f["location"]["column"]))
        tasks.append(EditTask("humanevalfix", "quick-fix", task_id=f"HumanEvalFix/quick-fix/{number}",
                              diagnostic=lint.to_lsp(fresh[0]), **common))
    return row["task_id"], tasks


def all_tasks() -> tuple[dict[str, list[Any]], dict[str, str]]:
    """({family: tasks}, {skipped task: why})."""
    from .data import build_families

    return build_families(_build, rows())


def sample(tasks: list[Any], n: int | None, seed: int = SAMPLE_SEED) -> list[Any]:
    """A seeded sample of n tasks, as even over the bug types as they allow (None: all), in task order."""
    import random

    if n is None or n >= len(tasks):
        return tasks
    kinds = sorted({t.kind for t in tasks})
    rng = random.Random(f"{seed}:humanevalfix")
    pools = {k: rng.sample([t for t in tasks if t.kind == k], sum(t.kind == k for t in tasks)) for k in kinds}
    picked: list[Any] = []
    while len(picked) < n and any(pools.values()):
        for k in kinds:
            if pools[k] and len(picked) < n:
                picked.append(pools[k].pop())
    order = {id(t): i for i, t in enumerate(tasks)}
    return sorted(picked, key=lambda t: order[id(t)])
