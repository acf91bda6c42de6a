"""Never show a suggestion that reads a name the code cannot have (Python, checked without a toolchain).

Held back: a suggestion that reads a name nothing binds (the file, an import, a builtin) ->
NameError; a local read above its only assignment, outside any loop that could have assigned it ->
UnboundLocalError; a suggestion that leaves unbound a name the next few lines after the cursor read.
A star import, or a rest of the file that does not parse, counts as binding everything.
Why, and what is parsed when: docs/design-notes.md#pyserverkestrelcompletionname_guardpy
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Iterator

from ..context.python_names import bindings, imported_name, position, predefined
from .syntax_guard import checked_block, parse

NEXT_LINES = 3  # "right after the cursor": the lines the gap being filled has to serve
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@lru_cache(maxsize=8)
def _outside_names(outside: str) -> frozenset[str] | None:
    """The names the rest of the file binds (None: it does not parse, or imports *)."""
    try:
        sites = bindings(ast.parse(outside))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return None if sites is None else frozenset(sites)


def _bound_outside(name: str, outside: str) -> bool:
    """Does the rest of the file bind `name`? Parsed only when the name is in its text at all
    (the usual answer, 'not even mentioned', costs a search instead of a parse)."""
    if not re.search(rf"(?<![\w.]){re.escape(name)}\b", outside):
        return "import *" in outside
    names = _outside_names(outside)
    return names is None or name in names


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _local_bindings(func: ast.AST, name: str) -> list[ast.AST] | None:
    """The nodes that bind `name` in `func`'s own scope; None when it is a parameter or declared
    global/nonlocal (then it is not a plain local)."""
    sites: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(func))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if isinstance(node, ast.arguments):
            if any(a.arg == name for a in ast.walk(node) if isinstance(a, ast.arg)):
                return None
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                sites.append(node)
            todo.extend(node.decorator_list)  # evaluated in this scope; the body is not
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue  # their own scopes (the walrus corner case is not worth the code)
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            sites.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(imported_name(a) == name for a in node.names):
                sites.append(node)
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            sites.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return sites


def _read_too_early(read: ast.Name, parents: dict[ast.AST, ast.AST]) -> bool:
    """A read of a local of the enclosing function that no earlier line (nor an enclosing loop) binds."""
    enclosing_loops: list[ast.AST] = []
    node: ast.AST = read
    while node in parents:
        node = parents[node]
        if isinstance(node, _LOOPS):
            enclosing_loops.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            break
        elif isinstance(node, _SCOPES):
            return False  # a lambda, class body or comprehension: scoping too subtle to be sure
    else:
        return False  # module level: import order decides, not this text
    sites = _local_bindings(node, read.id)
    if not sites:
        return False
    if any(position(site) <= position(read) for site in sites):
        return False
    inside_loop = {id(n) for loop in enclosing_loops for n in ast.walk(loop)}
    return not any(id(site) in inside_loop for site in sites)


def misreads_names(before: str, text: str, after: str, language: str) -> bool:
    """True when the suggestion, or the code right after it, reads a name that is bound nowhere,
    or the suggestion reads a local bound only later."""
    return next(_misreads(before, text, after, language), None) is not None


def first_unbound_read(before: str, text: str, after: str, language: str) -> tuple[str, int] | None:
    """(name, its offset in `text`) of the first name the suggestion itself reads that nothing binds
    (not a local read too early, not a name in the lines after it); None when there is none."""
    for name, offset, unbound in _misreads(before, text, after, language):
        if unbound and offset is not None:
            return name, offset
    return None


def _misreads(before: str, text: str, after: str, language: str) -> Iterator[tuple[str, int | None, bool]]:
    """Each misread name: (name, its offset in `text` or None when it is after the suggestion,
    True when nothing binds it / False when it is a local read before its assignment)."""
    checked = checked_block(before, text, after, language)
    if checked is None:
        return
    start, end = checked
    head, tail = before[start:], after[:end]
    block = parse(head + text + tail)
    if not isinstance(block, ast.Module):
        return  # the syntax guard's business
    reads: list[ast.Name] = []
    in_block = bindings(block, reads)
    if in_block is None:
        return
    outside: str | None = None  # the rest of the file, joined only when a name must be looked up there
    first_line = head.count("\n") + 1
    first_col = len(head) - head.rfind("\n") - 1
    last_line = first_line + text.count("\n")
    last_col = len(text) - text.rfind("\n") - 1 if "\n" in text else first_col + len(text)
    parents: dict[ast.AST, ast.AST] | None = None
    for node in reads:
        where = position(node)
        if where < (first_line, first_col) or where[0] > last_line + NEXT_LINES:
            continue
        name = node.id
        sites = in_block.get(name)
        if sites is None:
            if predefined(name):
                continue
            outside = outside if outside is not None else before[:start] + "\n" + after[end:]
            if _bound_outside(name, outside):
                continue
            # in the suggestion, or right after it where the suggestion should bind it
            yield name, _offset_in(text, where, first_line, first_col, last_line, last_col), True
        elif where < (last_line, last_col) and min(sites) > where:
            parents = parents or _parents(block)
            if _read_too_early(node, parents):
                yield name, _offset_in(text, where, first_line, first_col, last_line, last_col), False


def _offset_in(text: str, where: tuple[int, int], first_line: int, first_col: int, last_line: int,
               last_col: int) -> int | None:
    """Where a (line, column) of the parsed block falls in the suggestion's text (None: after it)."""
    line, col = where
    if (line, col) >= (last_line, last_col):
        return None
    if line == first_line:
        return col - first_col
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts[line - first_line] + col
