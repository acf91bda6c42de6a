"""The TypeScript quick-fix set: ESLint's findings on real package code, fixed as ESLint fixes them.

Issue 22 asks for one non-Python quick-fix kind, measured with a linter that has JSON output. Here:
ESLint 9 with typescript-eslint (pinned in bench/edit_quality/eslint/package.json and its lock,
installed by `npm ci` into .tools/eslint) over the TypeScript packages of the languages set (pinned
in bench/quality/languages.toml: npm releases of 2025-26, code nobody here wrote; the same files the
completion tasks use: no tests, generated, vendored or table files). Every finding of a rule in
KINDS that ESLint can fix itself is a candidate; a seeded sample of PER_KIND per rule (at most one
per file and rule, spread over the packages) becomes a task: the whole real file, the finding as
the editor shows it (an LSP Diagnostic, source "eslint", the rule as its code), "Fix with Kestrel".

The truth is ESLint's own fix of that one finding, which keeps the program's meaning. Verdict:
- fixed: the result is the same program as ESLint's fixed file (tree-sitter's trees compared
  without layout, comments and statement-ending semicolons: `${  a}` and `${a}` are the same, a
  changed string is not), and ESLint finds nothing the file did not have.
- resolved (in the result text): the finding is gone and nothing new, but not as ESLint fixes it
  (another rewrite that may be right, or code deleted): not counted as fixed.
- harm: lines outside the finding (and ESLint's fix) changed.

The kinds: prefer-const (`let` never reassigned), prefer-template (string concatenation to a
template literal), curly (a body without braces). Chosen because they are common in real code
(these packages: ~120, ~180 and ~4,400 findings) and have a fix that keeps the meaning to compare
with; rules without a fix (no-unused-vars) have no truth that tests could stand in for here.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import shutil
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from bench.quality import lang_sources, lang_tasks

from .data import EditTask

KINDS = ("prefer-const", "prefer-template", "curly")  # as in lint.mjs's TASK_RULES
PER_KIND = 30
SEED = 29
LANGUAGE = "typescript"
SPEC = Path(__file__).resolve().parent / "eslint"  # package.json, package-lock.json, lint.mjs
TOOLS = lang_sources.REPO / ".tools" / "eslint"


def _node() -> str:
    cand = lang_sources.NODE_BIN / "node"
    found = str(cand) if cand.exists() else shutil.which("node")
    if not found:
        raise SystemExit("bench.edit_quality: node not found (make node-tools)")
    return found


def _spec_hash() -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json", "lint.mjs"):
        h.update((SPEC / name).read_bytes())
    return h.hexdigest()[:16]


def ensure_eslint() -> Path:
    """The pinned ESLint in .tools/eslint (npm ci once per change of its spec)."""
    stamp = TOOLS / f".installed-{_spec_hash()}"
    if stamp.exists():
        return TOOLS
    TOOLS.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json", "lint.mjs"):
        shutil.copyfile(SPEC / name, TOOLS / name)
    lang_sources._say("edit quality: installing the pinned ESLint (npm ci) ...")
    env = {**os.environ, "PATH": f"{Path(_node()).parent}:{os.environ.get('PATH', '')}",
           "npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"}
    subprocess.run([lang_sources._npm(), "ci", "--silent"], cwd=TOOLS, env=env, check=True, timeout=600)
    for old in TOOLS.glob(".installed-*"):
        old.unlink()
    stamp.touch()
    return TOOLS


class ESLintProcess:
    """lint.mjs kept running (ESLint and the TypeScript parser load once): lint(path, text) -> messages.
    Paths are relative to `cwd`; one request at a time (a lock), callable from threads."""

    def __init__(self, cwd: Path) -> None:
        tools = ensure_eslint()
        self._proc = subprocess.Popen([_node(), str(tools / "lint.mjs"), str(cwd)], cwd=tools, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, encoding="utf-8")
        self._lock = threading.Lock()
        self._n = 0

    def lint(self, path: str, text: str) -> list[dict[str, Any]]:
        with self._lock:
            self._n += 1
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps({"id": self._n, "filePath": path, "text": text}) + "\n")
            self._proc.stdin.flush()
            answer = json.loads(self._proc.stdout.readline() or "null")
        if not answer or answer.get("id") != self._n or "error" in answer:
            raise RuntimeError(f"ESLint failed on {path}: {answer and answer.get('error')}")
        return answer["messages"]

    async def lint_async(self, path: str, text: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.lint, path, text)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin and self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()


_LINTER: ESLintProcess | None = None


def linter() -> ESLintProcess:
    global _LINTER
    if _LINTER is None:
        _LINTER = ESLintProcess(lang_sources.cache_dir() / "src")
    return _LINTER


def close() -> None:
    """Stop the ESLint process if one was started."""
    global _LINTER
    if _LINTER is not None:
        _LINTER.close()
        _LINTER = None


# --- tasks ----------------------------------------------------------------------------------------
def key(m: dict[str, Any]) -> tuple[str, str]:
    return (m.get("ruleId") or "parse", m.get("message", ""))


def apply_fix(text: str, fix: dict[str, Any]) -> str:
    """ESLint's fix ({range: [start, end), text}); offsets count UTF-16 units, which are the str's
    own for the files used (none has a character beyond U+FFFF)."""
    start, end = fix["range"]
    return text[:start] + fix["text"] + text[end:]


def lines_of(text: str, start: int, end: int) -> tuple[int, int]:
    return text.count("\n", 0, start), text.count("\n", 0, max(start, end - 1) if end > start else start)


def _diagnostic(m: dict[str, Any]) -> dict[str, Any]:
    """ESLint's message as the editor's LSP Diagnostic (1-based line/column, UTF-16, to 0-based)."""
    end_line, end_col = m.get("endLine", m["line"]), m.get("endColumn", m["column"])
    return {"range": {"start": {"line": m["line"] - 1, "character": m["column"] - 1},
                      "end": {"line": end_line - 1, "character": end_col - 1}},
            "message": m["message"], "code": m["ruleId"], "source": "eslint"}


def _task(pkg: str, rel: str, text: str, m: dict[str, Any]) -> EditTask:
    fixed = apply_fix(text, m["fix"])
    fix_first, fix_last = lines_of(text, *m["fix"]["range"])
    first, last = min(m["line"] - 1, fix_first), max(m.get("endLine", m["line"]) - 1, fix_last)
    name = rel.rsplit("/", 1)[-1]
    return EditTask("eslint", "quick-fix", m["ruleId"], f"eslint/{pkg}/{rel}:{m['line']}:{m['column']}/{m['ruleId']}",
                    m["message"], fixed, text, name.rsplit(".", 1)[0], (first, last), diagnostic=_diagnostic(m),
                    language=LANGUAGE, filename=name, lint_path=f"{pkg}/{rel}")


def candidates(eslint: ESLintProcess) -> tuple[dict[str, list[EditTask]], dict[str, Any]]:
    """Every fixable finding of KINDS in the languages set's TypeScript files: ({rule: tasks}, counts)."""
    by_kind: dict[str, list[EditTask]] = {k: [] for k in KINDS}
    files, findings, skipped = 0, Counter(), Counter()
    for pkg in lang_sources.packages((LANGUAGE,)):
        root = lang_sources.source_dir(pkg)
        for rel, path in lang_tasks.source_files(root, LANGUAGE):
            why = lang_tasks.skipped_path(rel)
            text = path.read_text(encoding="utf-8", errors="replace") if why is None else ""
            why = why or lang_tasks.skipped_text(text) or (
                "a character beyond U+FFFF" if any(ord(c) > 0xFFFF for c in text) else None) or (
                "parse error" if tokens(text) is None else None)  # as the languages set: tree-sitter must parse it
            if why:
                skipped[why] += 1
                continue
            files += 1
            for m in eslint.lint(f"{pkg.key}/{rel}", text):
                if m.get("fatal"):
                    skipped["ESLint cannot parse it"] += 1
                    break
                findings[m.get("ruleId")] += 1
                if m.get("ruleId") in by_kind and m.get("fix"):
                    by_kind[m["ruleId"]].append(_task(pkg.key, rel, text, m))
    counts = {"files": files, "skipped": dict(skipped), "fixable": {k: len(v) for k, v in by_kind.items()},
              "findings": {k: findings[k] for k in KINDS}}
    return by_kind, counts


