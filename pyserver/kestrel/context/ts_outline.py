"""What a TypeScript or JavaScript module offers another file's completion: its exported declarations
as a `.d.ts` would show them (function signatures, class members' signatures, interfaces, type
aliases, enums, the types of constants), read with tree-sitter; plus what it re-exports. And the
names a file imports (`import {a, b as c} from "./x"`, default and namespace imports).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .python_outline import ImportedName, Outline

MAX_CLASS_CHARS = 900
MAX_TYPE_CHARS = 600  # an interface, type alias or enum longer than this shows its first line
MAX_CONST_CHARS = 200
TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_DECLARATIONS = ("function_declaration", "generator_function_declaration", "class_declaration",
                 "abstract_class_declaration", "interface_declaration", "type_alias_declaration",
                 "enum_declaration", "lexical_declaration", "variable_declaration")


@lru_cache(maxsize=2)
def _parser(tsx: bool) -> Any:
    import tree_sitter_typescript as grammar
    from tree_sitter import Language, Parser

    return Parser(Language(grammar.language_tsx() if tsx else grammar.language_typescript()))


def _text(src: bytes, node: Any) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _head(src: bytes, node: Any, body: Any) -> str:
    """The declaration up to its body, on one line."""
    return " ".join(src[node.start_byte : body.start_byte].decode("utf-8", "replace").split())


def _function(src: bytes, node: Any) -> str:
    body = node.child_by_field_name("body")
    return (_head(src, node, body) if body is not None else " ".join(_text(src, node).split())).rstrip(";") + ";"


def _private(src: bytes, member: Any) -> bool:
    name = member.child_by_field_name("name")
    if name is not None and (name.type == "private_property_identifier" or _text(src, name).startswith("#")):
        return True
    return any(c.type == "accessibility_modifier" and _text(src, c) in ("private", "protected") for c in member.children)


def _class(src: bytes, node: Any) -> str:
    body = node.child_by_field_name("body")
    if body is None:
        return " ".join(_text(src, node).split())
    text = _head(src, node, body) + " {"
    for member in body.named_children:
        if member.type in ("method_definition", "abstract_method_signature", "method_signature"):
            line = "  " + _function(src, member)
        elif member.type in ("public_field_definition", "property_signature"):
            value = member.child_by_field_name("value")
            end = value.start_byte if value is not None else member.end_byte
            line = "  " + " ".join(src[member.start_byte : end].decode("utf-8", "replace").split()).rstrip("=; ") + ";"
        else:
            continue
        if _private(src, member):
            continue
        if len(text) + len(line) + 3 > MAX_CLASS_CHARS:
            break
        text += "\n" + line
    return text + "\n}"


def _type(src: bytes, node: Any) -> str:
    text = _text(src, node)
    return text if len(text) <= MAX_TYPE_CHARS else text.split("\n", 1)[0].rstrip() + " ... }"


def _variables(src: bytes, node: Any, prefix: str) -> dict[str, str]:
    """`const a: T = ...` -> `const a: T;`; an arrow function -> its signature; a short value whole."""
    kind = node.children[0].type if node.children else "const"
    out = {}
    for decl in node.named_children:
        if decl.type != "variable_declarator" or decl.child_by_field_name("name") is None:
            continue
        name = _text(src, decl.child_by_field_name("name"))
        value = decl.child_by_field_name("value")
        typed = decl.child_by_field_name("type")
        if value is not None and value.type in ("arrow_function", "function_expression", "function"):
            body = value.child_by_field_name("body")
            head = _head(src, value, body) if body is not None else ""
            out[name] = f"{prefix}{kind} {name} = {head} ...;"
        elif typed is not None:
            out[name] = f"{prefix}{kind} {name}{' '.join(_text(src, typed).split())};"
        else:
            whole = f"{prefix}{kind} {' '.join(_text(src, decl).split())};"
            out[name] = whole if len(whole) <= MAX_CONST_CHARS else f"{prefix}{kind} {name} = ...;"
    return out


def _render(src: bytes, node: Any, prefix: str) -> dict[str, str]:
    if node.type in ("lexical_declaration", "variable_declaration"):
        return _variables(src, node, prefix)
    name = node.child_by_field_name("name")
    if name is None:
        return {}
    if node.type in ("function_declaration", "generator_function_declaration"):
        text = _function(src, node)
    elif node.type in ("class_declaration", "abstract_class_declaration"):
        text = _class(src, node)
    else:
        text = _type(src, node)
    text = text if text.startswith(prefix.strip()) or not prefix else prefix + text
    return {_text(src, name): text}


def _doc_summary(comment: str) -> str:
    """`/** Summary. More... */` -> "/** Summary. */\n"; other comments -> ""."""
    if not comment.startswith("/**"):
        return ""
    lines = [line.strip().lstrip("*").strip() for line in comment[3:].rstrip("*/").splitlines()]
    first = next((line for line in lines if line), "")
    return f"/** {first} */\n" if first and not first.startswith("@") else ""


def _string(src: bytes, node: Any) -> str | None:
    source = node.child_by_field_name("source")
    return None if source is None else _text(src, source).strip("'\"`")


def outline_ts(source: str, suffix: str = ".ts") -> Outline:
    """The exports of a TypeScript/JavaScript module (JavaScript parses with the TypeScript grammar)."""
    src = source.encode("utf-8", "surrogatepass")
    tree = _parser(suffix in (".tsx", ".jsx")).parse(src)
    local: dict[str, str] = {}
    definitions: dict[str, str] = {}
    reexports: dict[str, tuple[int, str, str]] = {}
    star: list[str] = []
    clauses: list[tuple[str, str]] = []  # `export { local as name }` without a source: (name, local)
    doc = ""  # the summary of the JSDoc comment just before a declaration
    for node in tree.root_node.named_children:
        if node.type == "comment":
            doc = _doc_summary(_text(src, node))
            continue
        summary, doc = doc, ""
        if node.type == "export_statement":
            spec = _string(src, node)
            default = any(c.type == "default" for c in node.children)
            decl = node.child_by_field_name("declaration") or next(
                (c for c in node.named_children if c.type in _DECLARATIONS), None)
            if decl is not None:
                rendered = {k: summary + v for k, v in _render(src, decl, "export default " if default else "export ").items()}
                definitions.update(rendered)
                if default and rendered:
                    definitions["default"] = next(iter(rendered.values()))
            elif spec is not None and any(c.type == "*" for c in node.children):
                star.append(spec)
            for clause in (c for c in node.named_children if c.type == "export_clause"):
                for item in clause.named_children:
                    if item.type != "export_specifier":
                        continue
                    orig = _text(src, item.child_by_field_name("name"))
                    alias = item.child_by_field_name("alias")
                    name = _text(src, alias) if alias is not None else orig
                    if spec is not None:
                        reexports[name] = (0, spec, orig)
                    else:
                        clauses.append((name, orig))
        elif node.type in _DECLARATIONS:
            local.update(_render(src, node, ""))
    for name, orig in clauses:
        if orig in local:
            definitions[name] = local[orig]
    return Outline(definitions, reexports, frozenset(), source.count("\n"), tuple(star))


# `import ... from "x"` (the clause may span lines); `import "x"` (side effects) binds nothing.
_IMPORT_TS = re.compile(r"import\s+(?:type\s+)?([^;\"'`]*?)\s*from\s*([\"'])([^\"'\n]+)\2", re.DOTALL)
_NAMED = re.compile(r"\{([^}]*)\}")
_NAMESPACE = re.compile(r"\*\s*as\s+([A-Za-z_$][\w$]*)")


def import_statements_ts(source: str) -> list[str]:
    out, pos = [], 0
    while (at := source.find("import", pos)) >= 0:
        pos = at + 6
        start = source.rfind("\n", 0, at) + 1
        if source[start:at].strip() or source[pos : pos + 1] not in " \t{*\n":
            continue
        match = _IMPORT_TS.match(source, at, min(len(source), at + 2000))
        if match is not None:
            out.append(match.group(0))
            pos = match.end()
    return out


def imported_names_ts(block: str) -> tuple[ImportedName, ...]:
    """The names bound by the import statements in `block` (from import_statements_ts), in order.
    Only relative specifiers name the user's own files; packages are left to their types."""
    out: dict[str, ImportedName] = {}
    for match in _IMPORT_TS.finditer(block):
        clause, spec = match.group(1), match.group(3)
        if not spec.startswith("."):
            continue
        named = _NAMED.search(clause)
        if named is not None:
            for item in named.group(1).split(","):
                parts = item.replace("type ", " ").split()
                if not parts:
                    continue
                orig, bound = parts[0], parts[-1] if len(parts) == 3 and parts[1] == "as" else parts[0]
                out.setdefault(bound, ImportedName(bound, 0, spec, orig))
        namespace = _NAMESPACE.search(clause)
        if namespace is not None:
            out.setdefault(namespace.group(1), ImportedName(namespace.group(1), 0, spec, None))
        default = clause.split(",")[0].strip()
        if default and re.fullmatch(r"[A-Za-z_$][\w$]*", default):
            out.setdefault(default, ImportedName(default, 0, spec, "default"))
    return tuple(out.values())
