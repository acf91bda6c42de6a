"""Which names Python code binds and reads, from its syntax tree (no toolchain, no scopes: the
completion name guard and the quick fixes want "is this name bound anywhere at all")."""

from __future__ import annotations

import ast
import builtins

BUILTINS = frozenset(dir(builtins))


def position(node: ast.AST) -> tuple[int, int]:
    """(1-based line, 0-based column) of a node."""
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def imported_name(alias: ast.alias) -> str:
    """The name an import binds: `import a.b` binds `a`, `import a as b` binds `b`."""
    return alias.asname or alias.name.split(".")[0]


def bindings(tree: ast.AST, reads: list[ast.Name] | None = None) -> dict[str, list[tuple[int, int]]] | None:
    """Every name bound anywhere in `tree` (any scope) -> where; None after `from x import *`.
    The names read are appended to `reads` on the way (one walk for both)."""
    sites: dict[str, list[tuple[int, int]]] = {}

    def bind(name: str, node: ast.AST) -> None:
        sites.setdefault(name, []).append(position(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                bind(node.id, node)
            elif reads is not None:
                reads.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name, node)
        elif isinstance(node, ast.arg):
            bind(node.arg, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                bind(imported_name(alias), node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name, node)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bind(node.name, node)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bind(node.rest, node)
    return sites


def unbound_reads(tree: ast.AST) -> list[ast.Name]:
    """The reads of names that nothing in `tree` binds (builtins included), in source order; []
    after `from x import *` (anything may be bound)."""
    reads: list[ast.Name] = []
    sites = bindings(tree, reads)
    if sites is None:
        return []
    return sorted((r for r in reads if r.id not in sites and not predefined(r.id)), key=position)


def predefined(name: str) -> bool:
    """A builtin, or a module attribute every module has (__name__, __file__, ...)."""
    return name in BUILTINS or (name.startswith("__") and name.endswith("__"))
