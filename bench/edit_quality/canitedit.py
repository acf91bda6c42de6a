"""CanItEdit (nuprl/CanItEdit; Cassano et al., COLM 2024; the dataset is MIT): hand-written Python
programs, each with a `before` file, an instruction written by a person, the `after` file and hidden
tests. The instructed-edit set: edits that are not repairs (the 70 programs the benchmark classes as
adaptive, a new feature, or perfective, a change to how the code does what it does; its 35 corrective
ones, bug fixes, are left out). The rows are not in this repository: they come from a fetched public
snapshot, so they live in the steering repo's shared/ (or a local copy, see `data_path`); where they
come from, their sha256 and licence: bench/data/canitedit/README.md. Without them the set is skipped.

A program becomes an inline edit:
- the file is `before`; the instruction is the benchmark's own *lazy* one (as a person types it);
  `--full` adds the *descriptive* one as a second task of the same program;
- the selection is the whole changed region: every definition the reference edit (`before` ->
  `after`) changes, from the first one's first line to the last one's last line (see
  `changed_region`); import lines the reference adds are outside it (a user selects the code, not
  the import block);
- the check is the program's tests run after the file in a subprocess (time and memory limits).
A program is kept only when its tests fail on `before` and pass on `after` here; the others are
skipped with the reason (most: a library the tests need is not installed).
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import json
import os
import re
from pathlib import Path
from typing import Any

from bench.quality import scoring

ROOT = Path(__file__).resolve().parent.parent.parent
FILE = "canitedit_python.jsonl"
SHA256 = "952639ff313571fec16a6675c4717152c94243a091a9777d5f2001c34a60a9bd"
PLACES = (ROOT.parent / "shared" / "canitedit" / FILE,  # the steering repo's shared/, beside the checkout
          ROOT / ".tools" / "eval-data" / "canitedit" / FILE)  # a local copy (not committed)
TIMEOUT_S = 20.0  # per run of a program's tests; the references need well under 2 s here
MEMORY_BYTES = 4 << 30  # address space of a test run (numpy maps a lot; a runaway list must not take the machine)
VARIANTS = ("lazy", "descriptive")
# Runs the candidate file as __main__ under the memory limit (no preexec_fn: the harness has threads).
_LIMITED = ("import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]),) * 2); "
            "sys.argv = sys.argv[1:2]; runpy.run_path(sys.argv[0], run_name='__main__')")
_DEF_LINE = re.compile(r"\s*(async\s+def|def|class)\b")


class MissingData(Exception):
    """The CanItEdit rows are not on this machine (or not the expected ones); the message says where to put them."""


def data_path() -> Path:
    """The rows' file: $KESTREL_CANITEDIT_DATA, else the first of PLACES that exists; its sha256 must be SHA256."""
    given = os.environ.get("KESTREL_CANITEDIT_DATA")
    found = Path(given) if given else next((p for p in PLACES if p.is_file()), None)
    if found is None or not found.is_file():
        raise MissingData(f"the CanItEdit rows ({FILE}, sha256 {SHA256[:12]}...) are not at "
                          f"{given or ' or '.join(str(p) for p in PLACES)}: see bench/data/canitedit/README.md")
    import hashlib

    digest = hashlib.sha256(found.read_bytes()).hexdigest()
    if digest != SHA256:
        raise MissingData(f"{found} is not the expected CanItEdit file (sha256 {digest[:12]}..., expected {SHA256[:12]}...)")
    return found


def available() -> str | None:
    """None when the rows are here, else why not."""
    try:
        data_path()
    except MissingData as exc:
        return str(exc)
    return None


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in data_path().read_text(encoding="utf-8").splitlines() if line.strip()]


def program(document: str, tests: str) -> str:
    """The file, then the benchmark's tests (its own harness appends them the same way)."""
    return f"{document}\n\n{tests}\n"


