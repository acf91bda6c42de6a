"""Repository completion tasks, CrossCodeEval's construction on real Python packages.

A package is on disk as a workspace (its import packages under one root). Every module is parsed
with `ast` (nothing is imported). A *cross-file name* of a file is a name it binds with an import
of its own package (`from .x import y`, `from pkg.x import y`, `import pkg.x as y`, at module
level, also under `if TYPE_CHECKING:` / `try:`) that resolves, following re-exports (`__init__`
files, star imports), to a class, function or assignment in another module of the package, or to
a module of it.

A task is the first use of a cross-file name in the file: the first time the name appears as a code
token (tokenize's NAME tokens; import statements, strings and comments left out), when that is a
real reference (an `ast.Name` that reads it) after its import; a first appearance as an attribute,
a keyword or a parameter means the file shows the name already, and gives no task. The cursor sits right before it; the
reference is the rest of its line (the newline and the lines below stay). The line must be at most
MAX_LINE_CHARS long, carry no comment, not run into a multi-line string, and the reference must be
REF_TOKENS (3-30) Python tokens long. One task per line (the first cursor). The document is the
whole real file; files over MAX_FILE_CHARS, tests and generated files are skipped.

The oracle context of a task (oracle.py) holds the definitions of every cross-file name in the
reference; `tabs` are their defining modules, the files an editor would have open. A name whose
definition lies outside the package (a re-exported dependency) is not cross-file; a task whose
names resolve to nothing is dropped.

Sampling: SAMPLE tasks spread evenly over the packages (a package with fewer candidates gives its
share to the others), drawn with a fixed seed, ordered by package, file and position (consecutive
tasks share a file, so llama.cpp can reuse the prompt prefix).
"""

from __future__ import annotations

import ast
import io
import random
import re
import tokenize
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

from bench.quality.lang_tasks import HiddenSpan, spread_sample

from . import oracle

SAMPLE = 48
SAMPLE_SEED = 2026
REF_TOKENS = (3, 30)
MAX_FILE_CHARS = 100_000
MAX_LINE_CHARS = 200
MAX_DEPTH = 8  # re-export hops followed
TEST_PARTS = {"test", "tests", "testing", "conftest.py"}
GENERATED = re.compile(r"code generated|do not edit|@generated|auto-?generated|automatically generated|"
                       r"this file is generated", re.I)
SKIP_TOKENS = {tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER}


@dataclass(frozen=True)
class RepoTask(HiddenSpan):
    task_id: str  # "<package>/<path>:<line>:<column>"
    package: str  # the distribution's name (the prompt's repo name)
    path: str  # relative to the workspace root, e.g. "agents/run.py"
    text: str  # the whole file
    start: int  # the cursor (string offset)
    end: int  # the end of the reference (the line's end)
    name: str  # the cross-file name at the cursor
    names: tuple[str, ...]  # every cross-file name in the reference, in order
    context: tuple[tuple[str, str], ...]  # the oracle: (defining module's path, its definitions)
    tabs: tuple[str, ...]  # the defining modules' paths (what an editor would have open)
    kind: str = "code"  # "annotation": the name at the cursor is in a type annotation; "code": elsewhere
    language: str = "python"  # the LSP language id ("typescript": ts_tasks.py, whose kinds are "type" and "code")


@dataclass(frozen=True)
class Binding:
    module: str  # the dotted module the import reads from
    attr: str | None  # the imported attribute; None: the local name is the module itself
    end: int  # string offset where the import statement ends


@dataclass
class Module:
    name: str  # dotted
    path: str  # relative to the workspace root (posix)
    text: str
    is_pkg: bool
    tree: ast.Module | None = field(default=None, repr=False)


# --- the workspace --------------------------------------------------------------------------
def skipped(rel: str, text: str) -> str | None:
    parts = rel.split("/")
    if any(p in TEST_PARTS for p in parts) or parts[-1].startswith("test_") or parts[-1].endswith("_test.py"):
        return "test"
    if len(text) > MAX_FILE_CHARS:
        return "too large"
    if "\r" in text:
        return "CR line ends"
    if GENERATED.search("\n".join(text.split("\n", 40)[:40])):
        return "generated"
    return None


def _top_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, including those under top-level if / try / with blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _top_statements(stmt.body + stmt.orelse)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _top_statements(stmt.body + stmt.orelse + stmt.finalbody
                                       + [s for h in stmt.handlers for s in h.body])
        elif isinstance(stmt, ast.With):
            yield from _top_statements(stmt.body)


def _offsets(text: str) -> list[int]:
    out, pos = [0], 0
    for line in text.split("\n"):
        pos += len(line) + 1
        out.append(pos)
    return out


def _char_col(line: str, byte_col: int) -> int:
    return byte_col if line.isascii() else len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


