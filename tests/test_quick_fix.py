"""The region a quick fix asks the model for (kestrel.edits.quick_fix). Quick fixes over LSP, against a
kestrel-lsp process, are in tests/test_lsp_quickfix.py."""

from __future__ import annotations


def test_a_fix_is_asked_for_the_enclosing_function_or_only_the_faulty_lines():
    from kestrel.edits.quick_fix import fix_region

    src = ("import os\n\n\ndef greet(name):\n    for x in name:\n        if x:\n            pritn(x)\n"
           "    return name\n\n\nfor i in range(3):\n    prnt(i)\n")
    r = fix_region(src, 6, 6)
    assert (r.start_line, r.end_line, r.problem_line) == (3, 7, 6)  # the whole def, not just the `if`
    assert (fix_region(src, 11, 11).start_line, fix_region(src, 11, 11).end_line) == (11, 11)  # module level
    assert (fix_region(src, 3, 3).start_line, fix_region(src, 3, 3).end_line) == (3, 7)  # on the def line itself
    data = '{\n  "a": 1,\n  "b": 2,\n}\n'
    r = fix_region(data, 2, 2)
    assert data[r.start : r.end] == '  "b": 2,'  # JSON: the line, never its closing brace


def test_a_brace_language_fix_is_asked_for_the_statement_holding_the_diagnostic():
    """A TypeScript diagnostic inside a class is fixed in its statement, never the whole class (the
    Python walk took a `class` line for a block head and asked a small model to rewrite hundreds of
    lines); a statement longer than MAX_STATEMENT_LINES, and a file that does not parse there, keep
    the diagnostic's own lines."""
    from kestrel.edits.quick_fix import fix_region
    from kestrel.edits.statement_region import MAX_STATEMENT_LINES

    src = ("export class A {\n  run(x: number) {\n    let y = x + 1\n    if (x > 2)\n      return \"a\" +\n"
           "        y;\n    for (const k of [1, 2]) console.log(k)\n    return y\n  }\n}\n")

    def lines(first: int, last: int, language: str = "typescript") -> tuple[int, int, str]:
        r = fix_region(src, first, last, language)
        return r.start_line, r.end_line, src[r.start : r.end]

    assert lines(2, 2)[:2] == (2, 2)  # `let y = ...`: its own line
    assert lines(4, 4) == (3, 5, '    if (x > 2)\n      return "a" +\n        y;')  # curly: the whole `if`
    assert lines(5, 5)[:2] == (3, 5)  # one operand of the concatenation: the statement
    assert fix_region(src, 4, 4, "typescript").problem_line == 4
    assert lines(4, 4, "go")[:2] == (4, 4)  # not Go: the parse fails there, the line stays
    assert lines(4, 4, "plaintext")[:2] == (4, 4)  # no grammar
    long = "function f() {\n  if (a)\n    g(" + ",\n      1" * MAX_STATEMENT_LINES + ")\n}\n"
    r = fix_region(long, 2, 2, "typescript")
    assert (r.start_line, r.end_line) == (2, 2)


def test_brace_language_answers_that_change_nothing_or_use_made_up_names_are_caught():
    from kestrel.edits.brace_checks import made_up_name, reindent, same_program

    doc = 'function f(items: string[]) {\n  if (items.length) return "a" + items[0];\n  return ""\n}\n'
    relaid = 'function f(items: string[]) {\n  if (items.length)\n      return "a" + items[0]   // first\n  return "";\n}\n'
    assert same_program(doc, relaid, "typescript")  # layout, a comment, `;`: the same program
    braced = doc.replace('return "a" + items[0];', '{ return "a" + items[0]; }')
    assert not same_program(doc, braced, "typescript")
    assert not same_program(doc, doc.replace('"a"', '"b"'), "typescript")  # a string is code
    assert not same_program(doc, doc, "plaintext")  # no grammar: never "the same"
    # Names: one the file never mentions is made up; the file's own, a global, one the answer declares are not.
    assert made_up_name(doc, '  if (items.length) { return `a${prefix}` }', "typescript") == "prefix"
    assert made_up_name(doc, '  if (items.length) { return `a${items[0]}` }', "typescript") is None
    assert made_up_name(doc, '  if (!items.length) throw new Error(JSON.stringify(items))', "typescript") is None
    assert made_up_name(doc, '  const first = items[0]\n  if (first) return first', "typescript") is None
    assert made_up_name(doc, "  x := items[0]", "go") is None
    assert made_up_name(doc, "  anything(at, all)", "plaintext") is None  # no grammar: no check
    # An answer at its own indentation goes to the region's.
    assert reindent("if (a) {\n  b()\n}", "    if (a) b()") == "    if (a) {\n      b()\n    }"
    assert reindent("    x()", "    y()") == "    x()"


def test_a_brace_language_fix_that_takes_out_a_name_the_file_still_uses_is_refused():
    from kestrel.edits.brace_checks import dropped_name

    doc = ("function f(options: Opts) {\n  let {\n    isImmutable = dflt,\n    warnAfter = 32,\n  } = options\n"
           "  return isImmutable(warnAfter)\n}\n")
    wrong = "function f(options: Opts) {\n  let ignored: any[] = [];\n  return isImmutable(warnAfter)\n}\n"
    assert dropped_name(doc, wrong, 2, 5, "typescript") in {"isImmutable", "warnAfter", "options"}
    right = doc.replace("  let {", "  const {")
    assert dropped_name(doc, right, 2, 2, "typescript") is None
    unused = "function g() {\n  const unused = 1\n  return 2\n}\n"  # a name used nowhere else may go
    assert dropped_name(unused, "function g() {\n  return 2\n}\n", 2, 2, "typescript") is None
