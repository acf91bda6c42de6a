"""The oracle context of a repository task: the definitions of the cross-file names its reference
uses, resolved by following the imports to the module that defines them, and rendered the way a
context engine would send them (not whole files):

- a function: its decorators and signature, its docstring (at most DOC_LINES lines), body `...`;
- a class: its decorators, header and docstring, its class-level annotated fields (dataclass and
  pydantic fields are the constructor), then `__init__`'s signature and the signatures of its public
  methods (`__call__` too), each with body `...`, within MAX_CLASS_CHARS (the rest counted in a
  comment);
- a module-level assignment (a constant, an alias, a logger): the statement, at most MAX_ASSIGN_CHARS;
- a name bound to a module (`from . import utils`): the definitions of the attributes the reference
  reads from it (`utils.x`).

Everything is rendered from the AST (`ast.unparse`), so comments and the author's line breaks are
not kept. Nothing here imports the package.
"""

from __future__ import annotations

import ast
import copy
import inspect
from dataclasses import dataclass

DOC_LINES = 12
MAX_CLASS_CHARS = 2500
MAX_ASSIGN_CHARS = 400
MAX_CONTEXT_CHARS = 4000  # all definitions of one task (~1,150 tokens at 3.5 characters per token)
KEEP_DUNDERS = {"__init__", "__call__"}

Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign


@dataclass(frozen=True)
class Definition:
    name: str  # the name as the defining module spells it
    path: str  # the defining module's path, relative to the workspace root
    text: str  # rendered (see the module docstring)


def _docstring_stmt(body: list[ast.stmt]) -> list[ast.stmt]:
    """[the docstring statement, clipped to DOC_LINES lines] or []."""
    if not body or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Constant):
        return []
    value = body[0].value.value
    if not isinstance(value, str):
        return []
    lines = inspect.cleandoc(value).split("\n")
    if len(lines) > DOC_LINES:
        lines = lines[:DOC_LINES] + ["..."]
    if len(lines) > 1:  # laid out as in a source file: continuation lines at the body's indentation
        lines = [lines[0], *("    " + line if line.strip() else "" for line in lines[1:]), "    "]
    return [ast.Expr(ast.Constant("\n".join(lines)))]


def _ellipsis() -> ast.stmt:
    return ast.Expr(ast.Constant(...))


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, doc: bool) -> ast.FunctionDef | ast.AsyncFunctionDef:
    out = copy.copy(node)
    out.body = [*(_docstring_stmt(node.body) if doc else []), _ellipsis()]
    return out


def _public_methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
               and (not s.name.startswith("_") or s.name in KEEP_DUNDERS)]
    return sorted(methods, key=lambda m: m.name != "__init__")  # __init__ first, the rest in file order


def render_class(node: ast.ClassDef) -> str:
    fields = [s for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    head = copy.copy(node)
    head.body = [*_docstring_stmt(node.body), *fields] or [_ellipsis()]
    text = ast.unparse(head)
    left = 0
    methods = _public_methods(node)
    for k, m in enumerate(methods):
        sig = "\n".join("    " + line for line in ast.unparse(_signature(m, doc=False)).split("\n"))
        if len(text) + len(sig) + 2 > MAX_CLASS_CHARS:
            left = len(methods) - k
            break
        text += "\n\n" + sig
    if left:
        text += f"\n\n    # ... {left} more methods"
    return text


def render(node: Def) -> str:
    """One definition as the oracle shows it (see the module docstring)."""
    if isinstance(node, ast.ClassDef):
        return render_class(node)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ast.unparse(_signature(node, doc=True))
    text = ast.unparse(node)
    return text if len(text) <= MAX_ASSIGN_CHARS else text[: MAX_ASSIGN_CHARS - 4].rstrip() + " ..."


def context_files(defs: list[Definition], budget: int = MAX_CONTEXT_CHARS) -> tuple[tuple[str, str], ...]:
    """The definitions grouped into one context file per defining module, in order of first use,
    within `budget` characters (the first definition always, clipped to the budget if need be)."""
    files: dict[str, list[str]] = {}
    used = 0
    seen: set[tuple[str, str]] = set()
    for d in defs:
        if (d.path, d.name) in seen:
            continue
        seen.add((d.path, d.name))
        text = d.text
        if used + len(text) > budget:
            if used:
                continue
            text = text[:budget]
        files.setdefault(d.path, []).append(text)
        used += len(text)
    return tuple((path, "\n\n\n".join(texts)) for path, texts in files.items())
