"""Repository completion tasks in TypeScript: tasks.py's construction (CrossCodeEval's) on the
TypeScript packages the languages eval already pins (bench/quality/languages.toml, npm tarballs
fetched and sha256-checked by bench/quality/lang_sources.py; the package's `src/` is the workspace).

Every `.ts` file of the package is parsed with tree-sitter (the grammar wheel Kestrel's guard uses;
nothing here uses Kestrel's own TypeScript resolver). A *cross-file name* of a file is a name it
binds with an import from a relative module specifier: `import { a, b as c } from "./x"`, `import
type {...}`, a default import `import D from "../y/index.js"`, or a namespace import `import * as ns
from "./z"`. Specifiers resolve as TypeScript's bundler/node16 resolution does for a package's own
files: `./x.js` names `./x.ts`, `./x` names `./x.ts` or `./x/index.ts`. The name must resolve,
following `export { x } from "./y"`, `export { x as y }`, `export { local }` of an imported name,
`export * from` and `export * as ns from` (up to MAX_DEPTH hops), to a top-level declaration
(function and its overloads, class, interface, type alias, enum, const / let / var, `export
default`) in another file of the package, or to another module (a namespace).

A task is the first use of a cross-file name in the file: the first identifier in the file's code
with that text (import statements and `export ... from` left out; strings and comments are not
identifiers; an identifier inside a template's `${...}` is code), when that is a reference (an
expression identifier, a type name, a shorthand property `{ a }`; type positions count) after the
import statement. A first appearance as a property name (`obj.name`, `{ name: 1 }`), a declared
name (a parameter, a destructured or shadowing variable) or in a local `export { name }` shows the
name already and gives no task. The cursor sits right before it; the reference is the rest of its
line (the newline and the lines below stay).

Line rules kept from tasks.py: the line is at most MAX_LINE_CHARS long, carries no comment, no
token on it runs past the line (a multi-line string, template or comment), and the reference is
REF_TOKENS (3-30) tokens long (tree-sitter's leaves, a string, template or regex counting as one,
as Python's tokenizer counts a string); one task per line. Files as the languages eval takes them
(bench.quality.lang_tasks: no `.d.ts`, no tests, no vendored or generated files, no data tables or
re-export barrels, at most 100,000 characters as in tasks.py, no CR line ends, no parse error); the document is the
whole real file.

The oracle context (ts_oracle.py) holds the definitions of every cross-file name in the reference
(for a namespace, of the `ns.attr` it reads); `tabs` are their defining files. A task whose name at
the cursor has no definition in another file is dropped. *kind* is "type" when the name at the
cursor is a type name, else "code". A task whose whole line (stripped) is the same as an earlier
task's line in the package is dropped: zod's 40-odd `locales/*.ts` files repeat the same lines
(unlike the Python set's packages). Sampling is tasks.py's (tasks.sample, tasks.spread).
"""

from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from bench.quality.lang_tasks import _char_offsets, parser, skipped_path, skipped_text

from . import oracle, ts_oracle
from .tasks import MAX_LINE_CHARS, REF_TOKENS, Candidates, RepoTask

MAX_DEPTH = 8  # re-export hops followed
LANGUAGE = "typescript"
ATOMS = {"string", "template_string", "regex", "comment"}  # one token each
IDENTS = {"identifier", "type_identifier", "property_identifier", "shorthand_property_identifier",
          "shorthand_property_identifier_pattern"}
READS = {"identifier", "type_identifier", "shorthand_property_identifier"}
DECLARING = {  # parent type -> the fields whose identifier it declares
    "variable_declarator": ("name",), "function_declaration": ("name",), "generator_function_declaration": ("name",),
    "function_expression": ("name",), "generator_function": ("name",), "function_signature": ("name",),
    "class_declaration": ("name",), "abstract_class_declaration": ("name",), "class": ("name",),
    "interface_declaration": ("name",), "type_alias_declaration": ("name",), "enum_declaration": ("name",),
    "internal_module": ("name",), "module": ("name",), "required_parameter": ("pattern", "name"),
    "optional_parameter": ("pattern", "name"), "arrow_function": ("parameter",), "catch_clause": ("parameter",),
    "for_in_statement": ("left",), "type_parameter": ("name",), "rest_pattern": (None,),
    "assignment_pattern": ("left",), "object_assignment_pattern": ("left",), "pair_pattern": ("value",),
    "import_alias": ("name",), "enum_assignment": ("name",),
}
NOT_READ_PARENTS = {"export_specifier", "import_specifier", "namespace_import", "import_clause", "namespace_export",
                    "labeled_statement", "break_statement", "continue_statement"}
