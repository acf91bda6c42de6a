"""The name guard (kestrel.completion.name_guard): no suggestion that reads a name the code cannot have."""

from __future__ import annotations

from scripted_completion import complete_at

from kestrel.completion.name_guard import first_unbound_read
from kestrel.completion.name_retry import steer_token


def test_a_suggestion_that_reads_a_name_the_code_cannot_have_is_not_shown():
    from kestrel.completion.name_guard import misreads_names

    head = "import math\n\nLIMIT = 3\n\ndef shift(x, n):\n"
    # Bound nowhere (not a parameter, import, module name, builtin): NameError.
    assert misreads_names(head, "    return s[n:] + s[:n]\n", "", "python")
    assert not misreads_names(head, "    s = str(x)\n", "    return s[n:] + s[:n]\n", "python")
    assert not misreads_names(head, "    return math.floor(x) + LIMIT + len(str(n))\n", "", "python")
    assert not misreads_names(head, "    return helper(x)\n", "\ndef helper(y):\n    return y\n", "python")
    # A local of the function assigned only further down, outside any loop: UnboundLocalError.
    body = "    out = []\n    for i in range(n):\n"
    later = "    text = ''.join(out)\n    for c in text:\n        out.append(c)\n    return out\n"
    assert misreads_names(head + body, "        out.append(c)\n", later, "python")
    assert not misreads_names(head + body, "        out.append(i)\n", later, "python")
    # ... but bound on an earlier pass of the loop that holds the read is fine.
    loop = "    prev = None\n    for c in str(x):\n"
    assert not misreads_names(head + loop, "        if c == last: continue\n", "        last = c\n", "python")
    # The code right after the cursor needs a name nothing binds: the gap is where it belongs.
    gap_after = "    return s[n:] + s[:n]\n"
    assert misreads_names(head, "    n = n % 10\n", gap_after, "python")
    assert not misreads_names(head, "    s = str(x)\n", gap_after, "python")
    # Far from the cursor, an undefined name is the person's business, not the suggestion's.
    far = "    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return undefined_thing\n"
    assert not misreads_names(head, "    y = x + 1\n", far, "python")
    # Not checked: a star import, unparsable code (the syntax guard's job), other languages.
    assert not misreads_names("from m import *\n" + head, "    return s\n", "", "python")
    assert not misreads_names(head, "    return s[", "\n", "python")
    assert not misreads_names("function f() {\n", "  return s;\n", "}\n", "javascript")
    # Through the engine: the model reads a name nothing binds, so nothing is shown.
    doc = "def area(r):\n    return pi * r * r\n"
    text, _ = complete_at(doc, doc.index("    return"), "    r = radius\n")
    assert text == ""
    text, _ = complete_at(doc, doc.index("    return"), "    pi = 3.14159\n")
    assert text.startswith("    pi = 3.14159")


def test_the_first_unbound_read_says_where_it_is_in_the_suggestion():
    before = "from m import GraphRunContext\n\n\ndef f(x):\n    "
    assert first_unbound_read(before, "y = x\n    return zz(y)", "\n", "python") == ("zz", 17)
    assert first_unbound_read("def f(ctx: ", "StepContext) -> int:", "\n    return 1\n", "python") == ("StepContext", 0)
    assert first_unbound_read(before, "return GraphRunContext(x)", "\n", "python") is None
    # A local read above its assignment is not an invented name; a name only in the lines after is not in the text.
    assert first_unbound_read("def f():\n    ", "print(out)\n    out = 1", "\n", "python") is None
    assert first_unbound_read("def f():\n    y = ", "1", "\n    return nope\n", "python") is None


def test_the_steering_token_begins_a_name_the_code_has():
    names = frozenset({"GraphRunContext", "StateT", "x"})
    top = {"Step": -0.2, "(": -1.0, " Graph": -1.5, "State": -2.0}
    assert steer_token("Step", top, names) == " Graph"  # the invented token and punctuation are passed over
    assert steer_token("Step", {"Step": -0.2, "Stage": -0.4}, names) is None  # no known name begins `Stage`
