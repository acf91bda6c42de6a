"""Re-reading a region line by line for a slip (kestrel.edits.line_scan)."""

from __future__ import annotations

import math


def test_a_slip_is_a_few_tokens_with_no_new_names():
    from kestrel.edits.line_scan import asks_for_a_repair, slip

    words = {"i", "n", "xs", "len", "range", "total", "x"}
    assert slip("if x != 0:", "if x == 0:", words) == 1
    assert slip("for i in range(1, n):", "for i in range(0, n):", words) == 1
    assert slip("if x > 0 or n > 0:", "if x > 0 and n > 0:", words) == 1
    assert slip("return total", "return total", words) is None  # the same line
    assert slip("total = 0", "count = 0", words) is None  # a name the code does not have
    assert slip("total = sum(xs)", "total = 0\nfor x in xs: total += x", words) is None  # another way to write it
    assert slip("return gcd(x % n, n)", "return gcd(n, x % n)", words) is None  # a swap: not a slip (design notes)
    assert asks_for_a_repair("Fix the bug. The tests fail: assert f(2) == 4")
    assert asks_for_a_repair("this returns the wrong value for empty lists")
    assert asks_for_a_repair("it doesn't work when n is 0")
    assert not asks_for_a_repair("add a docstring") and not asks_for_a_repair("rename x to count")
    assert not asks_for_a_repair("fix the formatting") and not asks_for_a_repair("add error handling")


def test_re_reading_a_region_line_by_line_offers_the_slip_the_model_insists_on():
    import asyncio

    from kestrel.edits.line_scan import candidates

    doc = "def count_even(xs):\n    n = 0\n    for x in xs:\n        if x % 2 == 1:\n            n += 1\n    return n\n"

    class LineModel:
        """Writes back each asked line as a correct version of the function has it."""
        kind, model, connection_state = "scripted", "scripted", "ready"
        right = ["n = 0", "for x in xs:", "if x % 2 == 0:", "n += 1", "return n"]

        def __init__(self):
            self.asked = []

        async def complete(self, prompt, stats):
            line = prompt.prefix.count("\n")
            self.asked.append((line, prompt.answered, prompt.top_logprobs))
            yield self.right[line - 1] + "\n    more"

    model = LineModel()
    found = asyncio.run(candidates(doc, 0, len(doc) - 1, model, "python", "a.py", lambda region: True))
    # Every line of the body (not the def line) without log probabilities; the slip's line again,
    # for the alternatives of the token where it parts from the line as written.
    assert model.asked == [(1, "", 0), (2, "", 0), (3, "", 0), (3, "", 5), (4, "", 0), (5, "", 0)]
    assert [(c.line, c.new_line) for c in found] == [(3, "        if x % 2 == 0:")]
    assert found[0].apply(doc[:-1]) + "\n" == doc.replace("== 1", "== 0")
    # A candidate the validator refuses (it would not lint, say) is not offered.
    assert asyncio.run(candidates(doc, 0, len(doc) - 1, LineModel(), "python", "a.py", lambda region: False)) == []

    # With the user's words, the model reads them as a comment above the region; the slip is the same
    # line of the region.
    class NotedModel(LineModel):
        async def complete(self, prompt, stats):
            self.asked.append(prompt.prefix)
            line = prompt.prefix.count("\n") - 3  # the import and the two comment lines
            yield self.right[line - 1] + "\n"

    noted = NotedModel()
    found = asyncio.run(candidates("import os\n" + doc, 10, 10 + len(doc) - 1, noted, "python", "a.py", lambda r: True,
                                   note="Fix the bug.\nE   assert 2 == 1"))
    assert noted.asked[0] == "import os\n# Fix the bug.\n# E   assert 2 == 1\ndef count_even(xs):\n    "
    assert [(c.line, c.new_line) for c in found] == [(3, "        if x % 2 == 0:")]


def test_the_departure_margin_weighs_the_answer_against_the_line_as_written():
    import math

    from kestrel.edits.line_scan import departure_margin

    # `if x % 2 == 1:` written; the model wrote `== 0` where `== 1` had a tenth of its probability.
    tokens = [("if", {"if": -0.01}), (" x", {" x": -0.02}), (" %", {" %": -0.1}), (" 2", {" 2": -0.1}),
              (" ==", {" ==": -0.2, " !=": -2.0}), (" 0", {" 0": math.log(0.5), " 1": math.log(0.05), " 2": -5.0}),
              (":", {":": -0.01})]
    assert math.isclose(departure_margin("    if x % 2 == 1:", tokens), math.log(10))
    # Alternatives that keep to the line are summed, whatever their spacing or split.
    tokens[5] = (" 0", {" 0": math.log(0.5), " 1": math.log(0.05), "1": math.log(0.05)})
    assert math.isclose(departure_margin("if x % 2 == 1:", tokens), math.log(5))
    # The line as written is not among the listed alternatives: at most the least listed one's probability.
    tokens[5] = (" 0", {" 0": math.log(0.5), " 3": math.log(0.1), " 4": math.log(0.02)})
    assert math.isclose(departure_margin("if x % 2 == 1:", tokens), math.log(25))
    # Ending the line early departs at the newline the endpoint streams last (its text is not shown).
    ending = [("return", {"return": -0.1}), (" n", {" n": -0.1}), ("\n", {"\n": math.log(0.6), " +": math.log(0.2)})]
    assert math.isclose(departure_margin("return n + 1", ending), math.log(3))
    # Another spacing is not another line; no log probabilities, no margin.
    assert departure_margin("return n+1", [("return", {"return": -0.1}), (" n", {" n": -0.1}), (" +", {" +": -0.1}),
                                           (" 1", {" 1": -0.1}), ("\n", {"\n": -0.1})]) is None
    assert departure_margin("if x % 2 == 1:", [("if", {}), (" y", {})]) is None