PATTERNS = {"object_pattern", "array_pattern"}
STOP = {"program", "statement_block", "class_body", "expression_statement", "lexical_declaration", "return_statement"}
TYPE_PARENTS = {"nested_type_identifier", "type_query"}


@dataclass(frozen=True)
class Import:
    local: str  # the name bound in the importing file
    module: str  # the imported file's path (relative to the workspace root)
    attr: str | None  # the exported name read ("default" for a default import); None: a namespace import
    end: int  # string offset where the import statement ends


@dataclass(frozen=True)
class Decl:
    path: str  # the defining file
    name: str  # the name as the defining file declares it
    text: str  # rendered by ts_oracle


@dataclass(frozen=True)
class ModuleRef:
    path: str  # a module bound as a namespace


@dataclass
class Exports:
    decls: dict[str, list[tuple[Any, Any]]]  # top-level name -> [(statement, declaration node)], exported or not
    exported: set[str]  # names exported with their declaration (`export function f`)
    named: dict[str, tuple[str, ...]]  # exported name -> ("local", name) | ("from", spec, name) | ("ns", spec)
    stars: list[str]  # `export * from spec`
    default: tuple[Any, Any] | str | None  # (statement, node) | a local name | None


class TsFile:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self._tree: Any = None
        self._conv: list[int] | None | bool = False
        self._src: ts_oracle.Source | None = None
        self._exports: Exports | None = None
        self._imports: dict[str, Import] | None = None

    @property
    def root(self) -> Any:
        if self._tree is None:
            self._tree = parser(LANGUAGE).parse(self.data)
        return self._tree.root_node

    def ch(self, b: int) -> int:
        if self._conv is False:
            self._conv = _char_offsets(self.text)
        return b if self._conv is None else self._conv[b]  # type: ignore[index]

    def node_text(self, node: Any) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    @property
    def src(self) -> ts_oracle.Source:
        if self._src is None:
            comments = []
            stack = [self.root]
            while stack:
                n = stack.pop()
                if n.type == "comment":
                    comments.append((n.start_byte, n.end_byte))
                else:
                    stack.extend(n.children)
            self._src = ts_oracle.Source(self.data, sorted(comments))
        return self._src


def _spec(file: TsFile, stmt: Any) -> str | None:
    source = stmt.child_by_field_name("source")
    if source is None:
        return None
    return file.node_text(source)[1:-1]


def _declared_names(decl: Any, file: TsFile) -> list[str]:
    if decl.type in ts_oracle.VARIABLES:
        return [file.node_text(d.child_by_field_name("name")) for d in decl.named_children
                if d.type == "variable_declarator" and d.child_by_field_name("name") is not None
                and d.child_by_field_name("name").type == "identifier"]
    name = decl.child_by_field_name("name")
    return [file.node_text(name)] if name is not None and decl.type in ts_oracle.DECLARATIONS else []


def _unwrap(decl: Any) -> Any:
    """`declare function f(...)` -> the function_signature inside."""
    while decl is not None and decl.type == "ambient_declaration":
        decl = next((c for c in decl.named_children if c.type in ts_oracle.DECLARATIONS), None)
    return decl


