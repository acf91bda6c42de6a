"""The agent tasks: multi-file jobs on code nobody here wrote, each checked by a program, not a judge.

- **fix** (a failing test): a QuixBugs program (bench/data/quixbugs: a human-written one-line bug) in
  QuixBugs' own layout (python_programs/, python_testcases/, json_testcases/), asked as a user asks:
  the tests fail, find the bug and fix it, here is how to run them. The agent can read, edit and run
  `python -m pytest` (allowed without asking; any other command is declined). Passed: the program
  as the agent left it passes every test the correct version passes, run against the original test
  files (editing the tests gains nothing).
- **rename** (a symbol across files): a top-level function of one of the repository set's PyPI
  packages (bench/repo_context/packages.toml, 2025-26 releases) that other modules import by name,
  defined once in the package, named in 2-4 files. Asked: rename it everywhere. Passed: every file
  parses and reads token for token as before with the old name replaced by the new one (strings may
  keep it or change it: `__all__`, messages), nothing else changed, and no file gained or lost.

Tasks are drawn with a fixed seed (PER_KIND of each kind), so a run is repeatable; the workspace of
each trial is a fresh copy.
"""

from __future__ import annotations

import ast
import io
import random
import shutil
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bench.edit_quality import quixbugs

PER_KIND = 4
SEED = 2026
ALLOWED_COMMANDS = ["python -m pytest"]  # what the fix tasks need; anything else the agent asks is declined
NAME_FILES = (2, 4)  # files a renamed function is named in (its own included)
MAX_NAME_USES = 12


@dataclass(frozen=True)
class AgentTask:
    id: str
    kind: str  # "fix" or "rename"
    request: str  # what the user types
    fill: Callable[[Path], None]  # writes the task's workspace into an empty folder
    check: Callable[[Path], tuple[bool, str]]  # (passed, why) from the folder as the agent left it


# --- fix: QuixBugs' failing tests ------------------------------------------------------------------
def _fix_folder(name: str) -> Callable[[Path], None]:
    def fill(folder: Path) -> None:
        quixbugs._folder(folder, name, quixbugs.buggy_source(name))  # the layout its tests import from

    return fill


def _fix_check(name: str, counted: frozenset[str]) -> Callable[[Path], tuple[bool, str]]:
    def check(folder: Path) -> tuple[bool, str]:
        try:
            program = (folder / "python_programs" / f"{name}.py").read_text(encoding="utf-8")
        except OSError as exc:
            return False, f"the program is gone ({exc})"
        run = quixbugs.run_tests(name, program)  # against the original tests, in a fresh folder
        failing = sorted(counted - run.passed())
        return (not failing, "passed" if not failing else f"{len(failing)} of {len(counted)} tests fail, e.g. {failing[0]}")

    return check


def fix_tasks(n: int = PER_KIND, seed: int = SEED) -> list[AgentTask]:
    names = [p for p in quixbugs.programs() if p not in ("node",)]
    out: list[AgentTask] = []
    for name in random.Random(f"{seed}:fix").sample(names, len(names)):
        if len(out) == n:
            break
        counted = frozenset(quixbugs.run_tests(name, quixbugs.correct_source(name)).passed())
        if not counted or counted <= quixbugs.run_tests(name, quixbugs.buggy_source(name)).passed():
            continue  # no test tells the versions apart
        request = (f"The tests in python_testcases/test_{name}.py fail. Find the bug in python_programs/{name}.py "
                   f"and fix it; the tests are right. Run them with `python -m pytest -q python_testcases/test_{name}.py`.")
        out.append(AgentTask(f"fix/{name}", "fix", request, _fix_folder(name), _fix_check(name, counted)))
    return out


# --- rename: a function across a package's modules ----------------------------------------------
def code_tokens(source: str) -> list[tuple[int, str]] | None:
    """The file's tokens without layout and comments; None when it does not tokenize or parse."""
    try:
        ast.parse(source)
        toks = tokenize.generate_tokens(io.StringIO(source).readline)
        return [(t.type, t.string) for t in toks if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                                                    tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)]
    except (SyntaxError, tokenize.TokenError, ValueError):
        return None


