"""A source file cut into syntax-bounded chunks (a definition each, where the language can be
parsed) and the definitions it holds: what the codebase index searches and what a chat prompt
quotes. Python through `ast`; the brace languages through their tree-sitter grammars (the same
wheels as the completion guards); anything else, or a file that does not parse, in windows of lines.
Why: docs/design-notes.md#pyserverkestrelcontextcode_chunkspy
"""

from __future__ import annotations

import ast
import importlib
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

WINDOW_LINES = 40  # a chunk of code outside definitions (and of a file nothing parses)
SPLIT_LINES = 80  # a longer class (impl, interface) is split into its members
MAX_CHUNK_CHARS = 6000  # the indexed text of one chunk (a prompt quotes less, within its budget)

# file suffix -> the VS Code languageId whose grammar (completion/guards/treesitter.py's GRAMMARS) parses it
_LANGUAGES: dict[str, str] = {
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
    ".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript",
    ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".cs": "csharp",
}
# Node types that hold one named definition (a chunk and a symbol), across those grammars.
_DEFINITIONS = frozenset({
    "function_declaration", "function_definition", "method_declaration", "method_definition",
    "class_declaration", "class_definition", "interface_declaration", "enum_declaration",
    "type_alias_declaration", "abstract_class_declaration", "struct_specifier", "type_spec",
    "function_item", "struct_item", "enum_item", "trait_item", "impl_item", "mod_item", "const_item",
    "static_item", "type_item", "macro_definition", "record_declaration", "constructor_declaration",
    "namespace_declaration", "struct_declaration", "generator_function_declaration", "variable_declarator",
})
# Wrappers whose child is the definition (`export function f`, Go's `type (...)`, a `const f = () =>`).
_WRAPPERS = frozenset({"export_statement", "type_declaration", "lexical_declaration", "variable_declaration",
                       "declaration_list", "class_body", "namespace_body", "template_declaration"})


_COMMENT_STARTS = ("//", "/*", "*", "#", "--", "///")


@dataclass(frozen=True)
class Chunk:
    start: int  # first line, 0-based
    end: int  # last line, inclusive
    name: str  # the definition it holds ("Class.method"), or "" for other code
    text: str


@dataclass(frozen=True)
class Symbol:
    name: str  # as written ("parse_due"); methods also under "Class.method" in `qualified`
    qualified: str
    kind: str  # "function", "class", "method", "variable", or the grammar's node type
    start: int
    end: int
    summary: str = ""  # its first line and its documentation's first sentences (what it is for)


SUMMARY_CHARS = 300


def chunk_file(text: str, suffix: str) -> tuple[list[Chunk], list[Symbol]]:
    lines = text.splitlines()
    if not lines:
        return [], []
    spans: list[tuple[int, int, str]] | None = None
    symbols: list[Symbol] = []
    if suffix in (".py", ".pyi"):
        spans = _python(text, symbols)
    elif suffix in _LANGUAGES:
        spans = _treesitter(text, suffix, symbols)
    return _fill(lines, spans or []), [_summarised(s, lines) for s in symbols]


def _summarised(symbol: Symbol, lines: list[str]) -> Symbol:
    """The symbol with its summary: the line that defines it, then its docstring (Python, found by
    `_python`) or the comment right above it."""
    doc = symbol.summary
    if not doc:
        above, at = [], symbol.start - 1
        while at >= 0 and len(above) < 6 and lines[at].lstrip().startswith(_COMMENT_STARTS):
            above.insert(0, lines[at].strip().lstrip("/*#-! ").removesuffix("*/").strip())
            at -= 1
        doc = " ".join(above)
    head = lines[symbol.start].strip() if symbol.start < len(lines) else ""
    return Symbol(symbol.name, symbol.qualified, symbol.kind, symbol.start, symbol.end,
                  (head + " " + doc).strip()[:SUMMARY_CHARS])


def _fill(lines: list[str], spans: list[tuple[int, int, str]]) -> list[Chunk]:
    """Definitions as chunks, the code between them in windows."""
    chunks: list[Chunk] = []
    covered = 0

    def window(start: int, stop: int) -> None:
        for at in range(start, stop, WINDOW_LINES):
            body = "\n".join(lines[at:min(stop, at + WINDOW_LINES)])
            if body.strip():
                chunks.append(Chunk(at, min(stop, at + WINDOW_LINES) - 1, "", body[:MAX_CHUNK_CHARS]))

    for start, end, name in sorted(spans):
        if start < covered:
            continue  # nested in a chunk already taken
        while start > covered and lines[start - 1].lstrip().startswith(_COMMENT_STARTS):
            start -= 1  # the comment that documents a definition goes with it
        window(covered, start)
        chunks.append(Chunk(start, end, name, "\n".join(lines[start:end + 1])[:MAX_CHUNK_CHARS]))
        covered = end + 1
    window(covered, len(lines))
    return chunks