class Workspace:
    """The Python modules under `root` (one or more import packages), parsed on demand."""

    def __init__(self, root: Path, package: str) -> None:
        self.root = root
        self.package = package
        self.modules: dict[str, Module] = {}
        self.skipped: dict[str, int] = {}
        for p in sorted(root.rglob("*.py")):
            rel = p.relative_to(root).as_posix()
            if ".dist-info/" in rel or not all(part.isidentifier() for part in rel[:-3].split("/")):
                continue
            parts = rel[:-3].split("/")
            is_pkg = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_pkg else parts)
            self.modules[name] = Module(name, rel, p.read_text(encoding="utf-8", errors="replace"), is_pkg)

    @cached_property
    def tops(self) -> set[str]:
        return {name.split(".")[0] for name in self.modules}

    def tree(self, module: Module) -> ast.Module | None:
        if module.tree is None:
            try:
                module.tree = ast.parse(module.text)
            except (SyntaxError, ValueError):
                module.tree = ast.Module(body=[], type_ignores=[])
        return module.tree

    def _absolute(self, module: Module, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            return node.module if node.module and node.module.split(".")[0] in self.tops else None
        base = module.name.split(".") if module.is_pkg else module.name.split(".")[:-1]
        if node.level - 1 > len(base):
            return None
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else [])) or None

    def bindings(self, module: Module) -> dict[str, Binding]:
        """Local name -> what the module's own-package imports bind it to (module level)."""
        out: dict[str, Binding] = {}
        offsets = _offsets(module.text)
        for stmt in _top_statements(self.tree(module).body):
            end = offsets[(stmt.end_lineno or stmt.lineno) - 1] + (stmt.end_col_offset or 0)
            if isinstance(stmt, ast.ImportFrom):
                src = self._absolute(module, stmt)
                for alias in stmt.names if src else ():
                    if alias.name != "*":
                        out.setdefault(alias.asname or alias.name, Binding(src, alias.name, end))
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname and alias.name.split(".")[0] in self.tops:
                        out.setdefault(alias.asname, Binding(alias.name, None, end))
        return out

    def _stars(self, module: Module) -> list[str]:
        return [src for stmt in _top_statements(self.tree(module).body)
                if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names)
                and (src := self._absolute(module, stmt))]

    def resolve(self, module_name: str, attr: str | None, depth: int = 0) -> tuple[Module, Any] | None:
        """(defining module, its ast definition) for `module_name.attr`; (module, None) when it
        is a module; None when it is not defined in the package."""
        if attr is None:
            m = self.modules.get(module_name)
            return (m, None) if m else None
        m = self.modules.get(module_name)
        if m is None or depth > MAX_DEPTH:
            return None
        for stmt in _top_statements(self.tree(m).body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == attr:
                return m, stmt
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
                stmt, ast.AnnAssign) and stmt.value is not None else []
            if any(isinstance(t, ast.Name) and t.id == attr for t in targets):
                return m, stmt
        sub = f"{module_name}.{attr}"
        if sub in self.modules:
            return self.modules[sub], None
        b = self.bindings(m).get(attr)
        if b is not None:
            return self.resolve(b.module, b.attr, depth + 1)
        for src in self._stars(m):
            got = self.resolve(src, attr, depth + 1)
            if got is not None:
                return got
        return None

    def definitions(self, binding: Binding, local: str, reference: str, here: str) -> list[oracle.Definition]:
        """The definitions `local` stands for on a line whose rest is `reference` (for a module: the
        attributes the reference reads from it), outside the file `here`."""
        got = self.resolve(binding.module, binding.attr)
        if got is None:
            return []
        m, node = got
        if node is not None:
            return [] if m.path == here else [oracle.Definition(getattr(node, "name", binding.attr or local), m.path,
                                                                oracle.render(node))]
        out = []
        for attr in dict.fromkeys(re.findall(rf"(?<![\w.]){re.escape(local)}\.([A-Za-z_]\w*)", reference)):
            sub = self.resolve(m.name, attr)
            if sub is not None and sub[1] is not None and sub[0].path != here:
                out.append(oracle.Definition(attr, sub[0].path, oracle.render(sub[1])))
        return out


