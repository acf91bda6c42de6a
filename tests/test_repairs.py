"""Repairs a diagnostic spells out (kestrel.edits.repairs): a missing token, a misspelt name."""

from __future__ import annotations


def test_the_repairs_a_diagnostic_spells_out():
    from kestrel.edits.imports import missing_imports
    from kestrel.edits.repairs import missing_token, similar_name

    # The parser names the missing token: it goes where the parser stopped or at a line's end near it.
    header = "def f(x):\n    if x == 1\n        return 0\n    return x\n"
    assert next(missing_token(header, 1, "Expected `:`, found newline", "python")) == header.replace("== 1", "== 1:")
    call = "def f(xs):\n    total = sum(abs(x) for x in xs\n    return total\n"
    fixed = list(missing_token(call, 3, "unexpected EOF while parsing", "python"))
    assert fixed and fixed[0] == call.replace("in xs", "in xs)")  # from Python's "'(' was never closed"
    assert all(compile(t, "t", "exec") for t in fixed)  # only candidates that parse
    assert list(missing_token("def f(x):\n    return x\n", 1, "Expected `:`", "python")) == []  # it parses already
    assert list(missing_token("x = = 1\n", 0, "invalid syntax", "python")) == []  # nothing named: no guess
    # An undefined name close to one the file binds, or to a builtin: the reads on its lines renamed.
    loop = "def f(x):\n    for t in x:\n        print(ts)\n    return ts\n"
    assert next(similar_name(loop, 2, 2, "ts", "python")) == loop.replace("print(ts)", "print(t)")
    assert next(similar_name("def g(a):\n    pritn(a)\n", 1, 1, "pritn", "python")) == "def g(a):\n    print(a)\n"
    assert list(similar_name("def g(a):\n    zqxv(a)\n", 1, 1, "zqxv", "python")) == []
    # "Add import" brings the other names the file needs from the same module in the same line.
    typed = "def f(x: List[int]) -> Optional[int]:\n    return math.floor(Counter(x).most_common(1)[0][0])\n"
    assert missing_imports(typed, "List", "python") == "from typing import List, Optional"
    assert missing_imports(typed, "math", "python") == "import math"
    assert missing_imports(typed, "frobnicate", "python") is None
