"""Imports a rewrite needs go to the file's import block, not into the edited region.

A model asked to change a function writes the import the change needs first (`import math`, then
the function), forgets one (`Dict`), or adds one it does not use. Python only: a forgotten standard
import is added, an unused added one dropped (mend_imports), and the new import lines at the start
of the rewrite are placed after the file's last top-level import (else after its docstring)."""

from __future__ import annotations

import ast

_IMPORT_START = ("import ", "from ")


def split_imports(rewritten: str, region: str, language: str) -> tuple[str, list[str]]:
    """(the rewrite without its leading import lines, those the file does not have yet). Nothing is
    taken when the region itself starts with an import (the user is editing the imports)."""
    if language != "python" or region.lstrip().startswith(_IMPORT_START):
        return rewritten, []
    lines = rewritten.split("\n")
    taken: list[str] = []
    k = 0
    while k < len(lines) and (not lines[k].strip() or _is_import(lines[k].strip())):
        if lines[k].strip():
            taken.append(lines[k].strip())
        k += 1
    if not taken or k >= len(lines):
        return rewritten, []
    return "\n".join(lines[k:]), taken


def _is_import(line: str) -> bool:
    if not line.startswith(_IMPORT_START):
        return False
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return False
    return len(tree.body) == 1 and isinstance(tree.body[0], (ast.Import, ast.ImportFrom))


def new_imports(text: str, imports: list[str]) -> list[str]:
    """The import lines the file does not have at its top level already (compared without spaces;
    one inside a function does not serve the rest of the file)."""
    have = {" ".join(ln.split()) for ln in text.split("\n") if ln[:1].strip()}
    out: list[str] = []
    for line in imports:
        key = " ".join(line.split())
        if key not in have and line not in out:
            out.append(line)
    return out


def import_offset(text: str) -> int:
    """Where new import lines go: after the last import of the file's head (its leading run of
    imports, docstring and `__future__` lines), else after the module docstring, else offset 0."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0
    last_line = 0
    for i, node in enumerate(tree.body):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant) \
            and isinstance(node.value.value, str)
        if isinstance(node, (ast.Import, ast.ImportFrom)) or docstring:
            last_line = node.end_lineno or last_line
        else:
            break
    if last_line == 0:
        return 0
    lines = text.split("\n")
    return sum(len(ln) + 1 for ln in lines[:last_line])


def import_edit(text: str, imports: list[str]) -> tuple[int, str] | None:
    """(offset, text to insert) adding `imports` the file lacks at its import block; None if none."""
    lines = new_imports(text, imports)
    if not lines:
        return None
    at = import_offset(text)
    block = "\n".join(lines) + "\n"
    if at > len(text):  # a file without a final newline whose last line is an import
        return len(text), "\n" + block.rstrip("\n")
    return at, block


def mend_imports(text: str, start: int, end: int, rewritten: str, path: str, language: str) -> str:
    """The rewrite with its import slips mended, as a person would before accepting it: a name it
    uses that a standard import provides gets that import (`Dict` -> `from typing import Dict`),
    and an import line it added that nothing uses is dropped. Python with ruff only; anything else
    the linter finds is left for the checks."""
    from .imports import missing_imports
    from .validate import lint

    if language != "python":
        return rewritten
    after = text[:start] + rewritten + text[end:]
    found = lint(after, path, language)
    if not found:
        return rewritten
    known = {f[:2] for f in lint(text, path, language) or ()}
    fresh = [f for f in found if f[:2] not in known]
    needed: list[str] = []
    for code, message, _ in fresh:
        name = _quoted(message)
        if code == "F821" and not any(name in _imported_names(line) for line in needed):
            line = missing_imports(after, name, language)  # with the file's other names from that module
            if line:
                needed.append(line)
    unused = {_quoted(message).rsplit(".", 1)[-1] for code, message, _ in fresh if code == "F401"}
    lines = rewritten.split("\n")
    kept = [ln for ln in lines if not (_is_import(ln.strip()) and _imported_names(ln) <= unused and _imported_names(ln))]
    return "".join(line + "\n" for line in needed) + "\n".join(kept)


def _quoted(message: str) -> str:
    """The name between backticks in a ruff message."""
    parts = message.split("`")
    return parts[1] if len(parts) > 2 else ""


def _imported_names(line: str) -> set[str]:
    """The names an import line binds (`import a.b` binds `a.b` as ruff reports it, `as x` binds x)."""
    try:
        node = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError):
        return set()
    if not isinstance(node, (ast.Import, ast.ImportFrom)):
        return set()
    return {(a.asname or a.name).rsplit(".", 1)[-1] for a in node.names}