# --- tasks ------------------------------------------------------------------------------------
def _tokens(text: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def _name_reads(tree: ast.Module, lines: list[str]) -> set[tuple[int, int]]:
    """(line, character column) of every ast.Name that reads a name."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            out.add((node.lineno, _char_col(lines[node.lineno - 1], node.col_offset)))
    return out


def _annotation_names(tree: ast.Module, lines: list[str]) -> set[tuple[int, int]]:
    """(line, character column) of every ast.Name inside a type annotation."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            roots += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                      if x is not None and x.annotation is not None]
            roots += [node.returns] if node.returns is not None else []
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    return {(n.lineno, _char_col(lines[n.lineno - 1], n.col_offset))
            for r in roots for n in ast.walk(r) if isinstance(n, ast.Name)}


def _import_rows(tree: ast.Module) -> set[int]:
    rows: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            rows.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return rows


def first_uses(text: str, tree: ast.Module, bindings: dict[str, Binding]) -> list[tuple[str, int, int]]:
    """(name, line, column) of the first use of each bound name (see the module docstring)."""
    toks = _tokens(text)
    if toks is None:
        return []
    lines = text.split("\n")
    offsets = _offsets(text)
    reads = _name_reads(tree, lines)
    imports = _import_rows(tree)
    seen: set[str] = set()
    out = []
    for tok in toks:
        if tok.type != tokenize.NAME or tok.string not in bindings or tok.string in seen:
            continue
        row, col = tok.start
        if row in imports:
            continue
        seen.add(tok.string)  # any earlier appearance in code shows the name, even one above its import
        if (row, col) in reads and offsets[row - 1] + col >= bindings[tok.string].end:
            out.append((tok.string, row, col))
    return out


def _line_ok(toks_on_row: list[tokenize.TokenInfo], row: int, col: int) -> int | None:
    """The reference's token count when the line qualifies (no comment, nothing running past the
    line), else None."""
    n = 0
    for tok in toks_on_row:
        if tok.type == tokenize.COMMENT:
            return None
        if tok.start[1] < col or tok.type in SKIP_TOKENS:
            continue
        if tok.end[0] != row:
            return None
        n += 1
    return n


def file_tasks(ws: Workspace, module: Module) -> list[RepoTask]:
    """Every task of one file (none when it is skipped or does not parse)."""
    text = module.text
    if skipped(module.path, text) or parses(text) is None:
        return []
    tree = ws.tree(module)
    cross = {k: b for k, b in ws.bindings(module).items() if ws.resolve(b.module, b.attr) is not None}
    uses = first_uses(text, tree, cross)
    if not uses:
        return []
    toks = _tokens(text) or []
    by_row: dict[int, list[tokenize.TokenInfo]] = {}
    for tok in toks:
        by_row.setdefault(tok.start[0], []).append(tok)
    lines = text.split("\n")
    offsets = _offsets(text)
    annotations = _annotation_names(tree, lines)
    out: list[RepoTask] = []
    done_rows: set[int] = set()
    for name, row, col in sorted(uses, key=lambda u: (u[1], u[2])):
        line = lines[row - 1]
        if row in done_rows or len(line) > MAX_LINE_CHARS:
            continue
        n = _line_ok(by_row.get(row, []), row, col)
        if n is None or not REF_TOKENS[0] <= n <= REF_TOKENS[1]:
            continue
        reference = line[col:].rstrip()
        names = [t.string for t in by_row[row] if t.type == tokenize.NAME and t.start[1] >= col and t.string in cross]
        names = list(dict.fromkeys([name, *names]))
        defs = [d for nm in names for d in ws.definitions(cross[nm], nm, reference, module.path)]
        if not ws.definitions(cross[name], name, reference, module.path):
            continue  # the name at the cursor must have a definition in another file
        done_rows.add(row)
        start = offsets[row - 1] + col
        out.append(RepoTask(f"{ws.package}/{module.path}:{row}:{col + 1}", ws.package, module.path, text, start,
                            start + len(reference), name, tuple(names), oracle.context_files(defs),
                            tuple(dict.fromkeys(d.path for d in defs)),
                            "annotation" if (row, col) in annotations else "code"))
    return out


def parses(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


# --- the set --------------------------------------------------------------------------------
@dataclass
class Candidates:
    by_package: dict[str, list[RepoTask]]
    files: dict[str, int]  # package -> files read
    skipped: dict[str, dict[str, int]]  # package -> why -> files


def candidates(roots: dict[str, Path]) -> Candidates:
    """Every task of every package (`roots`: package name -> its workspace root)."""
    out = Candidates({}, {}, {})
    for package, root in roots.items():
        ws = Workspace(root, package)
        tasks: list[RepoTask] = []
        why_not: dict[str, int] = {}
        for module in ws.modules.values():
            why = skipped(module.path, module.text) or (None if parses(module.text) else "parse error")
            if why:
                why_not[why] = why_not.get(why, 0) + 1
                continue
            tasks += file_tasks(ws, module)
        out.by_package[package] = tasks
        out.files[package] = len(ws.modules) - sum(why_not.values())
        out.skipped[package] = why_not
    return out


def sample(cands: Candidates, n: int | None, seed: int = SAMPLE_SEED) -> list[RepoTask]:
    """n tasks spread evenly over the packages (see the module docstring); None: all."""
    return spread_sample(cands.by_package, list(cands.by_package), n, random.Random(f"{seed}:repository"))


def spread(tasks: list[RepoTask], n: int | None) -> list[RepoTask]:
    """n of the tasks, evenly spaced (a --limit smoke run still sees several packages)."""
    if n is None or n >= len(tasks):
        return tasks
    return [tasks[(i * len(tasks)) // n] for i in range(n)]


def counts(cands: Candidates) -> dict[str, Any]:
    return {"tasks": sum(len(v) for v in cands.by_package.values()),
            "per_package": {p: {"files": cands.files[p], "tasks": len(v), "skipped": cands.skipped[p]}
                            for p, v in cands.by_package.items()}}