def _env() -> dict[str, str]:
    env = scoring._env()
    env.update({k: v for k, v in os.environ.items() if k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")})
    env["OPENBLAS_NUM_THREADS"] = "1"  # numpy's tests beside a running model: one thread
    return env


async def run_async(document: str, tests: str, timeout: float = TIMEOUT_S) -> scoring.Outcome:
    return await scoring.run_async(program(document, tests), timeout, env=_env(),
                                   runner=("-c", _LIMITED, "{file}", str(MEMORY_BYTES)))


def run_sync(document: str, tests: str, timeout: float = TIMEOUT_S) -> scoring.Outcome:
    return asyncio.run(run_async(document, tests, timeout))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _definitions(tree: ast.Module, lines: list[str]) -> list[tuple[int, int, int, int]]:
    """(first line with decorators, last line, depth, header indentation) of every def/class, 0-based."""
    out = []

    def walk(body: list[ast.stmt], depth: int) -> None:
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1
                header = next((i for i in range(n.lineno - 1, n.end_lineno) if _DEF_LINE.match(lines[i])), n.lineno - 1)
                out.append((first, n.end_lineno - 1, depth, _indent(lines[header])))
                walk(n.body, depth + 1)

    walk(tree.body, 0)
    return out


def _is_import(line: str) -> bool:
    return line.startswith(("import ", "from "))  # at the top level (no indentation)


def _runs(a: list[str], b: list[str]) -> list[tuple[int, list[int], list[str]]]:
    """The line diff's changes as (first old line, changed non-blank old lines, non-blank new lines)."""
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        old = [i for i in range(i1, i2) if a[i].strip()]
        new = [ln for ln in b[j1:j2] if ln.strip()]
        if op != "equal" and (old or new):
            out.append((i1, old, new))
    return out


def _imports_only(a: list[str], old: list[int], new: list[str]) -> bool:
    return all(_is_import(x) for x in [a[i] for i in old] + new)


def changed_region(before: str, after: str) -> tuple[int, int] | None:
    """(first, last) 0-based lines of `before` to select for the edit to `after`, None if no code changes.

    Each change of the line diff belongs to the innermost definition (function, method or class)
    that holds it: a changed or deleted line to the one around it; inserted lines to the one whose
    body they join (around the last non-blank line before them, and with a header less indented
    than they are: a new method joins its class, a new top-level function joins nothing). A change
    outside every definition takes the top-level statement around it (an insertion between two
    top-level functions: the one before it). Changes made only of top-level import lines are left
    out. The region runs from the first such unit's first line to the last one's last line."""
    a, b = before.split("\n"), after.split("\n")
    tree = ast.parse(before)
    defs = _definitions(tree, a)
    statements = [(min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1, n.end_lineno - 1)
                  for n in tree.body]
    units: list[tuple[int, int]] = []

    def unit(line: int, joins_at: int | None) -> tuple[int, int]:
        holders = [d for d in defs if d[0] <= line <= d[1] and (joins_at is None or d[3] < joins_at)]
        if holders:
            first, last, _, _ = max(holders, key=lambda d: d[2])
            return first, last
        return next(((s, e) for s, e in statements if s <= line <= e), (line, line))

    for i1, old, new in _runs(a, b):
        if _imports_only(a, old, new):
            continue
        units += [unit(i, None) for i in old]
        if new and not old:
            before_it = next((i for i in range(i1 - 1, -1, -1) if a[i].strip()), None)
            joins_at = min(_indent(ln) for ln in new)
            units.append(unit(before_it, joins_at) if before_it is not None else unit(min(i1, len(a) - 1), None))
    if not units:
        return None
    return min(u[0] for u in units), max(u[1] for u in units)


def top_level_names(source: str, region: tuple[int, int]) -> list[str]:
    """The top-level functions and classes of `source` that overlap the region, in file order."""
    first, last = region
    out = []
    for n in ast.parse(source).body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1
            if start <= last and n.end_lineno - 1 >= first:
                out.append(n.name)
    return out


def imports_outside(before: str, after: str) -> bool:
    """Does the reference add or change a top-level import line outside the selection?"""
    a, b = before.split("\n"), after.split("\n")
    return any(new and _imports_only(a, old, new) for _, old, new in _runs(a, b))


def _missing_module(result: str) -> str | None:
    m = re.search(r"No module named '([\w.]+)'", result)
    return m.group(1) if m else None


def _build(row: dict[str, Any], variants: tuple[str, ...] = ("lazy",)) -> tuple[str, list[Any] | str]:
    """(full name, its tasks) or (full name, why it is skipped)."""
    from .data import EditTask

    name, before, after, tests = row["full_name"], row["before"], row["after"], row["tests"]
    try:
        region = changed_region(before, after)
    except SyntaxError:
        return name, "the before file does not parse"
    if region is None:
        return name, "the reference changes no code (only imports or blank lines)"
    names = top_level_names(before, region)
    if not names:
        return name, "the change is outside every function and class"
    ref = run_sync(after, tests)
    if not ref.passed:
        module = _missing_module(ref.result)
        return name, (f"needs {module}, not installed here" if module else f"the reference fails its tests here: {ref.result}")
    if run_sync(before, tests).passed:
        return name, "the tests pass on the before file"
    kind = row["taxonomy"]["change_kind"]
    note = f"CanItEdit {name} ({kind}, {row['taxonomy']['topic']})" + (
        "; the reference also adds an import" if imports_outside(before, after) else "")
    tasks = []
    for variant in variants:
        suffix = "" if variant == "lazy" else f"/{variant}"
        tasks.append(EditTask("canitedit", "inline-edit", kind if variant == "lazy" else f"{kind}, {variant}",
                              f"CanItEdit/inline-edit/{name}{suffix}", note, original=after, broken=before,
                              entry_point=names[0], target=region, check_code=tests,
                              request=row[f"instruction_{variant}"]))
    return name, tasks


def all_tasks(variants: tuple[str, ...] = ("lazy",)) -> tuple[dict[str, list[Any]], dict[str, str]]:
    """({family: tasks}, {skipped program: why}); each program's tasks in `variants` order."""
    from .data import build_families

    return build_families(lambda row: _build(row, variants), rows())


SOURCE_COMMIT = "bea1c6cf1921ce40ff6ac36b52a655b6d6e6e3a8"  # Aaditya-Bhatia/CanItEdit (README: why this one)
SOURCE_RUN = "runs/qwen2.5-coder-7b-instruct-lora-dirty-canitedit-20260511T235631Z-slot1-896008860"
FIELDS = ("id", "name", "full_name", "before", "after", "tests", "instruction_descriptive", "instruction_lazy",
          "taxonomy")


def rebuild(git_dir: Path, out: Path = PLACES[1]) -> Path:
    """Write the rows' file from a fetched snapshot of the source repository (its git directory, as the
    `fetch` tool leaves it): each row's fields from its lazy-instruction run file, the adaptive and
    perfective rows in id order; refused unless the result has the expected sha256."""
    import gzip
    import hashlib
    import subprocess

    def git(*args: str) -> bytes:
        return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True).stdout

    names = git("ls-tree", "--name-only", SOURCE_COMMIT, SOURCE_RUN + "/").decode().split()
    found = []
    for name in (n for n in names if n.endswith("_instruction_lazy.json.gz")):
        row = json.loads(gzip.decompress(git("show", f"{SOURCE_COMMIT}:{name}")))
        if row["taxonomy"]["change_kind"] in ("adaptive", "perfective"):
            found.append({k: row[k] for k in FIELDS})
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sorted(found, key=lambda r: r["id"]))
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest != SHA256:
        raise MissingData(f"rebuilt {len(found)} rows with sha256 {digest[:12]}..., expected {SHA256[:12]}...")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


if __name__ == "__main__":  # python -m bench.edit_quality.canitedit <the snapshot's git directory>
    import sys

    print(f"wrote {rebuild(Path(sys.argv[1]))}")
