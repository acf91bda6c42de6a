"""Is a proposed edit worth offering? Checked before the user sees it.

- It must parse (Python: `compile`; the tree-sitter languages: the completion guard's grammar): a
  fix that leaves a file that does not parse, or an edit that breaks a file that parsed, is refused.
- With a linter here (Kestrel's own ruff, see `linter`; Python), the edited file is linted (`F,E9`): a
  fix must make its own diagnostic go away, and no edit may bring a finding the file did not have (a
  name it undefines, a variable it leaves unused); an import it adds unused is taken out instead.
"""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache

from .linter import ruff_path, run_folder

LINT_TIMEOUT_S = 10.0
LINT_SELECT = "F,E9"


def parse_error(text: str, language: str) -> SyntaxError | None:
    """The error that stops `text` from compiling, None when it compiles or cannot be checked."""
    if language != "python":
        return _tree_sitter_error(text, language)
    try:
        compile(text, "<edit>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except (ValueError, OverflowError, RecursionError, MemoryError):  # e.g. null bytes: not a syntax question
        return None
    return None


def _tree_sitter_error(text: str, language: str) -> SyntaxError | None:
    """The first ERROR or MISSING node of the language's tree-sitter parse (no grammar: None)."""
    from ..completion.guards import guard_for

    guard = guard_for(language)
    parser = getattr(guard, "parser", lambda: None)()
    if parser is None:
        return None
    node = parser.parse(text.encode("utf-8", "surrogatepass")).root_node
    if not node.has_error:
        return None
    while True:  # down to the first node that is the error itself
        child = next((c for c in node.children if c.has_error or c.is_error or c.is_missing), None)
        if node.is_error or node.is_missing or child is None:
            break
        node = child
    what = f"missing {node.type}" if node.is_missing else "syntax error"
    row, col = node.start_point
    return SyntaxError(what, ("<edit>", row + 1, col + 1, None))


def syntax_error(text: str, language: str) -> str | None:
    """Why `text` does not parse ("line N: message"), None when it does or cannot be checked."""
    error = parse_error(text, language)
    return None if error is None else f"line {error.lineno}: {error.msg}"


def _ruff_findings(text: str, path: str, select: str) -> list[dict] | None:
    """ruff's JSON findings for `text` (the checks in `select`), None when it cannot run here."""
    ruff = ruff_path()
    if ruff is None:
        return None
    try:
        proc = subprocess.run(
            [ruff, "check", "--isolated", "--no-cache", "--select", select, "--output-format", "json",
             "--stdin-filename", path or "edit.py", "-"],
            input=text, capture_output=True, text=True, timeout=LINT_TIMEOUT_S, cwd=run_folder(ruff),
        )
        return json.loads(proc.stdout or "[]")
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


@lru_cache(maxsize=4)  # a fix's candidates are all compared with the same unchanged file
def lint(text: str, path: str, language: str) -> tuple[tuple[str, str, int], ...] | None:
    """(code, message, 1-based row) of each finding, or None when no linter can run here."""
    findings = _ruff_findings(text, path, LINT_SELECT) if language == "python" else None
    if findings is None:
        return None
    return tuple((f.get("code") or "invalid-syntax", f.get("message", ""), (f.get("location") or {}).get("row", 0))
                 for f in findings)


def _unused_import_fixes(text: str, path: str) -> list[tuple[str, dict]]:
    """(message, ruff's safe fix) of each unused import in `text` (F401), [] when no linter runs here."""
    return [(f.get("message", ""), f["fix"]) for f in _ruff_findings(text, path, "F401") or []
            if (f.get("fix") or {}).get("applicability") == "safe" and f["fix"].get("edits")]


def _apply(text: str, edits: list[dict]) -> str:
    """ruff's edits (1-based rows and columns, in characters) applied from the last one back."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(loc: dict) -> int:
        row = min(max(loc["row"], 1), len(lines) + 1)
        return min(starts[row - 1] + loc["column"] - 1, len(text))

    for e in sorted(edits, key=lambda e: offset(e["location"]), reverse=True):
        text = text[: offset(e["location"])] + e.get("content", "") + text[offset(e["end_location"]):]
    return text


def without_new_unused_imports(before: str, after: str, path: str, language: str) -> str:
    """`after` without the imports it adds that nothing uses (ruff's own fix, one at a time); imports
    `before` already had stay, used or not (they are the user's)."""
    if language != "python":
        return after
    known = {message for message, _ in _unused_import_fixes(before, path)}
    for _ in range(8):  # one fix at a time: two unused names of one statement share its line
        fix = next((f for message, f in _unused_import_fixes(after, path) if message not in known), None)
        if fix is None:
            break
        after = _apply(after, fix["edits"])
    return after


def changed_rows(before: str, after: str) -> tuple[int, int]:
    """1-based first and last row of `after` that differ from `before` (common head/tail removed)."""
    a, b = before.split("\n"), after.split("\n")
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head + 1, len(b) - tail


def lint_problem(before: str, after: str, path: str, language: str, fixing: tuple[str, str] | None = None) -> str:
    """What the linter holds against `after` ("" when nothing, or when no linter runs here):
    the diagnostic being fixed (`fixing` = (code, message)) still there, or a finding `before`
    did not have."""
    found = lint(after, path, language)
    if found is None:
        return ""
    if fixing is not None and any(f[:2] == fixing for f in found):
        return f"it still reports {fixing[0]}: {fixing[1]}"
    known = {f[:2] for f in lint(before, path, language) or []}
    fresh = [f for f in found if f[:2] not in known and f[:2] != fixing]
    if fresh and syntax_error(before, language):
        # A file that did not parse hid its other findings: only those in the edited lines count.
        first, last = changed_rows(before, after)
        fresh = [f for f in fresh if first <= f[2] <= last]
    return f"it brings {fresh[0][0]}: {fresh[0][1]}" if fresh else ""
