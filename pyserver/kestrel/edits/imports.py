"""An undefined name that a standard import provides gets that import, without asking the model,
and the file's other missing names from the same module come along in the same line. Only when
certain: `import name` only when the file uses `name` as a module (`name.attr`) and every attribute
it reads exists in that module; `from module import name` never when `name` is a slip of a name the
file binds (a prefix of a local, or a local with an `s` added). Anything not certain goes to the
model like any other diagnostic. Why: docs/design-notes.md#pyserverkestreleditsimportspy"""

from __future__ import annotations

import ast
import importlib
import re
import sys

from ..context.python_names import bindings, unbound_reads

# Diagnostics of an undefined name, as ruff, pyflakes, pyright/Pylance and Python word them.
_UNDEFINED = re.compile(r"(?:undefined name|name) [`'\"](?P<name>[A-Za-z_]\w*)[`'\"](?: is not defined)?|"
                        r"[\"'](?P<name2>[A-Za-z_]\w*)[\"'] is not defined", re.I)
# Modules whose public names are commonly used unqualified, searched in this order.
_FROM_MODULES = ("collections", "typing", "dataclasses", "functools", "itertools", "math", "pathlib", "fractions",
                 "decimal", "enum", "abc", "collections.abc")


def undefined_name(message: str) -> str | None:
    m = _UNDEFINED.search(message or "")
    return None if m is None else (m.group("name") or m.group("name2"))


def known_import(name: str, language: str) -> str | None:
    """The import line that defines `name` from the standard library, or None."""
    if language != "python" or not name or name.startswith("_"):
        return None
    if name in getattr(sys, "stdlib_module_names", ()):
        return f"import {name}"
    for module_name in _FROM_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        public = getattr(module, "__all__", None)
        if (name in public) if public is not None else (hasattr(module, name) and not name.startswith("_")):
            return f"from {module_name} import {name}"
    return None


# Standard modules whose import does something (opens a browser, prints): never imported to look.
_NOT_IMPORTED = frozenset({"antigravity", "this", "__hello__", "__phello__", "idlelib", "turtledemo", "tkinter",
                           "turtle"})


def module_attributes_read(tree: ast.AST, name: str) -> list[str] | None:
    """The attributes the code reads from `name` (`name.attr`); None when `name` is also read bare
    (not as a module) or never as `name.attr`."""
    attrs: list[str] = []
    as_value: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            attrs.append(node.attr)
            as_value.add(id(node.value))
    bare = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in as_value
               for n in ast.walk(tree))
    return None if bare or not attrs else attrs


def _used_as_module(tree: ast.AST, name: str) -> bool:
    attrs = module_attributes_read(tree, name)
    if attrs is None or name in _NOT_IMPORTED:
        return False
    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module that fails to import is no certain fix
        return False
    return all(hasattr(module, attr) for attr in attrs)


def slip_of_a_local(tree: ast.AST, name: str) -> str | None:
    """A name the file binds that `name` looks like a slip of: `name` is a prefix of it (one or
    two letters dropped) or it plus an `s`; None when there is none."""
    bound = bindings(tree) or {}
    for local in bound:
        if local == name:
            continue
        if (local.startswith(name) and len(local) - len(name) <= 2) or name == local + "s":
            return local
    return None


def missing_imports(text: str, name: str, language: str) -> str | None:
    """The import line for `name`, with the file's other unbound names from the same module; None
    when no standard import certainly provides it (see the module docstring)."""
    line = known_import(name, language)
    if line is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if not line.startswith("from "):
        # `import name`: only for a module use the file shows (a file that does not parse shows none)
        return line if tree is not None and _used_as_module(tree, name) else None
    if tree is None:
        return line
    if slip_of_a_local(tree, name):
        return None
    module = line.split()[1]
    names = [name]
    for read in unbound_reads(tree):
        if read.id not in names and known_import(read.id, language) == f"from {module} import {read.id}" \
                and not slip_of_a_local(tree, read.id):
            names.append(read.id)
    return f"from {module} import {', '.join(names)}"