def sample(by_kind: dict[str, list[EditTask]], n: int | None = PER_KIND, seed: int = SEED) -> list[EditTask]:
    """n per rule (None: all), at most one per file, taken from the packages in turn."""
    out: list[EditTask] = []
    for kind, tasks in by_kind.items():
        rng = random.Random(f"{seed}:{kind}")
        per_file: dict[str, EditTask] = {}
        for t in rng.sample(tasks, len(tasks)):
            per_file.setdefault(t.lint_path, t)
        pools: dict[str, list[EditTask]] = {}
        for t in per_file.values():
            pools.setdefault(t.lint_path.split("/", 1)[0], []).append(t)
        picked: list[EditTask] = []
        limit = len(per_file) if n is None else n
        while len(picked) < limit and any(pools.values()):
            for pkg in sorted(pools):
                if pools[pkg] and len(picked) < limit:
                    picked.append(pools[pkg].pop())
        out += sorted(picked, key=lambda t: t.task_id)
    return out


def all_tasks(n: int | None = PER_KIND) -> tuple[dict[str, list[EditTask]], dict[str, Any]]:
    by_kind, counts = candidates(linter())
    return {"quick-fix": sample(by_kind, n), "inline-edit": []}, counts


# --- the verdict ----------------------------------------------------------------------------------
def tokens(text: str) -> list[tuple[str, str]] | None:
    """The file's TypeScript syntax tree in pre-order, named nodes by type and leaves by their text:
    the program without its layout, comments and statement-ending semicolons (optional in
    TypeScript; where leaving one out changes the meaning the tree differs); None when it does not
    parse."""
    tree = lang_tasks.parser(LANGUAGE).parse(text.encode("utf-8"))
    if tree.root_node.has_error:
        return None
    out: list[tuple[str, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in lang_tasks.COMMENTS or node.type == ";":
            continue
        if node.child_count == 0:
            out.append((node.type, node.text.decode("utf-8", "replace")))
        else:
            if node.is_named:
                out.append((node.type, ""))
            stack.extend(reversed(node.children))
    return out


async def judge(task: EditTask, after: str, known: dict[str, Counter]) -> tuple[bool, list[str], str]:
    """(fixed, new findings, result) of one answer; `known` caches the task file's findings."""
    eslint = linter()
    before = known.get(task.task_id)
    if before is None:
        before = known[task.task_id] = Counter(key(m) for m in await eslint.lint_async(task.lint_path, task.broken))
    now = await eslint.lint_async(task.lint_path, after)
    if any(m.get("fatal") for m in now):
        return False, [], "does not parse: " + next(m["message"] for m in now if m.get("fatal"))[:150]
    counted = Counter(key(m) for m in now)
    target = key({"ruleId": task.kind, "message": task.note})
    new = [f"{r}: {msg}" for (r, msg), c in counted.items() if c > before[(r, msg)]]
    gone = counted[target] < before[target]
    mine = tokens(after)
    same = mine is not None and mine == tokens(task.original)
    if same and not new:
        return True, [], "passed"
    if not gone:
        return False, new, "the finding is still there"
    if new:
        return False, new, f"new findings: {'; '.join(new)[:150]}"
    return False, new, "resolved, but not as ESLint fixes it (the program changed)"
