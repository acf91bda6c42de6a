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