def test_the_study_reports_what_each_threshold_would_offer():
    from bench.edit_quality.line_scan_study import report

    rows = [{"set": "quixbugs", "task": "a", "rank": 0, "margin": 0.5, "fixed": False},
            {"set": "quixbugs", "task": "a", "rank": 1, "margin": 6.0, "fixed": True},
            {"set": "quixbugs", "task": "b", "rank": 0, "margin": 1.2, "fixed": False},
            {"set": "quixbugs", "task": "b", "rank": -1, "candidates": 1}]
    table = report({"model": "m", "rows": rows})
    assert "| quixbugs | none | 2 | 0 | 2 |" in table  # ungated: each task's first candidate
    assert "| quixbugs | 2.30 | 1 | 1 | 0 |" in table  # gated: a's second, b nothing
    assert "with and without" not in table  # a study from before swaps were slips


def test_the_study_splits_the_offers_the_swapped_operands_make():
    from bench.edit_quality.line_scan_study import reordered, report

    assert reordered("return gcd(a % b, b)", "return gcd(b, a % b)") and reordered("if p[j] < p[i]:", "if p[i] < p[j]:")
    assert not reordered("x = a + b", "x = a + b") and not reordered("x = a + b", "x = a + b + 1")

    rows = [{"set": "qb", "task": "a", "rank": 0, "margin": 4.0, "fixed": True, "reordered": True},
            {"set": "qb", "task": "a", "rank": 1, "margin": 6.0, "fixed": False, "reordered": False},
            {"set": "qb", "task": "b", "rank": 0, "margin": 3.0, "fixed": False, "reordered": True},
            {"set": "qb", "task": "c", "rank": 0, "margin": 3.0, "fixed": True, "reordered": False}]
    table = report({"model": "m", "rows": rows})
    # with swaps: a (fixed), b (wrong), c (fixed); without: a's second (wrong), c; a and b differ
    assert "| qb | with swaps | 3 | 2 | 1 | 1 / 1 / 0 / 1 |" in table
    assert "| qb | without swaps | 2 | 1 | 1 |  |" in table


def test_the_rewrite_study_weighs_each_change_where_it_parts_from_the_code():
    """The rewrite study's margin: at the token where the rewrite's code first parts from each changed
    line, the chosen token against the listed ones that keep to the code as written (the answer's
    fences and prose are not changes); the least sure change counts."""
    from bench.edit_quality.rewrite_study import rewrite_margin

    original = "def f(a, b):\n    x = a - b\n    return a < b\n"
    code = "def f(a, b):\n    x = a + b\n    return a <= b\n"
    answer = "```python\n" + code + "```"
    pieces = ["```", "python", "\n", "def", " f", "(a", ",", " b", "):\n", "   ", " x", " =", " a", " +", " b", "\n",
              "   ", " return", " a", " <=", " b", "\n", "```"]
    tops = [{p: -0.01} for p in pieces]
    tops[13] = {" +": -0.1, " -": -3.1}  # `+` over the `-` written: 3 nats
    tops[19] = {" <=": -0.5, " <": -1.2, " >": -3.0}  # `<=` over the `<` written: 0.7 nats
    assert math.isclose(rewrite_margin(original, answer, code, list(zip(pieces, tops))), 0.7)
    tops[19] = {" <=": -0.1, " >": -3.0}  # `<` not listed: at most the least listed one's (a lower bound)
    assert math.isclose(rewrite_margin(original, answer, code, list(zip(pieces, tops))), 2.9)
    assert rewrite_margin(original, answer, code, []) is None  # no log probabilities
    assert rewrite_margin(original, answer + "!", code, list(zip(pieces, tops))) is None  # tokens do not spell it


