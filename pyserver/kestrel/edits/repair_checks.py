"""Two checks on a repair's rewrite of Python definitions, from the code's syntax tree:
- `same_code`: it changes only layout, moves an import, or respells the same program (`elif` after a
  `return`, `x * 0.5` for `0.5 * x`, `range(0, n)` for `range(n)`, an `if` nested in an `if` for an
  `and`, `return a if c else b` for two returns): it repairs nothing (HumanEvalFix 0.5B: 6 of 22
  wrong rewrites);
- `dropped_definitions`: it loses a function or class the region defined (the fix of `f` that no
  longer defines `f` breaks every caller).
Both answer "no opinion" (False, []) when either version does not parse."""

from __future__ import annotations

import ast
import textwrap


def _tree(code: str) -> ast.Module | None:
    try:
        return ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return None


def _shape(tree: ast.Module) -> tuple[str, list[str]]:
    """The tree without its import statements, and those imports (sorted): where an import sits
    (in the function or above it) is not a repair."""
    imports: list[str] = []

    class Strip(ast.NodeTransformer):
        def visit_Import(self, node: ast.AST) -> None:
            imports.append(ast.dump(node))

        visit_ImportFrom = visit_Import

    return ast.dump(_Canonical(_bound_names(tree)).visit(Strip().visit(tree))), sorted(imports)


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the code binds (assigned, defined, imported, a parameter): a builtin it shadows is
    not the builtin."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class _Canonical(ast.NodeTransformer):
    """One tree for spellings of one program that models often offer as a "fix": `if a: return x`
    + `elif b:` / `else:` runs as the `if` followed by what its `else` holds (ruff's RET505-508);
    a number times or plus an expression is the expression times or plus the number; `range(0, n)`
    is `range(n)` (the builtin's default start, unless the code binds `range`); `if a:` holding only
    `if b:`, neither with an `else`, is `if a and b:` (ruff's SIM102), and `and` chains are flat;
    `return a if c else b` is `if c: return a` + `return b`."""

    def __init__(self, bound: set[str]) -> None:
        self.bound = bound

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, (ast.Add, ast.Mult)) and _number(node.right) and not _number(node.left):
            node.left, node.right = node.right, node.left
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if (isinstance(node.func, ast.Name) and node.func.id == "range" and "range" not in self.bound
                and len(node.args) == 2 and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
                and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is int
                and node.args[0].value == 0):
            node.args = node.args[1:]
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        values: list[ast.expr] = []
        for v in node.values:
            values.extend(v.values if isinstance(v, ast.BoolOp) and isinstance(v.op, type(node.op)) else [v])
        node.values = values
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        inner = node.body[0] if len(node.body) == 1 else None
        if isinstance(inner, ast.If) and not inner.orelse and not node.orelse:
            test = self.visit_BoolOp(ast.BoolOp(op=ast.And(), values=[node.test, inner.test]))
            return ast.If(test=test, body=inner.body, orelse=[])
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.IfExp):
            e = node.value
            return ast.If(test=e.test, body=[ast.Return(value=e.body)], orelse=[ast.Return(value=e.orelse)])
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                setattr(node, field, _flat(stmts))
        return node


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


def _flat(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in stmts:
        out.append(stmt)
        if isinstance(stmt, ast.If) and stmt.orelse and isinstance(stmt.body[-1], _EXITS):
            out.extend(_flat(stmt.orelse))
            stmt.orelse = []
    return out


def same_code(old: str, new: str, language: str) -> bool:
    """True when `new` parses to the tree `old` does, comments, layout and the place of its imports aside."""
    if language != "python":
        return False
    a, b = _tree(old), _tree(new)
    return a is not None and b is not None and _shape(a) == _shape(b)


def dropped_definitions(old: str, new: str, language: str) -> list[str]:
    """Names of the top-level functions and classes of `old` that `new` no longer defines."""
    if language != "python":
        return []
    a, b = _tree(old), _tree(new)
    if a is None or b is None:
        return []
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    kept = {node.name for node in b.body if isinstance(node, kinds)}
    return [node.name for node in a.body if isinstance(node, kinds) and node.name not in kept]
