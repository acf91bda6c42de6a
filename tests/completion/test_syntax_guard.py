"""The syntax guard (kestrel.completion.syntax_guard): no suggestion that breaks the code's syntax."""

from __future__ import annotations

from scripted_completion import complete_at


def test_a_suggestion_that_breaks_the_syntax_is_not_shown():
    from kestrel.completion.syntax_guard import breaks_syntax

    before, after = "def f(n):\n    if n == 0:\n", "\n    if n == 1:\n        return 1\n"
    assert not breaks_syntax(before, "        return 0", after, "python")  # fills the empty body
    assert breaks_syntax(before, "        return 0\n    else:", after, "python")  # a header with no body
    assert breaks_syntax(before, "        return (0", after, "python")
    # Half-typed code is not held against the suggestion, and other languages are not checked.
    assert not breaks_syntax("def f(x):\n    return foo(", "a, b", "\n", "python")
    assert not breaks_syntax("function f() {\n", "  return (0", "\n}\n", "javascript")
    # Through the engine: the model's answer would leave a dangling bracket: nothing is shown.
    doc = "def f(xs):\n    total = 0\n    return total\n"
    text, _ = complete_at(doc, doc.index("    return"), "    total += (len(xs)")
    assert text == ""