def test_the_scan_asks_again_for_the_token_where_the_line_parts_from_the_one_written():
    """The line is asked for without log probabilities (listing them costs llama-cpp-python ~0.1 s a
    token); only the departing token is asked for again with them, the answer so far written after
    the middle marker, and no stop sequence (an answer that ends the line early departs at its end)."""
    import asyncio

    from kestrel.edits.line_scan import weigh
    from kestrel.providers.base import CompletionPrompt

    class Model:
        def __init__(self, alternatives):
            self.alternatives, self.asked = alternatives, []

        async def complete(self, prompt, stats):
            self.asked.append(prompt)
            chosen = next(iter(self.alternatives))  # the first listed is the one written
            stats.tokens.append((chosen, self.alternatives))
            yield chosen

    prompt = CompletionPrompt(prefix="def f(n):\n    ", suffix="\n", language="python", path="a.py", stop=("\n",))
    model = Model({" -": math.log(0.9), " +": math.log(0.09)})
    margin = asyncio.run(weigh(model, prompt, "    return n + 1", ["return", " n", " -", " 1"]))
    assert math.isclose(margin, math.log(10))
    (asked,) = model.asked
    assert (asked.answered, asked.max_tokens, asked.top_logprobs, asked.stop) == ("return n", 1, 5, ())
    # The answer stopped where the line goes on: its end is weighed against the ` +` written.
    model = Model({"\n": math.log(0.5), " +": math.log(0.25)})
    margin = asyncio.run(weigh(model, prompt, "    return n + 1", ["return", " n"]))
    assert math.isclose(margin, math.log(2)) and model.asked[0].answered == "return n"
    # The same line (spacing aside): nothing to weigh, nothing asked.
    model = Model({"x": 0.0})
    assert asyncio.run(weigh(model, prompt, "    return n+1", ["return", " n", " +", " 1"])) is None and not model.asked


def test_the_structural_scan_reads_a_line_left_out_and_a_statement_missing():
    """With `structural`, an answer that writes the next line in a line's place reads as that line
    left out, and an answer that writes new lines of known names and then the line itself reads as a
    statement missing before it; both come after every slip, and only when asked for."""
    import asyncio

    from kestrel.edits.line_scan import candidates

    # Line 4 (`n += 1`) is excess; `x = min(x, cap)` is missing before line 3 in the second function.
    excess = "def f(xs):\n    n = 0\n    for x in xs:\n        n += x\n        n += 1\n    return n\n"
    missing = ("def g(xs, cap):\n    out = []\n    for x in xs:\n        out.append(x)\n    return out\n"
               "def h(x, cap):\n    return min(x, cap)\n")

    class Model:
        """Per asked line (counted from the region's start), what it writes; a continuation after
        the first line (`answered`) gets `then`."""
        kind, model, connection_state = "scripted", "scripted", "ready"

        def __init__(self, answers, then=None):
            self.answers, self.then, self.asked = answers, then or {}, []

        async def complete(self, prompt, stats):
            line = prompt.prefix.count("\n")
            self.asked.append((line, prompt.answered))
            if prompt.answered:
                yield self.then.get(line, "")
            else:
                yield self.answers[line] + "\n"

    same = {1: "n = 0", 2: "for x in xs:", 3: "n += x", 5: "return n"}
    found = asyncio.run(candidates(excess, 0, len(excess) - 1, Model({**same, 4: "return n"}), "python", "a.py",
                                   lambda region: True, structural=True))
    assert [(c.kind, c.line) for c in found] == [("delete", 4)]
    assert found[0].apply(excess[:-1]) + "\n" == excess.replace("        n += 1\n", "")
    # Not asked for: the same answers offer nothing (`return n` for `n += 1` is no slip).
    assert asyncio.run(candidates(excess, 0, len(excess) - 1, Model({**same, 4: "return n"}), "python", "a.py",
                                  lambda region: True)) == []

    end = missing.index("def h")
    same = {1: "out = []", 2: "for x in xs:", 3: "out.append(x)", 4: "return out"}
    model = Model({**same, 3: "x = min(x, cap)"}, then={3: "        out.append(x)\n    return out"})
    found = asyncio.run(candidates(missing, 0, end - 1, model, "python", "a.py", lambda region: True, structural=True))
    assert [(c.kind, c.line, c.inserted) for c in found] == [("insert", 3, ("        x = min(x, cap)",))]
    assert found[0].apply(missing[:end - 1]) == missing[:end - 1].replace(
        "        out.append(x)", "        x = min(x, cap)\n        out.append(x)")
    assert (3, "x = min(x, cap)\n") in model.asked  # the continuation is asked after the model's own line
    # The model goes on with another line than the one written: not a missing statement.
    model = Model({**same, 3: "x = min(x, cap)"}, then={3: "        out.append(cap)\n"})
    assert asyncio.run(candidates(missing, 0, end - 1, model, "python", "a.py", lambda r: True, structural=True)) == []
    # A new line with a name the code does not have is a guess, not a missing statement: not even continued.
    model = Model({**same, 3: "x = clamp(x, cap)"}, then={3: "        out.append(x)\n"})
    assert asyncio.run(candidates(missing, 0, end - 1, model, "python", "a.py", lambda r: True, structural=True)) == []
    assert all(not answered for _, answered in model.asked)
    # A slip anywhere comes first.
    model = Model({**same, 3: "x = min(x, cap)", 4: "return xs"}, then={3: "        out.append(x)\n"})
    found = asyncio.run(candidates(missing, 0, end - 1, model, "python", "a.py", lambda r: True, structural=True))
    assert [c.kind for c in found] == ["slip", "insert"]