class TsWorkspace:
    """The `.ts` files under `root` (declaration files left out), parsed on demand."""

    def __init__(self, root: Path, package: str) -> None:
        self.root = root
        self.package = package
        self.files: dict[str, TsFile] = {}
        for p in sorted(root.rglob("*.ts")):
            rel = p.relative_to(root).as_posix()
            if "node_modules/" in rel:
                continue  # declaration files stay (counted as skipped) but never resolve: module_path leaves them out
            self.files[rel] = TsFile(rel, p.read_text(encoding="utf-8", errors="replace"))

    # --- modules ------------------------------------------------------------------------------
    def module_path(self, importer: str, spec: str) -> str | None:
        """The workspace file a relative specifier names, or None (a package import, or not found)."""
        if not (spec.startswith("./") or spec.startswith("../") or spec in (".", "..")):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        if base.startswith("../") or base == "..":
            return None
        cands = []
        if base.endswith((".ts", ".mts", ".cts")) and not base.endswith(".d.ts"):
            cands.append(base)
        for js, ts in ((".js", ".ts"), (".mjs", ".mts"), (".cjs", ".cts")):
            if base.endswith(js):
                cands += [base[: -len(js)] + ts, base[: -len(js)] + "/index.ts"]
        cands += [base + ".ts", base + "/index.ts"] if base != "." else ["index.ts"]
        return next((c for c in cands if c in self.files), None)

    def imports(self, file: TsFile) -> dict[str, Import]:
        """Local name -> what the file's relative imports bind it to."""
        if file._imports is not None:
            return file._imports
        out: dict[str, Import] = {}
        for stmt in file.root.named_children:
            if stmt.type != "import_statement":
                continue
            spec = _spec(file, stmt)
            target = self.module_path(file.path, spec) if spec else None
            clause = next((c for c in stmt.named_children if c.type == "import_clause"), None)
            if target is None or clause is None:
                continue
            end = file.ch(stmt.end_byte)
            for c in clause.named_children:
                if c.type == "identifier":
                    out.setdefault(file.node_text(c), Import(file.node_text(c), target, "default", end))
                elif c.type == "namespace_import":
                    ident = next((x for x in c.named_children if x.type == "identifier"), None)
                    if ident is not None:
                        out.setdefault(file.node_text(ident), Import(file.node_text(ident), target, None, end))
                elif c.type == "named_imports":
                    for s in c.named_children:
                        if s.type != "import_specifier":
                            continue
                        name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
                        if name is None or name.type != "identifier":
                            continue
                        local = file.node_text(alias or name)
                        out.setdefault(local, Import(local, target, file.node_text(name), end))
        file._imports = out
        return out

    def exports(self, file: TsFile) -> Exports:
        if file._exports is not None:
            return file._exports
        ex = Exports({}, set(), {}, [], None)
        for stmt in file.root.named_children:
            if stmt.type == "export_statement":
                spec = _spec(file, stmt)
                decl = _unwrap(stmt.child_by_field_name("declaration"))
                is_default = any(c.type == "default" for c in stmt.children)
                if decl is not None:
                    names = _declared_names(decl, file)
                    for n in names:
                        ex.decls.setdefault(n, []).append((stmt, decl))
                        if not is_default:
                            ex.exported.add(n)
                    if is_default:
                        ex.default = (stmt, decl)
                    continue
                if is_default:
                    value = stmt.child_by_field_name("value")
                    if value is not None and value.type == "identifier":
                        ex.default = file.node_text(value)
                    elif value is not None:
                        ex.default = (stmt, value)
                    continue
                clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
                ns = next((c for c in stmt.named_children if c.type == "namespace_export"), None)
                if clause is not None:
                    for s in clause.named_children:
                        if s.type != "export_specifier":
                            continue
                        name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
                        if name is None:
                            continue
                        key = file.node_text(alias or name)
                        ex.named.setdefault(key, ("from", spec, file.node_text(name)) if spec
                                            else ("local", file.node_text(name)))
                elif ns is not None and spec:
                    ident = next((x for x in ns.named_children if x.type in ("identifier", "string")), None)
                    if ident is not None:
                        ex.named.setdefault(file.node_text(ident).strip("'\""), ("ns", spec))
                elif spec and any(c.type == "*" for c in stmt.children):
                    ex.stars.append(spec)
            else:
                decl = _unwrap(stmt)
                if decl is not None and decl.type in ts_oracle.DECLARATIONS:
                    for n in _declared_names(decl, file):
                        ex.decls.setdefault(n, []).append((stmt, decl))
        file._exports = ex
        return ex

    def _decl(self, file: TsFile, name: str) -> Decl:
        src = file.src
        return Decl(file.path, name, "\n\n".join(ts_oracle.render(src, stmt, d) for stmt, d in self.exports(file).decls[name]))

    def _local(self, file: TsFile, name: str, depth: int) -> Decl | ModuleRef | None:
        """What a name of the file's own scope (top level) stands for."""
        if name in self.exports(file).decls:
            return self._decl(file, name)
        imp = self.imports(file).get(name)
        if imp is None:
            return None
        return ModuleRef(imp.module) if imp.attr is None else self.resolve(imp.module, imp.attr, depth + 1)

    def resolve(self, path: str, name: str, depth: int = 0) -> Decl | ModuleRef | None:
        """The declaration (or module) the export `name` of the file at `path` stands for; None when
        it is not defined in the package."""
        file = self.files.get(path)
        if file is None or depth > MAX_DEPTH:
            return None
        ex = self.exports(file)
        if name == "default":
            if isinstance(ex.default, str):
                return self._local(file, ex.default, depth)
            if ex.default is not None:
                stmt, node = ex.default
                names = _declared_names(node, file)
                text = ts_oracle.render(file.src, stmt, node)
                return Decl(file.path, names[0] if names else "default", text)
        if name in ex.exported:
            return self._decl(file, name)
        how = ex.named.get(name)
        if how is not None:
            if how[0] == "local":
                return self._local(file, how[1], depth)
            target = self.module_path(path, how[1])
            if target is None:
                return None
            return ModuleRef(target) if how[0] == "ns" else self.resolve(target, how[2], depth + 1)
        if name != "default":
            for spec in ex.stars:
                target = self.module_path(path, spec)
                got = self.resolve(target, name, depth + 1) if target else None
                if got is not None:
                    return got
        return None

    def target(self, imp: Import) -> Decl | ModuleRef | None:
        return ModuleRef(imp.module) if imp.attr is None else self.resolve(imp.module, imp.attr)

    def definitions(self, imp: Import, reference: str, here: str) -> list[oracle.Definition]:
        """The definitions `imp.local` stands for on a line whose rest is `reference` (for a namespace:
        the attributes the reference reads from it), outside the file `here`."""
        got = self.target(imp)
        if got is None:
            return []
        if isinstance(got, Decl):
            return [] if got.path == here else [oracle.Definition(got.name, got.path, got.text)]
        out = []
        for attr in dict.fromkeys(re.findall(rf"(?<![\w$.]){re.escape(imp.local)}\s*\.\s*([A-Za-z_$][\w$]*)", reference)):
            sub = self.resolve(got.path, attr)
            if isinstance(sub, Decl) and sub.path != here:
                out.append(oracle.Definition(sub.name, sub.path, sub.text))
        return out


