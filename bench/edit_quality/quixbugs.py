"""QuixBugs (jkoppel/QuixBugs, MIT): 40 small Python programs, each with one real, human-made
one-line bug, and their tests (vendored in bench/data/quixbugs, see its README).

A program becomes:
- an inline edit: the buggy file, the instruction "Fix the bug." plus the first failing test's
  output as a person would paste it, the program's function selected;
- a quick fix too, only where ruff (F, E9: the checks Kestrel lints with) reports on the buggy
  file something the correct file does not have.
The check is the program's own pytest tests, run in a scratch folder with a per-test time limit
(buggy versions loop forever) and a memory limit. Only the tests that pass once the function is
replaced by the correct one count (the "reference" file); a program with none is skipped, as is
one whose bug no counted test sees.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "quixbugs"
HOOKS = Path(__file__).resolve().parent / "pytest_hooks.py"
TEST_LIMIT_S = 2.0  # per test; the correct versions need well under a second each
RUN_CAP_S = 90.0  # per run of a program's tests (a buggy version may time out test after test)
FAILING_LINES = 12  # of the first failure's pytest output, pasted into the instruction


def programs() -> list[str]:
    return sorted(p.stem[len("test_"):] for p in (DATA / "python_testcases").glob("test_*.py"))


def buggy_source(name: str) -> str:
    return (DATA / "python_programs" / f"{name}.py").read_text(encoding="utf-8")


def correct_source(name: str) -> str:
    return (DATA / "correct_python_programs" / f"{name}.py").read_text(encoding="utf-8")


def function_lines(source: str, name: str) -> tuple[int, int] | None:
    """0-based first and last line of the top-level `def name` that Python binds (the last one)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    if not defs:
        return None
    node = defs[-1]
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    return first, node.end_lineno - 1


def reference_fix(name: str) -> str | None:
    """The buggy file with its function replaced by the correct file's (the fix, and nothing else)."""
    buggy, correct = buggy_source(name), correct_source(name)
    at, fn = function_lines(buggy, name), function_lines(correct, name)
    if at is None or fn is None:
        return None
    lines, good = buggy.split("\n"), correct.split("\n")
    return "\n".join(lines[: at[0]] + good[fn[0] : fn[1] + 1] + lines[at[1] + 1 :])


@dataclass(frozen=True)
class TestRun:
    tests: dict[str, str]  # test name -> "passed" / "failed" / "skipped", in the order they ran
    texts: dict[str, str] = field(default_factory=dict)  # failed test -> pytest's report
    capped: bool = False  # the run hit RUN_CAP_S (tests that did not run are missing)

    def passed(self) -> set[str]:
        return {t for t, o in self.tests.items() if o == "passed"}


def _env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", QUIXBUGS_TEST_LIMIT_S=str(TEST_LIMIT_S))
    return env


def _folder(tmp: Path, name: str, document: str) -> list[str]:
    (tmp / "python_programs").mkdir()
    (tmp / "python_testcases").mkdir()
    (tmp / "json_testcases").mkdir()
    (tmp / "python_programs" / f"{name}.py").write_text(document, encoding="utf-8")
    shutil.copy(DATA / "python_programs" / "node.py", tmp / "python_programs" / "node.py")
    for helper in ("node.py", "load_testdata.py", f"test_{name}.py"):
        shutil.copy(DATA / "python_testcases" / helper, tmp / "python_testcases" / helper)
    cases = DATA / "json_testcases" / f"{name}.json"
    if cases.exists():
        shutil.copy(cases, tmp / "json_testcases" / cases.name)
    shutil.copy(HOOKS, tmp / "conftest.py")
    return [sys.executable, "-I", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", "--showlocals", "--color=no",
            f"python_testcases/test_{name}.py"]


def _read(tmp: Path, capped: bool) -> TestRun:
    try:
        raw = json.loads((tmp / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raw = {}
    return TestRun({k: v["outcome"] for k, v in raw.items()},
                   {k: v["text"] for k, v in raw.items() if v["outcome"] == "failed"}, capped)


def run_tests(name: str, document: str, cap: float = RUN_CAP_S) -> TestRun:
    with tempfile.TemporaryDirectory(prefix="kestrel-quixbugs-") as tmp_s:
        tmp = Path(tmp_s)
        cmd = _folder(tmp, name, document)
        proc = subprocess.Popen(cmd, cwd=tmp, env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        capped = False
        try:
            proc.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            capped = True
            os.killpg(proc.pid, 9)
            proc.wait()
        return _read(tmp, capped)


async def run_tests_async(name: str, document: str, cap: float = RUN_CAP_S) -> TestRun:
    return await asyncio.to_thread(run_tests, name, document, cap)


def pasted_failure(test: str, text: str) -> str:
    """The first failure as a person pastes it from the terminal: the test, its frame (the call,
    with the test's inputs as pytest --showlocals prints them) and the error lines."""
    # (object reprs with addresses and scratch paths would make the instruction differ run to run)
    lines = [ln.rstrip()[:200] for ln in text.strip().split("\n") if ln.strip() and " at 0x" not in ln
             and "kestrel-quixbugs-" not in ln]
    head: list[str] = []
    for ln in lines:
        if ln.startswith(("python_programs/", "conftest.py", "E   ")):
            break
        head.append(ln)
    first_e = next((i for i, ln in enumerate(lines) if ln.startswith("E   ")), len(lines))
    tail = [ln for ln in lines[first_e:] if ln.startswith(("E   ", "!!!")) and ln.strip() != "E"]
    if not tail:
        tail = lines[-4:]
    shown = head[:FAILING_LINES // 2] + [ln for ln in tail if ln not in head][: FAILING_LINES // 2]
    return f"FAILED {test}\n" + "\n".join(shown)


def _build(name: str) -> tuple[str, list[Any] | str]:
    """(name, its tasks) or (name, why it is skipped)."""
    from . import lint
    from .data import EditTask

    buggy, reference = buggy_source(name), reference_fix(name)
    if reference is None:
        return name, "the function is not found in the buggy or the correct file"
    target = function_lines(buggy, name)
    if target is None:
        return name, "the buggy file does not parse"
    ref_run = run_tests(name, reference)
    counted = frozenset(ref_run.passed())
    if not counted:
        return name, "no test passes with the correct function here"
    before = run_tests(name, buggy)
    failed = [t for t in before.tests if t in counted and before.tests[t] != "passed"]
    if not failed:
        return name, "no counted test fails on the buggy version"
    passing_before = frozenset(before.passed() & counted)
    first = failed[0]
    failing = pasted_failure(first, before.texts.get(first, "the test did not finish (the run was stopped)"))
    common = dict(kind="real-bug", note=f"QuixBugs {name}", original=reference, broken=buggy, entry_point=name,
                  target=target, counted=counted, passing_before=passing_before)
    tasks = [EditTask("quixbugs", "inline-edit", task_id=f"QuixBugs/inline-edit/{name}", failing=failing, **common)]
    fresh = lint.new_findings(correct_source(name), buggy)
    if fresh:
        fresh.sort(key=lambda f: (f["location"]["row"], f["location"]["column"]))
        tasks.append(EditTask("quixbugs", "quick-fix", task_id=f"QuixBugs/quick-fix/{name}",
                              diagnostic=lint.to_lsp(fresh[0]), **common))
    return name, tasks


def all_tasks(names: list[str] | None = None) -> tuple[dict[str, list[Any]], dict[str, str]]:
    """({family: tasks}, {skipped program: why})."""
    from .data import build_families

    return build_families(_build, names or programs())
