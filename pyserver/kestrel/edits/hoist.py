"""Imports a rewrite needs go to the file's import block, not into the edited region.

A model asked to change a function writes the import the change needs first (`import math`, then
the function). Left in the region it lands mid-file, or inside a class or function. Python only:
the new import lines at the start of the rewrite (ones the file lacks) are taken out and placed
after the file's last top-level import at its head (else after its docstring, else at the top)."""

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