# --- tasks ------------------------------------------------------------------------------------
def _walk(root: Any) -> Iterator[Any]:
    """Every node in document order."""
    cursor = root.walk()
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def is_reference(node: Any) -> bool:
    """An identifier that reads a name (see the module docstring)."""
    if node.type not in READS:
        return False
    parent = node.parent
    if parent is None or parent.type in NOT_READ_PARENTS:
        return False
    for field in DECLARING.get(parent.type, ()):
        if field is None or parent.child_by_field_name(field) == node:
            return False
    p = parent
    while p is not None and p.type not in STOP:
        if p.type in PATTERNS:
            return False
        p = p.parent
    return True


def kind_of(node: Any) -> str:
    return "type" if node.type == "type_identifier" or (node.parent is not None and node.parent.type in TYPE_PARENTS) \
        else "code"


@dataclass
class Scan:
    tokens: list[tuple[int, int]]  # (start, end) string offsets of the leaves (strings, templates, regexes, comments whole)
    comment_set: set[tuple[int, int]]
    idents: list[Any]  # identifier-like nodes outside imports and `export ... from`, in document order


def scan(file: TsFile) -> Scan:
    out = Scan([], set(), [])
    cursor = file.root.walk()
    while True:
        node = cursor.node
        t = node.type
        descend = True
        if t in ATOMS:
            out.tokens.append((file.ch(node.start_byte), file.ch(node.end_byte)))
            if t == "comment":
                out.comment_set.add(out.tokens[-1])
            if t == "template_string":  # its ${...} are code: identifiers, not tokens
                for n in _walk(node):
                    if n.type in IDENTS:
                        out.idents.append(n)
            descend = False
        elif t == "import_statement" or (t == "export_statement" and node.child_by_field_name("source") is not None):
            descend = False
        elif node.child_count == 0:
            if node.end_byte > node.start_byte:
                out.tokens.append((file.ch(node.start_byte), file.ch(node.end_byte)))
            if t in IDENTS:
                out.idents.append(node)
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out