# -- Python --------------------------------------------------------------------------------
def _python(text: str, symbols: list[Symbol]) -> list[tuple[int, int, str]] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    spans: list[tuple[int, int, str]] = []

    def start_of(node: ast.AST) -> int:
        decorators = getattr(node, "decorator_list", None) or []
        return min([node.lineno] + [d.lineno for d in decorators]) - 1

    def visit(body: list[ast.stmt], prefix: str, top: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start, end = start_of(node), (node.end_lineno or node.lineno) - 1
                qualified = prefix + node.name
                kind = "class" if isinstance(node, ast.ClassDef) else ("method" if prefix else "function")
                doc = (ast.get_docstring(node, clean=True) or "").split("\n\n")[0].replace("\n", " ")
                symbols.append(Symbol(node.name, qualified, kind, start, end, doc))
                if isinstance(node, ast.ClassDef):
                    if end - start + 1 > SPLIT_LINES:
                        members = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
                        head_end = (start_of(members[0]) - 1) if members else end
                        spans.append((start, max(start, head_end), qualified))
                        visit(node.body, qualified + ".", False)
                        for member in members:
                            spans.append((start_of(member), (member.end_lineno or member.lineno) - 1,
                                          qualified + "." + member.name))
                    else:
                        spans.append((start, end, qualified))
                        visit(node.body, qualified + ".", False)
                elif top:
                    spans.append((start, end, qualified))
            elif top and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        symbols.append(Symbol(target.id, target.id, "variable", node.lineno - 1,
                                              (node.end_lineno or node.lineno) - 1))

    visit(tree.body, "", True)
    return spans


# -- tree-sitter ---------------------------------------------------------------------------
# The index's own parsers, not the guards': it parses in a worker thread while a guard parses on the
# event loop, and a tree-sitter parser is not to be shared between threads.
_parsers: dict[str, Any] = {}


def _parser(suffix: str) -> Any:
    from ..completion.guards.treesitter import GRAMMARS

    language = _LANGUAGES[suffix]
    parser = _parsers.get(language)
    if parser is None:
        import tree_sitter

        module_name, function = GRAMMARS[language]
        grammar = getattr(importlib.import_module(module_name), function)()
        parser = _parsers[language] = tree_sitter.Parser(tree_sitter.Language(grammar))
    return parser


def _name_of(node: Any) -> str:
    name = node.child_by_field_name("name")
    if name is None and node.type == "impl_item":  # `impl Trait for Type`: named by its type
        name = node.child_by_field_name("type")
    if name is None:
        declarator = node.child_by_field_name("declarator")  # C/C++: `int f(...)` -> f
        while declarator is not None and declarator.child_by_field_name("declarator") is not None:
            declarator = declarator.child_by_field_name("declarator")
        name = declarator
    return name.text.decode("utf-8", "replace") if name is not None and name.text else ""


def _treesitter(text: str, suffix: str, symbols: list[Symbol]) -> list[tuple[int, int, str]] | None:
    try:
        tree = _parser(suffix).parse(text.encode("utf-8", "surrogatepass"))
    except Exception:  # a missing grammar wheel or a parser failure: windows of lines
        log.debug("no tree-sitter chunks for %s", suffix, exc_info=True)
        return None
    spans: list[tuple[int, int, str]] = []

    def visit(node: Any, prefix: str, depth: int) -> None:
        for child in node.named_children:
            kind = child.type
            if kind in _DEFINITIONS:
                name = _name_of(child)
                if kind == "variable_declarator" and (child.child_by_field_name("value") is None
                                                      or child.child_by_field_name("value").type not in
                                                      ("arrow_function", "function_expression", "function", "class")):
                    continue  # a plain `const x = 1` is not a definition worth a chunk
                if not name:
                    continue
                start, end = child.start_point[0], child.end_point[0]
                if kind == "variable_declarator" and child.parent is not None:
                    start = child.parent.start_point[0]
                    if child.parent.parent is not None and child.parent.parent.type == "export_statement":
                        start = child.parent.parent.start_point[0]
                elif child.parent is not None and child.parent.type == "export_statement":
                    start = child.parent.start_point[0]
                qualified = prefix + name
                symbols.append(Symbol(name, qualified, kind, start, end))
                if end - start + 1 > SPLIT_LINES and depth < 2:
                    body = child.child_by_field_name("body")
                    first = body.named_children[0].start_point[0] if body is not None and body.named_children else end
                    spans.append((start, max(start, first - 1), qualified))
                    if body is not None:
                        visit(body, qualified + ".", depth + 1)
                elif depth == 0 or prefix:
                    spans.append((start, end, qualified))
                    body = child.child_by_field_name("body")
                    if body is not None and depth < 2:
                        _members(body, qualified + ".", symbols)
            elif kind in _WRAPPERS and depth < 3:
                visit(child, prefix, depth)

    visit(tree.root_node, "", 0)
    return spans


def _members(body: Any, prefix: str, symbols: list[Symbol]) -> None:
    """Symbols of a class kept whole (its methods are found by name, the chunk is the class)."""
    for child in body.named_children:
        if child.type in _DEFINITIONS and child.type != "variable_declarator":
            name = _name_of(child)
            if name:
                symbols.append(Symbol(name, prefix + name, child.type, child.start_point[0], child.end_point[0]))


def syntax_error(text: str, suffix: str) -> str | None:
    """Why `text` does not parse as the language of `suffix` ("line 4: invalid syntax"), or None when it
    parses or the language has no parser here."""
    if suffix in (".py", ".pyi"):
        try:
            ast.parse(text)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError) as exc:
            return str(exc)
        return None
    if suffix not in _LANGUAGES:
        return None
    try:
        root = _parser(suffix).parse(text.encode("utf-8", "surrogatepass")).root_node
    except Exception:  # a missing grammar wheel: nothing to say
        return None
    if not root.has_error:
        return None
    bad = [root]
    while bad:
        node = bad.pop()
        if node.type == "ERROR" or node.is_missing:
            return f"line {node.start_point[0] + 1}: {'missing ' + node.type if node.is_missing else 'a syntax error'}"
        bad.extend(reversed([c for c in node.children if c.has_error or c.is_missing or c.type == "ERROR"]))
    return "a syntax error"
