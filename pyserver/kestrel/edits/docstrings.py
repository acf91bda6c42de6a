"""A repair keeps the documentation it was given: a rewrite asked to fix a bug that also rewrites a
docstring (its examples, its description) gets the old docstring back. The docstring says what the
code should do; a small model "fixing" it to match the buggy code hides the bug instead of fixing it
(0.5B on HumanEvalFix: rewrites that changed doctest examples and nothing else). Python only, and
only when both versions parse and their definitions line up by name."""

from __future__ import annotations

import ast
import textwrap

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _docstring_spans(source: str) -> dict[str, tuple[int, int, str]] | None:
    """Qualified name -> (first line, last line, text) of each definition's docstring (0-based)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    spans: dict[str, tuple[int, int, str]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFS):
                name = f"{prefix}{child.name}"
                first = child.body[0] if child.body else None
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str) and first.end_lineno is not None):
                    spans[name] = (first.lineno - 1, first.end_lineno - 1, first.value.value)
                visit(child, name + ".")

    visit(tree, "")
    return spans


def keep_docstrings(old: str, new: str, language: str) -> str:
    """`new` (a rewrite of the region `old`) with each docstring `old` had put back as it was."""
    if language != "python" or old == new:
        return new
    old_lines, new_lines = old.split("\n"), new.split("\n")
    dedented_old, dedented_new = textwrap.dedent(old), textwrap.dedent(new)
    shift_old = len(old_lines[0]) - len(dedented_old.split("\n")[0])
    shift_new = len(new_lines[0]) - len(dedented_new.split("\n")[0])
    if shift_old != shift_new:
        return new
    before, after = _docstring_spans(dedented_old), _docstring_spans(dedented_new)
    if not before or after is None:
        return new
    # Bottom up, so that a replaced docstring of another length does not move the ones above it.
    for name, (n_first, n_last, n_text) in sorted(after.items(), key=lambda kv: -kv[1][0]):
        kept = before.get(name)
        if kept is None or kept[2] == n_text:
            continue
        o_first, o_last, _ = kept
        new_lines[n_first : n_last + 1] = old_lines[o_first : o_last + 1]
    return "\n".join(new_lines)