def first_uses(file: TsFile, sc: Scan, bindings: dict[str, Import]) -> list[tuple[str, Any]]:
    """(name, node) of the first use of each bound name (see the module docstring)."""
    seen: set[str] = set()
    out = []
    for node in sc.idents:
        name = file.node_text(node)
        if name not in bindings or name in seen:
            continue
        seen.add(name)
        if is_reference(node) and file.ch(node.start_byte) >= bindings[name].end:
            out.append((name, node))
    return out


def skipped(rel: str, text: str) -> str | None:
    if rel.endswith(".d.ts"):
        return "declaration file"
    return skipped_path(rel) or skipped_text(text)


def file_tasks(ws: TsWorkspace, file: TsFile) -> list[RepoTask]:
    """Every task of one file (none when it is skipped or does not parse)."""
    text = file.text
    if skipped(file.path, text) or file.root.has_error:
        return []
    cross = {k: imp for k, imp in ws.imports(file).items() if ws.target(imp) is not None}
    if not cross:
        return []
    sc = scan(file)
    uses = first_uses(file, sc, cross)
    if not uses:
        return []
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    tok_starts = [a for a, _ in sc.tokens]
    ident_starts = [file.ch(x.start_byte) for x in sc.idents]
    out: list[RepoTask] = []
    done_rows: set[int] = set()
    for name, node in uses:
        start = file.ch(node.start_byte)
        row = bisect.bisect_right(line_starts, start) - 1
        line_start = line_starts[row]
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end < 0 else line_end
        line = text[line_start:line_end]
        if row in done_rows or len(line) > MAX_LINE_CHARS:
            continue
        i, j = bisect.bisect_left(tok_starts, line_start), bisect.bisect_left(tok_starts, line_end)
        on_line = sc.tokens[max(i - 1, 0):j]
        on_line = [(a, b) for a, b in on_line if b > line_start or a >= line_start]
        if any(a < line_start or b > line_end for a, b in on_line):
            continue  # a token running past the line (a multi-line string, template or comment)
        if any((a, b) in sc.comment_set for a, b in on_line):
            continue  # a comment on the line
        n = sum(1 for a, _ in on_line if a >= start)
        if not REF_TOKENS[0] <= n <= REF_TOKENS[1]:
            continue
        reference = text[start:line_end].rstrip()
        here = sc.idents[bisect.bisect_left(ident_starts, start):bisect.bisect_left(ident_starts, line_end)]
        names = [file.node_text(x) for x in here if file.node_text(x) in cross and is_reference(x)]
        names = list(dict.fromkeys([name, *names]))
        if not ws.definitions(cross[name], reference, file.path):
            continue  # the name at the cursor must have a definition in another file
        defs = [d for nm in names for d in ws.definitions(cross[nm], reference, file.path)]
        done_rows.add(row)
        out.append(RepoTask(f"{ws.package}/{file.path}:{row + 1}:{start - line_start + 1}", ws.package, file.path,
                            text, start, start + len(reference), name, tuple(names), oracle.context_files(defs),
                            tuple(dict.fromkeys(d.path for d in defs)), kind_of(node), LANGUAGE))
    return out


def _line_of(t: RepoTask) -> str:
    return t.text[t.text.rfind("\n", 0, t.start) + 1:t.end].strip()


def unique_lines(tasks: list[RepoTask]) -> list[RepoTask]:
    """The tasks whose line is not an earlier task's line (see the module docstring)."""
    seen: set[str] = set()
    out = []
    for t in tasks:
        line = _line_of(t)
        if line not in seen:
            seen.add(line)
            out.append(t)
    return out


def candidates(roots: dict[str, Path]) -> Candidates:
    """Every task of every package (`roots`: package name -> its workspace root, the unpacked src/)."""
    out = Candidates({}, {}, {})
    for package, root in roots.items():
        ws = TsWorkspace(root, package)
        tasks: list[RepoTask] = []
        why_not: dict[str, int] = {}
        for file in ws.files.values():
            why = skipped(file.path, file.text) or ("parse error" if file.root.has_error else None)
            if why:
                why_not[why] = why_not.get(why, 0) + 1
                continue
            tasks += file_tasks(ws, file)
        out.by_package[package] = unique_lines(tasks)
        out.files[package] = len(ws.files) - sum(why_not.values())
        out.skipped[package] = why_not
    return out
