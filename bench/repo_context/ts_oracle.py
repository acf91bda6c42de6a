"""The oracle definitions of a TypeScript repository task (ts_tasks.py), rendered from the defining
file's tree-sitter tree the way oracle.py renders Python (not whole files), with its caps:

- a function (each overload and the implementation): its JSDoc comment (at most DOC_LINES lines) and
  its signature up to the body, ended with `;` (as a declaration file shows it);
- a class: its JSDoc and header, then its public members: fields (an initializer longer than
  MAX_MEMBER_CHARS dropped), the constructor's signature first, then method, accessor and index
  signatures (private, protected and `#` members left out), within MAX_CLASS_CHARS (the rest
  counted in a comment);
- an interface, a type alias or an enum: its JSDoc and its text, within MAX_CLASS_CHARS (cut at a
  line, the rest counted in a comment);
- a const / let / var: an arrow function or function expression with a block body as its signature
  and `{ ... }`; anything else the statement, at most MAX_ASSIGN_CHARS;
- `export default <expression>`: the statement, at most MAX_ASSIGN_CHARS.

Every declaration of the name at the top level of its file is shown, in file order (overloads; a
value and a type of one name, `interface X` + `const X`). Comments inside the text and blank lines
are left out (as `ast.unparse` leaves them out of the Python oracle); the `export` keyword stays.
Nothing here uses Kestrel's own TypeScript outline.
"""

from __future__ import annotations

from typing import Any

from .oracle import DOC_LINES, MAX_ASSIGN_CHARS, MAX_CLASS_CHARS

MAX_MEMBER_CHARS = 160
FUNCTIONS = {"function_declaration", "generator_function_declaration", "function_signature"}
CLASSES = {"class_declaration", "abstract_class_declaration"}
TYPES = {"interface_declaration", "type_alias_declaration", "enum_declaration"}
VARIABLES = {"lexical_declaration", "variable_declaration"}
DECLARATIONS = FUNCTIONS | CLASSES | TYPES | VARIABLES
FUNCTION_VALUES = {"arrow_function", "function_expression", "generator_function", "function"}


class Source:
    """One file's bytes and its comments (byte ranges), for slicing code out of it."""

    def __init__(self, data: bytes, comments: list[tuple[int, int]]) -> None:
        self.data = data
        self.comments = comments  # sorted

    def code(self, a: int, b: int) -> str:
        """data[a:b] without its comments, blank lines dropped, trailing space stripped."""
        parts, pos = [], a
        for s, e in self.comments:
            if e <= a or s >= b:
                continue
            parts.append(self.data[pos:max(s, pos)])
            pos = max(pos, min(e, b))
        parts.append(self.data[pos:b])
        text = b"".join(parts).decode("utf-8", "replace")
        return "\n".join(line.rstrip() for line in text.split("\n") if line.strip())

    def indent(self, start: int) -> str:
        """The whitespace before `start` on its line ("  " when code precedes it)."""
        line_start = self.data.rfind(b"\n", 0, start) + 1
        lead = self.data[line_start:start].decode("utf-8", "replace")
        return lead if not lead.strip() else "  "

    def jsdoc(self, stmt: Any) -> str:
        """The `/** ... */` comment right before the statement (no code between), at most DOC_LINES lines."""
        prev = stmt.prev_sibling
        if prev is None or prev.type != "comment" or not self.data[prev.start_byte:prev.end_byte].startswith(b"/**"):
            return ""
        if self.data[prev.end_byte:stmt.start_byte].strip():
            return ""
        lines = self.data[prev.start_byte:prev.end_byte].decode("utf-8", "replace").split("\n")
        lines = [lines[0]] + [" " + line.strip() for line in lines[1:]]
        if len(lines) > DOC_LINES:
            lines = lines[: DOC_LINES - 1] + [" * ...", " */"]
        return "\n".join(lines) + "\n"


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 4].rstrip() + " ..."


