"""The Python exercises of Aider's polyglot benchmark (bench/data/polyglot: 34 Exercism exercises, MIT),
and running an exercise's tests on a candidate solution in a subprocess with time and memory limits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "data" / "polyglot" / "python"
TIMEOUT_S = 60.0  # a run of one exercise's tests (the references need well under 2 s here)
MEMORY_BYTES = 2 << 30
OUTPUT_LINES = 50  # of a failing run, what the second try is shown (Aider shows the model the test output too)
# pytest under an address-space limit (no preexec_fn: the harness has threads).
_LIMITED = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2); "
            "import pytest; sys.exit(pytest.main(sys.argv[2:]))")


@dataclass(frozen=True)
class Exercise:
    name: str
    instructions: str  # .docs/instructions.md, then instructions.append.md when there is one
    solution_file: str  # the file to change, as the exercise names it (e.g. affine_cipher.py)
    stub: str  # its text as handed out
    test_files: dict[str, str]  # name -> text (the tests and what they import)
    reference: str  # Exercism's example solution (the harness's own check: its tests pass on it)


def exercises(root: Path = ROOT) -> list[Exercise]:
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        config = json.loads((folder / "config.json").read_text())["files"]
        solution = config["solution"][0]
        text = (folder / "instructions.md").read_text()
        extra = folder / "instructions.append.md"
        if extra.exists():
            text = f"{text.rstrip()}\n\n{extra.read_text()}"
        out.append(Exercise(folder.name, text.strip() + "\n", solution, (folder / solution).read_text(),
                            {name: (folder / name).read_text() for name in config["test"]},
                            (folder / "reference.py").read_text()))
    return out


@dataclass(frozen=True)
class TestRun:
    passed: bool
    output: str  # pytest's report, cut to OUTPUT_LINES lines (what a second try is shown)
    summary: str  # its last line ("3 failed, 5 passed in 0.1s") or why it did not run


def run_tests(ex: Exercise, solution: str, timeout: float = TIMEOUT_S) -> TestRun:
    """The exercise's tests on `solution`, in a fresh folder, as the exercise runs them (pytest)."""
    folder = Path(tempfile.mkdtemp(prefix=f"polyglot-{ex.name}-"))
    try:
        (folder / ex.solution_file).write_text(solution, encoding="utf-8")
        for name, text in ex.test_files.items():
            (folder / name).write_text(text, encoding="utf-8")
        tests = [n for n in ex.test_files if n.endswith("_test.py")]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "KESTREL"))}
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # pytest alone, as Exercism runs it
        cmd = [sys.executable, "-c", _LIMITED, str(MEMORY_BYTES), "-q", "--tb=short", "-p", "no:cacheprovider", *tests]
        try:
            done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return TestRun(False, f"the tests did not finish within {timeout:.0f} s (an endless loop?)", "timeout")
        report = (done.stdout + done.stderr).strip()
        lines = report.split("\n")
        summary = lines[-1] if lines else ""
        return TestRun(done.returncode == 0, "\n".join(lines[:OUTPUT_LINES]), summary)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
