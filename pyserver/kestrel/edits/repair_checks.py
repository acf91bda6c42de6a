"""Two checks on a repair's rewrite of Python definitions, from the code's syntax tree:
- `same_code`: it changes only layout (blank lines, spacing, line breaks) or moves an import: it
  repairs nothing and is "nothing to change" (0.5B on HumanEvalFix: 6 of 22 wrong rewrites);
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

    return ast.dump(Strip().visit(tree)), sorted(imports)


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
