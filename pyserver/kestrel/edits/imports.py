"""An undefined name that a standard import provides gets that import, without asking the model
(what an editor's "Add import" does): the fix is certain, instant and one line. The other names
the file reads from the same module and does not import come along in the same line (an editor's
"add all missing imports"): fixing `List` and leaving `Optional` two lines down is no fix."""

from __future__ import annotations

import ast
import importlib
import re
import sys

from ..context.python_names import unbound_reads

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


def missing_imports(text: str, name: str, language: str) -> str | None:
    """The import line for `name`, with the file's other unbound names from the same module."""
    line = known_import(name, language)
    if line is None or not line.startswith("from "):
        return line
    module = line.split()[1]
    try:
        reads = unbound_reads(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return line
    names = [name]
    for read in reads:
        if read.id not in names and known_import(read.id, language) == f"from {module} import {read.id}":
            names.append(read.id)
    return f"from {module} import {', '.join(names)}"
