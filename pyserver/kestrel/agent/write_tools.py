"""The agent's write tools: a change the model asks for is proposed to the user, never made behind
their back. `edit_file` (one passage, matched exactly or line by line ignoring indentation) and
`write_file` (a new file or a whole file) only plan a change; the feature sends a step's changes as
one `workspace/applyEdit` whose every hunk needs confirmation (VS Code's Refactor Preview), reads back
what the user kept and tells the model. Paths resolve as the read tools' do. A client that cannot
confirm annotated edits is never offered these. Why: docs/design-notes.md#pyserverkestrelagentwrite_toolspy
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..context.code_chunks import Symbol
from .read_tools import ToolRefused, ToolResult, WorkspaceReader, numbered, unnumbered
from .symbol_edits import NotDefinedHere, find_definition, renamed_texts, replace_definition

ANNOTATION = "kestrel-agent"
MAX_WRITE_CHARS = 200_000  # a file the agent writes (a model's answer is far shorter; this stops a runaway)

WRITE_TOOLS: list[dict[str, Any]] = [
    {"name": "edit_file", "description": "Change a workspace file: old_text (copied from read_file, without "
     "the line numbers) is replaced by new_text. The user reviews the change.",
     "parameters": {"type": "object", "properties": {
         "path": {"type": "string", "description": "the file, relative to the workspace folder"},
         "old_text": {"type": "string", "description": "the lines to replace, exactly as the file has them"},
         "new_text": {"type": "string", "description": "what replaces them"}},
         "required": ["path", "old_text", "new_text"]}},
    {"name": "write_file", "description": "Create a workspace file, or replace all of a file's text. "
     "The user reviews the change.",
     "parameters": {"type": "object", "properties": {
         "path": {"type": "string", "description": "the file, relative to the workspace folder"},
         "content": {"type": "string", "description": "the file's whole new text"}},
         "required": ["path", "content"]}},
    {"name": "replace_symbol", "description": "Replace a whole function, method or class of a workspace file "
     "with its complete new code (its def or class line and all of its body). The user reviews the change.",
     "parameters": {"type": "object", "properties": {
         "path": {"type": "string", "description": "the file, relative to the workspace folder"},
         "symbol": {"type": "string", "description": "its name as the file defines it (a method as Class.method)"},
         "code": {"type": "string", "description": "its complete new code"}},
         "required": ["path", "symbol", "code"]}},
    {"name": "rename_symbol", "description": "Rename a Python function, class, method or variable everywhere: "
     "its definition, its imports and every use, in every file. The user reviews the change.",
     "parameters": {"type": "object", "properties": {
         "path": {"type": "string", "description": "the file that defines it, relative to the workspace folder"},
         "symbol": {"type": "string", "description": "its name now"},
         "new_name": {"type": "string", "description": "the name it gets"}},
         "required": ["path", "symbol", "new_name"]}},
]
WRITE_NAMES = frozenset(t["name"] for t in WRITE_TOOLS)


@dataclass(frozen=True)
class ProposedChange:
    rel: str  # as the model and the user see it
    file: Path
    before: str | None  # None: the file does not exist yet
    after: str

    @property
    def uri(self) -> str:
        return self.file.as_uri()


class WorkspaceWriter:
    """Turns a write call into a proposed change, on the text the reader sees (the editor's, which
    may hold changes not yet saved, the agent's own among them)."""

    def __init__(self, reader: WorkspaceReader) -> None:
        self.reader = reader

    def plan(self, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[ProposedChange], list[list[int] | ToolRefused]]:
        """The changes one step's write calls ask for, one per file (a later call on a file builds on
        the earlier ones), and for each call the indexes of its files' changes or why it was refused."""
        changes: list[ProposedChange] = []
        at: dict[Path, int] = {}
        out: list[list[int] | ToolRefused] = []
        for name, arguments in calls:
            try:
                made = self.propose(name, arguments, {c.file: c.after for c in changes})
            except ToolRefused as exc:
                out.append(exc)
                continue
            for change in made:
                if change.file in at:
                    k = at[change.file]
                    changes[k] = ProposedChange(change.rel, change.file, changes[k].before, change.after)
                else:
                    at[change.file] = len(changes)
                    changes.append(change)
            out.append([at[change.file] for change in made])
        return changes, out

    def propose(self, name: str, arguments: dict[str, Any], pending: dict[Path, str] | None = None) -> list[ProposedChange]:
        """The changes one call asks for, a file each (on top of `pending`: texts earlier calls of the
        step proposed), or ToolRefused (the message is for the model)."""
        pending = pending or {}
        path = arguments.get("path")
        if name == "write_file":
            content = arguments.get("content")
            if not isinstance(content, str):
                raise ToolRefused("write_file needs `content`: the file's whole new text")
            if numbered(content):  # copied with read_file's line numbers (the 1.5B does): they are not the text
                content = unnumbered(content)
            rel, file = self._target(path)
            before = pending[file] if file in pending else self._current(file) if file.exists() else None
            return [self._change(rel, file, before, content)]
        if name == "edit_file":
            old, new = arguments.get("old_text"), arguments.get("new_text")
            if not isinstance(old, str) or not old.strip() or not isinstance(new, str):
                raise ToolRefused("edit_file needs `old_text` (the lines to replace, as the file has them) and `new_text`")
            rel, file, before = self._existing(path, pending)
            if unnumbered(old).strip() == unnumbered(new).strip():
                raise ToolRefused(f"new_text is old_text again, so nothing in {rel} changes: new_text is the lines "
                                  "as they should be after your change")
            return [self._change(rel, file, before, replace_once(before, old, new, rel))]
        if name == "replace_symbol":
            rel, file, before = self._existing(path, pending)
            try:
                after = replace_definition(before, file.suffix, arguments.get("symbol"), arguments.get("code"), rel)
            except NotDefinedHere as exc:
                raise ToolRefused(f"{exc}{self._defined_elsewhere(exc.name, rel)}") from None
            return [self._change(rel, file, before, after)]
        if name == "rename_symbol":
            rel, file, before, symbol = self._defining(path, arguments.get("symbol"), pending)
            root = self.reader.root_of(file)
            if root is None:  # not expected: _existing spells every file under a workspace folder
                raise ToolRefused(f"{rel} leads outside the workspace: only files inside it are renamed")
            texts = renamed_texts(root, file, before, symbol, arguments.get("new_name"), rel)
            return [self._renamed(root, changed, text, file, before, pending) for changed, text in sorted(texts.items())]
        raise ToolRefused(f"there is no tool {name!r}")

    def _defining(self, path: Any, symbol: Any, pending: dict[Path, str]) -> tuple[str, Path, str, Symbol]:
        """The file a rename starts from: `path` when it defines `symbol`, else the one file of the
        workspace that does (a rename is of a name, so a model that named a file that only imports it,
        or misspelled the path, still means that one), else refused with where it is defined."""
        try:
            rel, file, before = self._existing(path, pending)
            return rel, file, before, find_definition(before, file.suffix, symbol, rel)
        except ToolRefused as exc:
            if not isinstance(symbol, str) or not symbol.strip():
                raise
            where = self.reader.defined_in(symbol.strip())
            if len({p for p, _line in where}) != 1:
                raise ToolRefused(f"{exc}{self._defined_elsewhere(symbol.strip(), str(path))}") from None
            rel, file, before = self._existing(where[0][0], pending)
            return rel, file, before, find_definition(before, file.suffix, symbol, rel)

    def _defined_elsewhere(self, name: str, rel: str) -> str:
        """'; it is defined in …' with the workspace's definitions of `name` outside `rel`, or ''."""
        where = [f"{p}:{line}" for p, line in self.reader.defined_in(name) if p != rel][:5]
        return f"; {name} is defined in {', '.join(where)}: call again with that path" if where else ""

    def _existing(self, path: Any, pending: dict[Path, str]) -> tuple[str, Path, str]:
        """(its name, the file, its text) of a file that exists or an earlier call of the step creates."""
        rel, file = self._target(path)
        if file not in pending and not file.exists():
            raise ToolRefused(f"{path} is not a file of the workspace: list_files shows what there is")
        return rel, file, pending[file] if file in pending else self._current(file)

    def _renamed(self, root: Path, changed: Path, text: str, defining: Path, before: str,
                 pending: dict[Path, str]) -> ProposedChange:
        """One file of a rename (`changed`, resolved, inside `root`) as a change. jedi read the other files
        from disk: one the editor holds with other text (unsaved edits, or this step's) is refused rather
        than overwritten."""
        file = root / changed.relative_to(root.resolve())
        self.reader.readable(file)
        rel = self.reader.shown(root, file)
        if file.resolve() == defining.resolve():
            return self._change(rel, file, before, text)
        now = pending.get(file, self._current(file))
        try:
            disk = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            disk = None
        if now != disk:
            raise ToolRefused(f"{rel} has changes that are not saved yet, so it was not renamed; the user can save "
                              "it, then call rename_symbol again")
        return self._change(rel, file, now, text)

    def _change(self, rel: str, file: Path, before: str | None, after: str) -> ProposedChange:
        if len(after) > MAX_WRITE_CHARS:
            raise ToolRefused(f"that text is too long to write ({len(after)} characters; at most {MAX_WRITE_CHARS})")
        if before is not None and after == before:
            raise ToolRefused(f"that changes nothing in {rel}")
        return ProposedChange(rel, file, before, after)

    def _target(self, path: Any) -> tuple[str, Path]:
        """(the name the model and the user see, the file): an existing workspace file, or a new one."""
        try:
            root, file = self.reader.resolve(path)
        except ToolRefused:
            root, file = self._new_file(path)
        self.reader.readable(file)
        if file.exists() and not file.is_file():
            raise ToolRefused(f"{path} is a folder: name a file")
        return self.reader.shown(root, file), file

    def _new_file(self, path: Any) -> tuple[Path, Path]:
        """A file that does not exist yet, in the first workspace folder; refused when its path (or a
        folder on the way, through a link) leads out."""
        if not isinstance(path, str) or not path.strip() or not self.reader.roots:
            raise ToolRefused("give the path of the file, relative to the workspace folder")
        rel = path.strip().replace("\\", "/")
        while rel.startswith("./"):
            rel = rel[2:]
        root = self.reader.roots[0]
        if rel.startswith("/") or ":" in rel.split("/", 1)[0] or ".." in Path(rel).parts:
            raise ToolRefused(f"{path} is outside the workspace: the agent writes only inside it")
        file = root / rel
        if os.path.lexists(file):  # it exists, yet resolve() refused it: a link that leads out
            raise ToolRefused(f"{path} leads outside the workspace: the agent writes only inside it")
        real_root = root.resolve()
        parent = file.parent
        while not parent.exists():  # the nearest folder that exists must be inside the workspace
            parent = parent.parent
        if parent.resolve() != real_root and real_root not in parent.resolve().parents:
            raise ToolRefused(f"{path} leads outside the workspace: the agent writes only inside it")
        return root, file

    def _current(self, file: Path) -> str:
        return self.reader.current_text(file, file.name, f"{file.name} is too large to change here")


def replace_once(text: str, old: str, new: str, rel: str) -> str:
    """`text` with `old` replaced by `new`: an exact match that occurs once, else the lines of `old`
    matched ignoring their indentation and trailing blanks (a model often re-indents what it copies),
    `new` then re-indented by the difference. Refused when not found, or found more than once. Lines
    copied with read_file's numbers (`12: code`) are read without them."""
    if old not in text and numbered(old):
        old, new = unnumbered(old), unnumbered(new) if numbered(new) else new
    count = text.count(old)
    if count == 1:
        return text.replace(old, new, 1)
    if count > 1:
        raise ToolRefused(f"old_text occurs {count} times in {rel}: include lines around it so it names one place")
    lines = text.split("\n")
    want = [s.strip() for s in old.strip("\n").split("\n")]
    while want and not want[-1]:
        want.pop()
    found = [i for i in range(len(lines) - len(want) + 1)
             if all(lines[i + k].strip() == w for k, w in enumerate(want))]
    if not found:
        raise ToolRefused(f"old_text is not in {rel}: read_file shows its lines as they are now; copy them exactly")
    if len(found) > 1:
        raise ToolRefused(f"old_text occurs {len(found)} times in {rel}: include lines around it so it names one place")
    i = found[0]
    first_old = next(s for s in old.strip("\n").split("\n") if s.strip())
    have = _indent(lines[i])
    gave = _indent(first_old)
    new_lines = new.strip("\n").split("\n") if new.strip() else []
    shifted = [_reindent(s, gave, have) for s in new_lines]
    return "\n".join(lines[:i] + shifted + lines[i + len(want):])


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _reindent(line: str, gave: str, have: str) -> str:
    if not line.strip():
        return ""
    return have + line[len(gave):] if line.startswith(gave) else have + line.lstrip()


# -- the proposal as LSP sees it ---------------------------------------------------------------
def workspace_edit(changes: list[ProposedChange], label: str) -> types.WorkspaceEdit:
    """One edit per changed hunk (the preview gives each file and each hunk its checkbox), each
    annotated as needing the user's confirmation; a new file is created first (annotated too)."""
    annotation = types.ChangeAnnotation(label=label, needs_confirmation=True,
                                        description="proposed by Kestrel's agent: review before keeping")
    out: list[Any] = []
    for change in changes:
        if change.before is None:
            out.append(types.CreateFile(uri=change.uri, annotation_id=ANNOTATION,
                                        options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)))
        edits: list[types.TextEdit | types.AnnotatedTextEdit] = [
            types.AnnotatedTextEdit(range=r, new_text=t, annotation_id=ANNOTATION) for r, t in hunks(change.before or "", change.after)]
        out.append(types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=change.uri, version=None), edits=edits))
    return types.WorkspaceEdit(document_changes=out, change_annotations={ANNOTATION: annotation})


