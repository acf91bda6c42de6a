"""The agent's read tools: look at the workspace, never change it, never leave it.

A path a model names resolves inside a workspace folder (`..`, absolute paths and links that lead
out are refused); a file Kestrel never sends to a model (context/exclusion.py) is refused by name;
the walk is the codebase index's; an open document is read as the editor holds it. Results are
capped for a small model's context. No tool here writes or runs anything (write_tools.py proposes
changes). Why: docs/design-notes.md#pyserverkestrelagentread_toolspy
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..context.codebase_index import CodebaseIndex
from ..context.exclusion import is_excluded_path
from ..context.workspace_index import MAX_FILE_BYTES

READ_LINES = 120  # lines a read_file call returns at most
MAX_RESULT_CHARS = 6000  # a tool result is cut here (a small model's context is a few thousand tokens)
MAX_LISTED = 200
MAX_MATCHES = 40
MAX_SEARCH_HITS = 5
_NESTED_QUANTIFIER = re.compile(r"\([^()]*[+*}][^()]*\)\s*[+*{]")

TOOLS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read lines of a workspace file (at most 120 at a time).",
     "parameters": {"type": "object", "properties": {
         "path": {"type": "string", "description": "the file, relative to the workspace folder"},
         "start_line": {"type": "integer", "description": "first line, 1-based (default 1)"},
         "end_line": {"type": "integer", "description": "last line (default: start_line + 119)"}},
         "required": ["path"]}},
    {"name": "list_files", "description": "List workspace files whose path matches a glob.",
     "parameters": {"type": "object", "properties": {
         "glob": {"type": "string", "description": "e.g. **/*.py or src/* (default: every file)"}}}},
    {"name": "grep", "description": "Find lines matching a regular expression in workspace files.",
     "parameters": {"type": "object", "properties": {
         "pattern": {"type": "string", "description": "a Python regular expression"},
         "glob": {"type": "string", "description": "only files whose path matches this glob"}},
         "required": ["pattern"]}},
    {"name": "search_code", "description": "Search the workspace's code for what a question is about.",
     "parameters": {"type": "object", "properties": {
         "query": {"type": "string", "description": "words or names to look for"}},
         "required": ["query"]}},
]


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    text: str  # what the model is given (an error says what went wrong and what to do)


class ToolRefused(Exception):
    """The call cannot be done; the message is for the model."""


class WorkspaceReader:
    """The read tools over the workspace folders of `index` (its walk, its exclusions)."""

    def __init__(self, index: CodebaseIndex, open_text: Callable[[Path], str | None] | None = None) -> None:
        self.index = index
        # An open document's text: the editor's, which may hold changes not saved yet (the agent's own).
        self.open_text = open_text or (lambda _file: None)

    @property
    def roots(self) -> tuple[Path, ...]:
        return tuple(Path(r) for r in self.index.workspace.roots)

    def run(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        tool = {"read_file": self.read_file, "list_files": self.list_files, "grep": self.grep,
                "search_code": self.search_code}.get(name)
        if tool is None:
            return ToolResult(False, f"there is no tool {name!r}: use one of {', '.join(t['name'] for t in TOOLS)}")
        try:
            text = tool(**{k: v for k, v in arguments.items() if k in _params(name)})
        except ToolRefused as exc:
            return ToolResult(False, str(exc))
        except (TypeError, ValueError) as exc:  # an argument missing, of the wrong type, or unusable (a NUL in a path)
            return ToolResult(False, f"{name} was called wrongly ({exc}); see its parameters")
        return ToolResult(True, _capped(text))

    # -- paths --------------------------------------------------------------------------------
    def resolve(self, path: Any) -> tuple[Path, Path]:
        """(workspace folder, file) that `path` names inside the workspace, or ToolRefused."""
        if not isinstance(path, str) or not path.strip():
            raise ToolRefused("give the path of a workspace file, relative to the workspace folder")
        rel = path.strip().replace("\\", "/")
        if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel) or ".." in Path(rel).parts:
            raise ToolRefused(f"{path} is outside the workspace: only files inside it can be read")
        for root in self.roots:
            candidate = root / rel
            try:
                real = candidate.resolve()
            except (OSError, RuntimeError):
                continue
            if root.resolve() not in real.parents:
                raise ToolRefused(f"{path} leads outside the workspace: only files inside it can be read")
            if candidate.exists():
                return root, candidate
        raise ToolRefused(f"{path} is not a file of the workspace{self._near(rel)}: list_files shows what there is")

    def _near(self, rel: str) -> str:
        """', did you mean …' with the workspace's paths closest to one that does not exist (the 1.5B wrote
        `heshel/_utils.py` for `hishel/_utils.py`), or ''."""
        close = difflib.get_close_matches(rel, self._files(None), n=3, cutoff=0.8)
        return f" (did you mean {' or '.join(close)}?)" if close else ""

    def defined_in(self, name: str) -> list[tuple[str, int]]:
        """Where the workspace defines `name` (a bare or qualified name): (path as the tools take it,
        1-based line) for each definition the index holds."""
        bare = name.split(".")[-1]
        out = []
        for found, qualified, _kind, file, start, _end in self.index.find_symbols(bare, limit=200):
            if found != bare or ("." in name and qualified != name):
                continue
            root = self.root_of(file)
            if root is not None:
                out.append((self.shown(root, file), start + 1))
        return out

    def root_of(self, file: Path) -> Path | None:
        """The workspace folder `file` is spelled under (as the index and resolve() spell files: links are
        refused there, not here), or None."""
        return next((r for r in self.roots if r == file or r in file.parents), None)

    def shown(self, root: Path, file: Path) -> str:
        """`file`'s path as the tools take and show it: relative to `root`, led by the folder's name when the
        workspace has several (`file` is spelled under `root`)."""
        rel = file.relative_to(root).as_posix()
        return rel if len(self.roots) == 1 else f"{root.name}/{rel}"

    def readable(self, file: Path) -> None:
        globs = self.index.workspace.exclude_globs
        if is_excluded_path(str(file), globs) or is_excluded_path(str(file.resolve()), globs):
            raise ToolRefused(f"{file.name} is a file Kestrel never sends to a model (secrets, excludeGlobs)")

    # -- the tools ----------------------------------------------------------------------------
    def read_file(self, path: str, start_line: int = 1, end_line: int | None = None) -> str:
        root, file = self.resolve(path)
        self.readable(file)
        if not file.is_file():
            raise ToolRefused(f"{path} is a folder: list_files shows its files")
        lines = self.current_text(file, path, f"{path} is too large to read here; grep finds lines in it").split("\n")
        first = max(int(start_line or 1), 1)
        last = min(int(end_line) if end_line else first + READ_LINES - 1, first + READ_LINES - 1, len(lines))
        if first > len(lines):
            raise ToolRefused(f"{path} has {len(lines)} lines")
        body = "\n".join(f"{n}: {lines[n - 1]}" for n in range(first, last + 1))
        more = f"\n(lines {last + 1}-{len(lines)} not shown)" if last < len(lines) else ""
        return f"{file.relative_to(root).as_posix()} lines {first}-{last} of {len(lines)}:\n{body}{more}"

    def current_text(self, file: Path, name: str, too_large: str) -> str:
        """The file as the editor holds it (an open document, saved or not), else as on disk;
        ToolRefused when it is too large (`too_large` says so) or not text."""
        text = self.open_text(file)
        if text is not None:
            return text
        if file.stat().st_size > MAX_FILE_BYTES:
            raise ToolRefused(too_large)
        try:
            return file.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            raise ToolRefused(f"{name} is not a text file") from None

    def _files(self, glob: str | None) -> list[str]:
        pattern = (glob or "**/*").strip().lstrip("./") or "**/*"
        out = []
        for root, file in self.index.files():
            rel = file.relative_to(root).as_posix()
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern.replace("**/", "")):
                out.append(self.shown(root, file))
        return out

    def list_files(self, glob: str | None = None) -> str:
        files = self._files(glob)
        if not files:
            return f"no workspace file matches {glob or '**/*'}"
        more = f"\n({len(files) - MAX_LISTED} more not shown: narrow the glob)" if len(files) > MAX_LISTED else ""
        return "\n".join(files[:MAX_LISTED]) + more

    def grep(self, pattern: str, glob: str | None = None) -> str:
        try:
            # A quantified group that is quantified again can backtrack for ever in `re` (no timeout):
            # such a pattern, like a broken one (a model's unbalanced `(`), is searched as text.
            regex = re.compile(re.escape(pattern) if _NESTED_QUANTIFIER.search(pattern) else pattern)
        except re.error:
            regex = re.compile(re.escape(pattern))
        found: list[str] = []
        for root, file in self.index.files():
            rel = file.relative_to(root).as_posix()
            if glob and not (fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, glob.replace("**/", ""))):
                continue
            try:
                text = file.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for n, line in enumerate(text.split("\n"), 1):
                if len(line) < 1000 and regex.search(line):
                    found.append(f"{rel}:{n}: {line.strip()}")
                    if len(found) >= MAX_MATCHES:
                        return "\n".join(found) + "\n(more matches not shown: narrow the pattern or the glob)"
        return "\n".join(found) if found else f"no line matches {pattern!r}"

    def search_code(self, query: str) -> str:
        hits = self.index.search(str(query), limit=MAX_SEARCH_HITS)
        if not hits:
            return f"nothing found for {query!r}: try other words, or grep"
        return "\n\n".join(f"{h.path} lines {h.start + 1}-{h.end + 1}:\n{h.text}" for h in hits)


NUMBERED = re.compile(r"^\d+: ?", re.M)  # read_file's `12: ` before each line


def numbered(block: str) -> bool:
    """Every line of `block` carries read_file's number (a model copied them with the code)."""
    lines = [ln for ln in block.split("\n") if ln.strip()]
    return bool(lines) and all(NUMBERED.match(ln) for ln in lines)


def unnumbered(block: str) -> str:
    return NUMBERED.sub("", block)


def _params(name: str) -> set[str]:
    return {k for t in TOOLS if t["name"] == name for k in t["parameters"].get("properties", {})}


def _capped(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return text[:MAX_RESULT_CHARS] + f"\n(cut at {MAX_RESULT_CHARS} characters: ask for less)"
