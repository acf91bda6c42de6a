"""Edits named by a definition rather than by quoted text: `replace_symbol` (a whole function, method or
class written anew, the format small models write reliably: Aider's "whole" finding, at the size of one
definition) and `rename_symbol` (a Python name renamed at its definition and every use by jedi's
analysis, not by the model copying each line). Both give new texts; the writer proposes them for review.
Why: docs/design-notes.md#pyserverkestrelagentsymbol_editspy
"""

from __future__ import annotations

import json
import keyword
import re
import textwrap
from pathlib import Path

from ..context.code_chunks import Symbol, chunk_file, syntax_error
from .read_tools import ToolRefused, numbered, unnumbered

LISTED_SYMBOLS = 40  # named in a refusal that says what the file defines
_FENCE = re.compile(r"^\s*```[\w+-]*\n(.*?)\n```\s*$", re.S)
_LENIENT = json.JSONDecoder(strict=False)  # a string that holds real newlines besides escaped ones
_DEF_LINE = re.compile(r"^\s*(?:async\s+def|def|class)\b")  # after a Python definition's decorators
_CALLED = re.compile(r"^(?:async\s+)?(?:def|class|function|fn|func)\s+|\(.*$")  # `def f()` → `f`


def replace_definition(text: str, suffix: str, symbol: object, code: object, rel: str) -> str:
    """`text` with the definition `symbol` names replaced by `code`, re-indented to where it stands.
    Decorators the old one had are kept when the new code gives none. Refused (the message is for the
    model) when the name is not found or names several, or when the file parsed before and would not after."""
    if not isinstance(code, str) or not code.strip():
        raise ToolRefused("replace_symbol needs `code`: the definition's complete new code")
    found = find_definition(text, suffix, symbol, rel)
    code = _bare(code)
    lines = text.split("\n")
    start, end = found.start, found.end
    old_head = lines[start:end + 1]
    indent = old_head[0][:len(old_head[0]) - len(old_head[0].lstrip())]
    new = [indent + ln if ln.strip() else "" for ln in textwrap.dedent(code).strip("\n").split("\n")]
    if old_head[0].lstrip().startswith("@") and not new[0].lstrip().startswith("@"):
        new = old_head[:next((k for k, ln in enumerate(old_head) if _DEF_LINE.match(ln)), 0)] + new
    after = "\n".join(lines[:start] + new + lines[end + 1:])
    if syntax_error(text, suffix) is None:
        problem = syntax_error(after, suffix)
        if problem is not None and _escaped_twice(code):
            # `\"` and `\n` left in the code: its JSON was escaped twice (the 1.5B did). Read once more,
            # taken only if the file then parses.
            try:
                return replace_definition(text, suffix, symbol, _LENIENT.decode(f'"{code}"'), rel)
            except ToolRefused:
                pass
        if problem is not None:
            raise ToolRefused(f"with that code {rel} would not parse ({problem} of the file): `code` is the "
                              f"complete {found.qualified} as it should be, in the file's language, nothing left out")
    return after


class NotDefinedHere(ToolRefused):
    """The file defines no such name (the workspace may: the writer says where)."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def find_definition(text: str, suffix: str, symbol: object, rel: str) -> Symbol:
    """The one definition in `text` that `symbol` names ("parse", "Parser.parse", "def parse()")."""
    if not isinstance(symbol, str) or not symbol.strip():
        raise ToolRefused("name the function, method or class in `symbol` (a method as Class.method)")
    want = _CALLED.sub("", symbol.strip()).strip()
    _chunks, symbols = chunk_file(text, suffix)
    if not symbols:
        raise ToolRefused(f"Kestrel finds no definitions in {rel} (its language is not parsed here, or it does "
                          "not parse now): change it with edit_file")
    found = [s for s in symbols if s.qualified == want] or [s for s in symbols if s.name == want.split(".")[-1]]
    if not found:
        have = ", ".join(dict.fromkeys(s.qualified for s in symbols if s.kind != "variable"))
        raise NotDefinedHere(f"{rel} defines no {want!r}; it defines: {_listed(have)}", want)
    if len(found) > 1:
        where = ", ".join(f"{s.qualified} (line {s.start + 1})" for s in found[:LISTED_SYMBOLS])
        raise ToolRefused(f"{want!r} names {len(found)} definitions in {rel}: {where}; give the one you mean as Class.name")
    return found[0]


def renamed_texts(root: Path, file: Path, text: str, found: Symbol, new_name: object, rel: str) -> dict[Path, str]:
    """Each file's text after renaming the Python definition `found` (from find_definition) in `file` (its
    text `text`, the editor's) to `new_name`, by jedi (the definition, every import of it and every use in the project at
    `root`). Files outside `root` are never among them: a name defined there is refused."""
    if file.suffix not in (".py", ".pyi"):
        raise ToolRefused(f"rename_symbol renames Python names; for {rel} find each use with grep and change it "
                          "with edit_file")
    if not isinstance(new_name, str) or not new_name.isidentifier() or keyword.iskeyword(new_name):
        raise ToolRefused(f"new_name must be a Python name (letters, digits and _), not {new_name!r}")
    line, column = _name_at(text, found)
    import jedi  # ~0.3 s to import: only when a rename is asked for

    project = jedi.Project(root, load_unsafe_extensions=False)  # (no compiled module of the workspace is loaded)
    try:
        refactoring = jedi.Script(text, path=file, project=project).rename(line, column, new_name=new_name)
        changed = {Path(p).resolve(): c.get_new_code() for p, c in refactoring.get_changed_files().items()}
    except Exception as exc:  # noqa: BLE001 - jedi's RefactoringError and what its analysis raises on odd code
        raise ToolRefused(f"Kestrel could not rename {found.qualified} in {rel}: {exc}") from None
    real_root = root.resolve()
    outside = [p for p in changed if real_root not in p.parents]
    if outside:
        raise ToolRefused(f"renaming {found.qualified} would change files outside the workspace ({outside[0].name}); "
                          "it was not renamed")
    return changed


def _name_at(text: str, symbol: Symbol) -> tuple[int, int]:
    """Where the symbol's own name is written in its definition (1-based line, 0-based column, as jedi
    takes them): on the first line of its span (after any decorators) that names it."""
    pattern = re.compile(rf"\b{re.escape(symbol.name)}\b")
    lines = text.split("\n")
    for at in range(symbol.start, symbol.end + 1):
        if lines[at].lstrip().startswith("@"):
            continue
        hit = pattern.search(lines[at])
        if hit:
            return at + 1, hit.start()
    raise ToolRefused(f"Kestrel could not find where {symbol.qualified} is named")


def _escaped_twice(code: str) -> bool:
    if "\\n" not in code and '\\"' not in code:
        return False
    try:
        _LENIENT.decode(f'"{code}"')
    except ValueError:
        return False
    return True


def _bare(code: str) -> str:
    """The code a model sent, without a Markdown fence around it or read_file's line numbers."""
    fenced = _FENCE.match(code)
    if fenced:
        code = fenced.group(1)
    return unnumbered(code) if numbered(code) else code


def _listed(names: str) -> str:
    parts = names.split(", ")
    return names if len(parts) <= LISTED_SYMBOLS else ", ".join(parts[:LISTED_SYMBOLS]) + f", … ({len(parts)} in all)"