def renamed_as_asked(before: str, after: str, old: str, new: str) -> str:
    """'' when `after` is `before` with the name `old` replaced by `new` (strings either way), else why not."""
    a, b = code_tokens(before), code_tokens(after)
    if b is None:
        return "does not parse"
    if a is None or len(a) != len(b):
        return "more than the name changed"
    for (ta, sa), (tb, sb) in zip(a, b):
        if ta == tokenize.NAME and sa == old:
            if sb != new:
                return f"`{old}` left (or renamed to `{sb}`)"
        elif ta == tokenize.STRING and sa != sb:
            if sa.replace(old, new) != sb:
                return "a string changed"
        elif sa != sb:
            return f"`{sa}` became `{sb}`"
    return ""


def _py_files(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*.py")):
        try:
            out[p.relative_to(root).as_posix()] = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _names(source: str) -> list[str]:
    return [s for t, s in code_tokens(source) or [] if t == tokenize.NAME]


def rename_candidates(root: Path) -> list[tuple[str, str, list[str]]]:
    """(function, its module, the files naming it) for functions other modules import by name."""
    files = _py_files(root)
    names = {rel: Counter(_names(src)) for rel, src in files.items()}
    defined: dict[str, list[str]] = {}
    for rel, src in files.items():
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.setdefault(node.name, []).append(rel if node in tree.body and not isinstance(node, ast.ClassDef) else "")
    out = []
    for name, where in sorted(defined.items()):
        if len(where) != 1 or not where[0] or len(name) < 6 or name.startswith("__"):
            continue  # defined once, at a module's top level, a name a grep finds
        naming = [rel for rel in files if names[rel][name]]
        uses = sum(names[rel][name] for rel in naming)
        imported = any(f"import {name}" in files[rel] or f" {name}," in files[rel] for rel in naming if rel != where[0])
        if NAME_FILES[0] <= len(naming) <= NAME_FILES[1] and uses <= MAX_NAME_USES and imported:
            out.append((name, where[0], naming))
    return out


def _copy_folder(root: Path) -> Callable[[Path], None]:
    def fill(folder: Path) -> None:
        shutil.copytree(root, folder, dirs_exist_ok=True)

    return fill


def _rename_check(root: Path, old: str, new: str) -> Callable[[Path], tuple[bool, str]]:
    def check(folder: Path) -> tuple[bool, str]:
        before, after = _py_files(root), _py_files(folder)
        if set(before) != set(after):
            return False, f"files added or removed: {sorted(set(before) ^ set(after))[:3]}"
        for rel in before:
            # An unchanged file is tokenized only when its text holds the old name at all.
            if before[rel] != after[rel] or (old in before[rel] and old in _names(before[rel])):
                why = renamed_as_asked(before[rel], after[rel], old, new)
                if why:
                    return False, f"{rel}: {why}"
        return True, "passed"

    return check


def rename_tasks(n: int = PER_KIND, seed: int = SEED) -> list[AgentTask]:
    from bench.repo_context import sources

    roots = sources.ensure_all()
    rng = random.Random(f"{seed}:rename")
    pools = {pkg: rng.sample(c, len(c)) for pkg, root in sorted(roots.items()) if (c := rename_candidates(root))}
    out: list[AgentTask] = []
    while len(out) < n and any(pools.values()):
        for pkg in sorted(pools):
            if pools[pkg] and len(out) < n:
                name, module, naming = pools[pkg].pop()
                new = f"{name}_renamed"
                request = (f"Rename the function `{name}` (defined in {module}) to `{new}` everywhere in this project: "
                           "its definition, every import and every use. Change nothing else.")
                out.append(AgentTask(f"rename/{pkg}/{name}", "rename", request, _copy_folder(roots[pkg]),
                                     _rename_check(roots[pkg], name, new)))
    return out


def all_tasks(n: int = PER_KIND, seed: int = SEED) -> list[AgentTask]:
    return fix_tasks(n, seed) + rename_tasks(n, seed)
