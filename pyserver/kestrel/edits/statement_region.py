"""The statement a diagnostic sits in, for the languages tree-sitter parses (TS, JS, Go, Rust, Java,
C, C++, C#): what a brace-language quick fix asks the model to rewrite.

Why: a diagnostic's own lines are often a fragment (`return x;` under an `if` without braces, one
operand of a concatenation that spans lines). Asked for the corrected fragment, a small model
rewrites something else or nothing; asked for the whole statement it sits in, it answers with a
statement, which either parses in place or is refused. Python keeps its indentation walk to the
enclosing def (quick_fix.fix_region).
"""

from __future__ import annotations

from typing import Any

# Node types whose children are statements or members, across the grammars: the statement sought is
# the outermost node around the diagnostic below one of these.
STATEMENT_LISTS = frozenset({
    "program", "statement_block", "class_body", "interface_body", "enum_body", "switch_case", "switch_default",
    "source_file", "block", "expression_case", "default_case", "communication_case", "type_case",
    "declaration_list", "field_declaration_list", "compound_statement", "translation_unit", "match_block",
    "constructor_body", "switch_block_statement_group", "switch_section", "namespace_body", "module",
})
MAX_STATEMENT_LINES = 30  # a longer statement (a whole loop, a long literal): the diagnostic's lines alone


def statement_lines(text: str, language: str, first_line: int, last_line: int) -> tuple[int, int] | None:
    """(first, last) line, 0-based and inclusive, of the statement holding lines `first_line`..
    `last_line`; None when the language has no grammar here, the file does not parse there, or the
    statement is longer than MAX_STATEMENT_LINES."""
    parser = parser_for(language)
    if parser is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    lines = data.split(b"\n")
    if not 0 <= first_line <= last_line < len(lines):
        return None
    start = sum(len(ln) + 1 for ln in lines[:first_line])
    start += len(lines[first_line]) - len(lines[first_line].lstrip())
    end = sum(len(ln) + 1 for ln in lines[:last_line]) + len(lines[last_line].rstrip())
    if end <= start:
        return None
    node = parser.parse(data).root_node.descendant_for_byte_range(start, end)
    while node is not None and node.parent is not None and node.parent.type not in STATEMENT_LISTS:
        node = node.parent
    if node is None or node.parent is None or node.has_error:
        return None
    first, last = node.start_point[0], node.end_point[0]
    if last - first + 1 > MAX_STATEMENT_LINES:
        return None
    return min(first, first_line), max(last, last_line)


def parser_for(language: str) -> Any:
    from ..completion.guards import guard_for

    guard = guard_for(language)
    get = getattr(guard, "parser", None)  # the tree-sitter guards hold their language's parser
    return get() if callable(get) else None
