"""Python: the syntax guard and the name guard (checked without a toolchain)."""

from __future__ import annotations

from ..name_guard import misreads_names
from ..syntax_guard import breaks_syntax
from . import register


class PythonGuard:
    def refuses(self, before: str, text: str, after: str) -> str | None:
        if breaks_syntax(before, text, after, "python"):
            return "breaks the syntax"
        if misreads_names(before, text, after, "python"):
            return "reads a name the code cannot have"
        return None


register("python", PythonGuard())
