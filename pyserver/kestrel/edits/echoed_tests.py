"""A repair of definitions that brings new top-level statements along (`assert f(5) == False`,
`print(f(2))`: the failing test or a try-out, echoed from the request), or new `test_*` functions, is
offered without them: a user applying a fix takes the function and its imports, not what the model
wrote to try it (0.5B on HumanEvalFix). Python only, and only when the region held nothing but
definitions and imports and both versions parse."""

from __future__ import annotations

import ast
import textwrap

_KEPT = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _new_test(node: ast.stmt, had: set[str]) -> bool:
    """A pytest-style test function the region did not have."""
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test") and node.name not in had


def drop_echoed_statements(old: str, new: str, language: str) -> str:
    """`new` (a rewrite of the region `old`) without the top-level statements it adds that are not
    definitions or imports."""
    if language != "python" or old == new:
        return new
    try:
        old_tree, new_tree = ast.parse(textwrap.dedent(old)), ast.parse(textwrap.dedent(new))
    except SyntaxError:
        return new
    if not old_tree.body or not all(isinstance(node, _KEPT) for node in old_tree.body):
        return new  # the region holds module-level code of its own: its statements are the user's business
    had = {node.name for node in old_tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    echoed = [node for node in new_tree.body if not isinstance(node, _KEPT) or _new_test(node, had)]
    if not echoed:
        return new
    lines = new.split("\n")
    for node in reversed(echoed):
        del lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
    while lines and not lines[-1].strip():
        lines.pop()
    trailing = new[len(new.rstrip("\n")):]
    return "\n".join(lines) + trailing