def _lines_within(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    lines = text.split("\n")
    out, used = [], 0
    for line in lines:
        if used + len(line) + 1 > cap and out:
            break
        out.append(line)
        used += len(line) + 1
    left = len(lines) - len(out)
    return "\n".join(out) + (f"\n  // ... {left} more lines" if left else "")


def _signature(src: Source, start: int, node: Any) -> str:
    body = node.child_by_field_name("body")
    if body is None:
        return src.code(start, node.end_byte).rstrip(";") + ";"
    return src.code(start, body.start_byte).rstrip() + ";"


def _private(src: Source, member: Any) -> bool:
    name = member.child_by_field_name("name")
    if name is not None and (name.type == "private_property_identifier"
                             or src.data[name.start_byte:name.end_byte].startswith(b"#")):
        return True
    return any(c.type == "accessibility_modifier" and src.data[c.start_byte:c.end_byte] in (b"private", b"protected")
               for c in member.children)


def _member(src: Source, member: Any) -> str | None:
    t = member.type
    if t == "method_definition":
        return _signature(src, member.start_byte, member)
    if t in ("method_signature", "abstract_method_signature", "index_signature", "property_signature"):
        return src.code(member.start_byte, member.end_byte).rstrip(";") + ";"
    if t == "public_field_definition":
        text = src.code(member.start_byte, member.end_byte).rstrip(";")
        value = member.child_by_field_name("value")
        if len(text) > MAX_MEMBER_CHARS and value is not None:
            text = src.code(member.start_byte, value.start_byte).rstrip().rstrip("=").rstrip()
        return text + ";"
    return None


def render_class(src: Source, start: int, node: Any) -> str:
    body = node.child_by_field_name("body")
    if body is None:
        return _clip(src.code(start, node.end_byte), MAX_CLASS_CHARS)
    text = src.code(start, body.start_byte).rstrip() + " {"
    members = [m for m in body.named_children if m.type not in ("comment", "decorator") and not _private(src, m)]
    fields = [m for m in members if m.type == "public_field_definition"]
    ctor = [m for m in members if m.type == "method_definition"
            and src.data[m.child_by_field_name("name").start_byte:m.child_by_field_name("name").end_byte] == b"constructor"]
    rest = [m for m in members if m not in fields and m not in ctor]
    ordered = fields + ctor + rest
    left = 0
    for k, m in enumerate(ordered):
        line = _member(src, m)
        if line is None:
            continue
        line = src.indent(m.start_byte) + line
        if len(text) + len(line) + 3 > MAX_CLASS_CHARS:
            left = len(ordered) - k
            break
        text += "\n" + line
    if left:
        text += f"\n  // ... {left} more members"
    return text + "\n}"


def render(src: Source, stmt: Any, decl: Any) -> str:
    """One top-level declaration `decl` (inside the statement `stmt`: itself, or the `export`
    statement around it) as the oracle shows it (see the module docstring)."""
    start = stmt.start_byte
    doc = src.jsdoc(stmt)
    t = decl.type
    if t in FUNCTIONS:
        return doc + _signature(src, start, decl)
    if t in CLASSES or t == "class":
        return doc + render_class(src, start, decl)
    if t in TYPES:
        return doc + _lines_within(src.code(start, stmt.end_byte), MAX_CLASS_CHARS)
    if t in VARIABLES:
        declarators = [c for c in decl.named_children if c.type == "variable_declarator"]
        value = declarators[0].child_by_field_name("value") if len(declarators) == 1 else None
        body = value.child_by_field_name("body") if value is not None and value.type in FUNCTION_VALUES else None
        if body is not None and body.type == "statement_block":
            return doc + src.code(start, body.start_byte).rstrip() + " { ... };"
        return doc + _clip(src.code(start, stmt.end_byte), MAX_ASSIGN_CHARS)
    return doc + _clip(src.code(start, stmt.end_byte), MAX_ASSIGN_CHARS)
