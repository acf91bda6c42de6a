"""pass@1 scoring: the file the editor holds after accepting a completion, plus the problem's
tests, run by Python in a subprocess (own temp dir, timeout). Nothing is added between the
completion and the suffix: an answer that does not end its line runs into the next one,
exactly as it would in the editor."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from dataclasses import dataclass

from .data import Task

TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Outcome:
    passed: bool
    result: str  # "passed", "timed out", or "failed: <last line of stderr>"


def editor_text(task: Task, completion: str) -> str:
    """The document after inserting `completion` at the cursor (the text after it stays)."""
    return task.prefix + completion + task.suffix


def program(task: Task, document: str) -> str:
    return f"{document}\n\n{task.problem.test}\ncheck({task.problem.entry_point})\n"


def _env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    return env


def _outcome(code: int | None, stderr: bytes, timed_out: bool) -> Outcome:
    if timed_out:
        return Outcome(False, "timed out")
    if code == 0:
        return Outcome(True, "passed")
    lines = [ln for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return Outcome(False, "failed: " + (lines[-1][:200] if lines else f"exit {code}"))


def run_sync(source: str, timeout: float = TIMEOUT_S) -> Outcome:
    """Run `source` with this interpreter (isolated mode) in a fresh temporary directory."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="kestrel-eval-") as tmp:
        path = os.path.join(tmp, "candidate.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        try:
            proc = subprocess.run([sys.executable, "-I", path], cwd=tmp, env=_env(), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return _outcome(None, b"", True)
        return _outcome(proc.returncode, proc.stderr, False)


async def run_async(source: str, timeout: float = TIMEOUT_S, *, runner: tuple[str, ...] = (),
                    env: dict[str, str] | None = None) -> Outcome:
    """Run `source` as a file (`python -I [runner...] <file>`; `runner` puts arguments before the
    file, e.g. `-c <code that runs it under limits>`) in a scratch folder, killed with what it
    started after `timeout` seconds."""
    with tempfile.TemporaryDirectory(prefix="kestrel-eval-") as tmp:
        path = os.path.join(tmp, "candidate.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        args = [a.replace("{file}", path) for a in runner] if runner else [path]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-I", *args, cwd=tmp, env=env or _env(), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )
        try:
            _, err = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            try:
                os.killpg(proc.pid, 9)  # the candidate and anything it started
            except ProcessLookupError:
                pass
            await proc.wait()
            return _outcome(None, b"", True)
        return _outcome(proc.returncode, err, False)


def check(task: Task, completion: str, timeout: float = TIMEOUT_S) -> Outcome:
    """pass/fail of `completion` inserted at the task's cursor."""
    return run_sync(program(task, editor_text(task, completion)), timeout)


class Scorer:
    """Async scoring with a memo: raw and Kestrel often produce the same document."""

    def __init__(self, timeout: float = TIMEOUT_S) -> None:
        self.timeout = timeout
        self._memo: dict[str, Outcome] = {}
        self.runs = 0

    async def document(self, task: Task, document: str) -> Outcome:
        source = program(task, document)
        hit = self._memo.get(source)
        if hit is None:
            self.runs += 1
            hit = self._memo[source] = await run_async(source, self.timeout)
        return hit