def hunks(before: str, after: str) -> list[tuple[types.Range, str]]:
    """The line ranges of `before` that change, with their new text (whole lines, no context)."""
    old, new = _lines(before), _lines(after)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        start = _position(old, i1)
        end = _position(old, i2)
        out.append((types.Range(start=start, end=end), "".join(new[j1:j2])))
    return out


def _lines(text: str) -> list[str]:
    """Lines as LSP counts them (at "\n"; `str.splitlines` also breaks at form feeds and the like),
    each with its line break."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _position(lines: list[str], index: int) -> types.Position:
    """The start of line `index` (past the end: the end of the text, its column in UTF-16 code units,
    LSP's default and what VS Code negotiates)."""
    if index < len(lines):
        return types.Position(line=index, character=0)
    if not lines:
        return types.Position(line=0, character=0)
    last = lines[-1]
    if last.endswith("\n"):
        return types.Position(line=len(lines), character=0)
    return types.Position(line=len(lines) - 1, character=len(last.encode("utf-16-le")) // 2)


def outcome(change: ProposedChange, applied: bool, now: str | None) -> ToolResult:
    """What the model is told after the user's review. `now` is the file's text after it (None: it
    cannot be read; then the client's `applied` is taken for the whole change)."""
    verb = "created" if change.before is None else "changed"
    if not applied or (now is not None and now == (change.before or "") and now != change.after):
        return ToolResult(False, f"The user rejected this change to {change.rel}: it was not made. "
                                 "Do not make it again unless the user asks for it.")
    if now is None or now == change.after:
        return ToolResult(True, f"The user accepted the change: {change.rel} {verb} "
                                f"({_lines_changed(change.before or '', change.after)}).")
    return ToolResult(True, f"The user kept only part of this change to {change.rel}: the parts left out were "
                            "rejected; do not make them again unless asked. read_file shows the file as it is now.")


def together(results: list[ToolResult]) -> ToolResult:
    """One call's outcome from its files' (a rename changes several): ok when every file's change was kept."""
    if len(results) == 1:
        return results[0]
    each = "\n".join(r.text for r in results)
    if all(r.ok for r in results):
        return ToolResult(True, f"The user accepted the change in all {len(results)} files:\n{each}")
    if any(r.ok for r in results):  # (the client's line for it: "kept in part")
        return ToolResult(False, f"The user kept only part of this change; the rest was not made:\n{each}")
    return ToolResult(False, each)


def _lines_changed(before: str, after: str) -> str:
    added = removed = 0
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        added += line.startswith("+ ")
        removed += line.startswith("- ")
    return f"+{added} -{removed} lines"


def client_can_review(capabilities: types.ClientCapabilities | None) -> bool:
    """The client applies workspace edits and honours change annotations (so it asks before keeping
    them), with versioned document changes and file creation."""
    ws = capabilities.workspace if capabilities else None
    edit = ws.workspace_edit if ws else None
    if not (ws and ws.apply_edit and edit and edit.document_changes and edit.change_annotation_support):
        return False
    return types.ResourceOperationKind.Create in (edit.resource_operations or [])
