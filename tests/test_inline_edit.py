"""Inline edits: target block, minimal edits, rebasing on concurrent typing, faults, steering."""

from __future__ import annotations

import asyncio

import pytest

from conftest import change_doc, kestrel, mock_options, open_doc, wait_for
from kestrel.edits.inline_edit import EditRefused, clean_rewrite, enclosing_block, minimal_edits, rebase, target_for

URI = "file:///work/edit.py"
SOURCE = (
    "import math\n"
    "\n"
    "\n"
    "def area(r):\n"
    "    # circle\n"
    "    return 3.14 * r * r\n"
    "\n"
    "\n"
    "def other():\n"
    "    return 1\n"
)
REWRITE = "def area(r):\n    # circle\n    return math.pi * r ** 2"


def apply(text: str, edits) -> str:
    """Apply LSP edits (all against the same text) from the end backwards."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def off(p):
        return offsets[p["line"]] + p["character"]

    for e in sorted(edits, key=lambda e: off(e["range"]["start"]), reverse=True):
        text = text[: off(e["range"]["start"])] + e["newText"] + text[off(e["range"]["end"]) :]
    return text


def as_edits(result) -> list[dict]:
    return [{"range": {"start": e.range.start._asdict(), "end": e.range.end._asdict()}, "newText": e.newText}
            for e in result.edits]


# -- pure parts -------------------------------------------------------------------------
def test_enclosing_block_and_target():
    assert enclosing_block(SOURCE, 5) == (3, 5)
    assert enclosing_block(SOURCE, 9) == (8, 9)
    t = target_for(SOURCE, 4, 2, 4, 2)
    assert t.text == "def area(r):\n    # circle\n    return 3.14 * r * r"
    assert target_for(SOURCE, 8, 0, 10, 0).text == "def other():\n    return 1"


def test_minimal_edits_touch_only_changed_characters():
    old = "a = 1\nb = 2\nc = 3"
    edits = minimal_edits(old, "a = 1\nb = 20\nc = 3")
    assert edits == [(11, 11, "0")]  # just the inserted digit
    assert minimal_edits(old, old) == []


def test_clean_rewrite_extracts_code_from_prose_and_fences():
    answer = "Here is the updated code:\n```python\nx = 2\n```\nHope it helps!"
    assert clean_rewrite(answer, "x = 1") == "x = 2"


def test_the_code_after_the_region_written_back_with_other_spacing_is_dropped():
    from kestrel.edits.inline_edit import Target, region_rewrite

    text = 'def f(n):\n    return n - 1\n\n\n"""\nF\n\n\nInput: n\n"""\n'
    target = Target(0, len("def f(n):\n    return n - 1"), "def f(n):\n    return n - 1")
    # the model answers with the module docstring below the function again, one blank line short
    answer = '```python\ndef f(n):\n    return n + 1\n\n"""\nF\n\nInput: n\n"""\n```'
    assert region_rewrite(text, target, answer) == "def f(n):\n    return n + 1"
    # indented lines are the region's own body, even when what follows repeats them with other spacing
    same = "def g():\n    x = 1\n    return x"
    assert region_rewrite(same + "\n\n    x = 1\n\n    return x\n", Target(0, len(same), same), same) == same


def test_rebase_follows_the_region_or_refuses():
    t = target_for(SOURCE, 5, 0, 5, 0)
    assert rebase("# new line\n" + SOURCE, t) == t.start + len("# new line\n")
    with pytest.raises(EditRefused):
        rebase(SOURCE.replace("3.14", "3.1415"), t)


# -- through LSP --------------------------------------------------------------------------
async def test_edit_enclosing_function_returns_minimal_edits(mock):
    mock.configure(text=f"Sure! Here you go:\n```python\n{REWRITE}\n```\n")
    async with kestrel(mock_options(mock)) as client:
        deltas: list[str] = []
        client.feature("kestrel/editDelta")(lambda p: deltas.append(p.delta))
        open_doc(client, URI, SOURCE)
        result = await client.protocol.send_request_async("kestrel/edit", {
            "id": "e1", "uri": URI, "instruction": "use math.pi",
            "range": {"start": {"line": 5, "character": 4}, "end": {"line": 5, "character": 4}}})
        assert not getattr(result, "error", None)
        edits = as_edits(result)
        assert len(edits) == 1 and all(e["range"]["start"]["line"] == 5 for e in edits)  # only the changed line
        assert apply(SOURCE, edits) == SOURCE.replace("3.14 * r * r", "math.pi * r ** 2")
        await wait_for(lambda: "".join(deltas).startswith("Sure!"), what="streamed preview")


async def test_a_selection_too_long_for_a_small_models_window_is_refused_before_asking(mock):
    """With a small context window (`chat.contextTokens`, as the embedded model's 2,048), a rewrite of a
    selection that cannot fit its prompt and its answer is refused with the reason, and nothing is sent;
    one that fits goes to the model as before."""
    mock.configure(text=f"```python\n{REWRITE}\n```\n")
    long_doc = SOURCE + "".join(f"\n\ndef helper_{i}(value):\n    return value + {i}" for i in range(120)) + "\n"
    end = long_doc.count("\n")
    async with kestrel(mock_options(mock, chat={"contextTokens": 1000})) as client:
        open_doc(client, URI, long_doc)
        refused = await client.protocol.send_request_async("kestrel/edit", {
            "id": "big", "uri": URI, "instruction": "add type hints",
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": end, "character": 0}}})
        assert refused.error.startswith(f"the selection ({end} lines) is too long for the model")
        assert "reads 1,000 in all; select less" in refused.error
        assert not mock.stats()["requests"].get("/v1/chat/completions")  # (GET /v1/models: the connection warm-up)
        fits = await edit_area(client, "small", "use math.pi")
        assert not getattr(fits, "error", None) and as_edits(fits)


async def test_edit_rebases_when_the_user_types_above(mock):
    mock.configure(text=REWRITE, tps=25)
    async with kestrel(mock_options(mock)) as client:
        deltas: list[str] = []
        client.feature("kestrel/editDelta")(lambda p: deltas.append(p.delta))
        open_doc(client, URI, SOURCE)
        pending = asyncio.ensure_future(client.protocol.send_request_async("kestrel/edit", {
            "id": "e2", "uri": URI, "instruction": "use math.pi",
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}}))
        await wait_for(lambda: deltas, what="the stream to start")
        typed = "import os\n" + SOURCE
        change_doc(client, URI, typed, 2)
        result = await pending
        assert result.version == 2
        assert apply(typed, as_edits(result)) == typed.replace("3.14 * r * r", "math.pi * r ** 2")


async def test_edit_refused_when_the_target_changes(mock):
    mock.configure(text=REWRITE, tps=25)
    async with kestrel(mock_options(mock)) as client:
        deltas: list[str] = []
        client.feature("kestrel/editDelta")(lambda p: deltas.append(p.delta))
        open_doc(client, URI, SOURCE)
        pending = asyncio.ensure_future(client.protocol.send_request_async("kestrel/edit", {
            "id": "e3", "uri": URI, "instruction": "use math.pi",
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}}))
        await wait_for(lambda: deltas, what="the stream to start")
        change_doc(client, URI, SOURCE.replace("# circle", "# a circle"), 2)
        result = await pending
        assert "changed while the edit was streaming" in result.error and not getattr(result, "edits", None)
        await wait_for(lambda: mock.stats()["streams_cancelled"] >= 1, what="the stream to stop")


async def test_stream_dying_mid_edit_changes_nothing(mock):
    async with kestrel(mock_options(mock, maxRetries=0)) as client:
        open_doc(client, URI, SOURCE)
        mock.configure(fault="drop", fault_after=3, text=REWRITE)
        result = await client.protocol.send_request_async("kestrel/edit", {
            "id": "e4", "uri": URI, "instruction": "x",
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}})
        assert "the document was not changed" in result.error and not getattr(result, "edits", None)


async def test_edit_can_be_steered_while_it_streams(mock):
    steered = "def area(r):\n    # circle\n    return math.pi * r * r"
    mock.configure(text=REWRITE, tps=25, rules=[{"match": "keep r * r", "text": steered}])
    async with kestrel(mock_options(mock)) as client:
        deltas: list[str] = []
        client.feature("kestrel/editDelta")(lambda p: deltas.append(p.delta))
        open_doc(client, URI, SOURCE)
        pending = asyncio.ensure_future(client.protocol.send_request_async("kestrel/edit", {
            "id": "e5", "uri": URI, "instruction": "use math.pi",
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}}))
        await wait_for(lambda: len("".join(deltas)) > 5, what="the stream to start")
        ack = await client.protocol.send_request_async("kestrel/steer", {"id": "e5", "text": "keep r * r"})
        assert ack.accepted
        result = await pending
        assert result.steers and result.newText == steered  # the answer after the steer, not glued to the partial one


async def test_predicted_outputs_are_sent_where_supported(mock):
    mock.configure(text=REWRITE)
    async with kestrel(mock_options(mock, predictedOutputs=True)) as client:
        open_doc(client, URI, SOURCE)
        await client.protocol.send_request_async("kestrel/edit", {
            "id": "e6", "uri": URI, "instruction": "use math.pi",
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}})
        body = [e["body"] for e in mock.stats()["request_log"] if e["endpoint"].endswith("/chat/completions")][-1]
        assert body["prediction"] == {"type": "content", "content": "def area(r):\n    # circle\n    return 3.14 * r * r"}


RENAMED = "def scale(n):\n    total = count * 2\n    return count + total\n"


async def test_next_edit_suggestion_updates_the_uses_of_a_renamed_parameter(mock):
    mock.configure(text="def scale(n):\n    total = n * 2\n    return n + total")
    uri = "file:///work/nes.py"
    async with kestrel(mock_options(mock)) as off:  # off by default: no model call
        open_doc(off, uri, RENAMED.replace("(n)", "(count)"))
        change_doc(off, uri, RENAMED, 2)
        assert await off.protocol.send_request_async("kestrel/nextEdit", {"uri": uri, "position": {"line": 0, "character": 11}}) is None
        assert "/v1/chat/completions" not in mock.stats()["requests"]
    async with kestrel(mock_options(mock, nextEdit=True)) as client:
        open_doc(client, uri, RENAMED.replace("(n)", "(count)"))
        change_doc(client, uri, RENAMED, 2)
        result = await client.protocol.send_request_async("kestrel/nextEdit", {"uri": uri, "position": {"line": 0, "character": 11}})
        edits = [{"range": {"start": e.range.start._asdict(), "end": e.range.end._asdict()}, "newText": e.newText} for e in result.edits]
        assert apply(RENAMED, edits) == RENAMED.replace("count", "n")
        assert all(e["range"]["start"]["line"] in (1, 2) for e in edits)  # only the uses, nowhere else
        prompt = [e["body"] for e in mock.stats()["request_log"] if e["endpoint"].endswith("/chat/completions")][-1]
        assert "-def scale(count):" in prompt["messages"][-1]["content"]  # the recent edit, as a diff


async def edit_area(client, edit_id: str, instruction: str):
    """`kestrel/edit` with an empty selection inside `area` (the enclosing function is the target)."""
    return await client.protocol.send_request_async("kestrel/edit", {
        "id": edit_id, "uri": URI, "instruction": instruction,
        "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}})


async def test_a_rewrite_that_does_not_parse_is_retried_once_then_refused(mock):
    mock.configure(text="def area(r):\n    # circle\n    return (math.pi * r ** 2\n")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        result = await edit_area(client, "e9", "use math.pi")
        assert "does not parse" in result.error and "not offered" in result.error and not getattr(result, "edits", None)
        assert mock.stats()["requests"].get("/v1/chat/completions") == 2


async def test_an_unchanged_answer_is_asked_once_more_with_sampling_unless_it_answers_a_bug_report(mock):
    """An instruction asks for a change and the greedy answer is the region unchanged: a sampled second
    reading is asked for. Asked to fix a bug, the unchanged answer is the answer ("nothing to change"),
    not a sampled guess (on 61 real bugs: 22 such offers, 1 fix)."""
    unchanged = "def area(r):\n    # circle\n    return 3.14 * r * r"
    mock.configure(text=unchanged)
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        result = await edit_area(client, "e10", "use math.pi")
        assert mock.stats()["requests"].get("/v1/chat/completions") == 2
        assert mock.stats()["last_request"].get("temperature") is None  # the second reading is sampled
        assert not getattr(result, "error", None) and not result.edits  # still nothing to change: said as such
        result = await edit_area(client, "e14", "Fix the bug: area(2) is wrong")
        assert mock.stats()["requests"].get("/v1/chat/completions") == 3  # one greedy reading, no second
        assert mock.stats()["last_request"].get("temperature") == 0
        assert not getattr(result, "error", None) and not result.edits


# The line-by-line reading of `area` with `+` written for `*`: the line, then its departing token asked
# again (that rule's prompt holds the first's too).
AREA_SLIP = [{"match": "<|fim_middle|>return 3.14 * r ", "text": "* r\n"},
             {"match": "# circle\n    <|fim_suffix|>", "text": "return 3.14 * r * r\n"}]


async def test_a_repair_is_found_by_re_reading_each_line(mock):
    """Asked line by line (fill-in-the-middle), the model writes the one line differently by a
    slip: that one-token change is offered, since the whole rewrite asked after it comes back
    unchanged (no change of its own)."""
    buggy = SOURCE.replace("3.14 * r * r", "3.14 * r + r")
    region = "def area(r):\n    # circle\n    return 3.14 * r + r"
    mock.configure(text=region, rules=AREA_SLIP)
    async with kestrel(mock_options(mock, provider="fim", fimTemplate="qwen")) as client:
        open_doc(client, URI, buggy)
        result = await edit_area(client, "e11", "Fix the bug: area(2) is 8.28")
        assert apply(buggy, as_edits(result)) == SOURCE
        assert [e.newText for e in result.edits] == ["*"]
        # The one line of code in the region, then its departing token again, with its alternatives
        # (to weigh `*` against the `+` written); the line itself was asked for without them.
        assert mock.stats()["requests"].get("/v1/completions") == 2
        completions = [r["body"] for r in mock.stats()["request_log"] if r["endpoint"] == "/v1/completions"]
        assert completions[-1]["logprobs"] == 5 and completions[-1]["max_tokens"] == 1
        assert completions[-1]["prompt"].endswith("<|fim_middle|>return 3.14 * r ")
        # The whole rewrite, asked after the slip was found, came back unchanged: the slip is offered.
        assert mock.stats()["requests"].get("/v1/chat/completions") == 1
        assert result.madeBy == "model:line-scan"
        # An instruction that asks for something else is not a repair: nothing is re-read.
        result = await edit_area(client, "e12", "add type hints")
        assert not result.edits and mock.stats()["requests"].get("/v1/completions") == 2


async def test_a_rewrite_with_a_change_of_its_own_is_offered_over_the_slip(mock):
    """The line-by-line reading finds a slip it is sure of (`+` for `*` on the return line), but the
    whole rewrite, asked after it with the user's words, changes the function another way: the two
    readings disagree, and the rewrite (the one that read the whole function) is offered."""
    buggy = SOURCE.replace("3.14 * r * r", "3.14 * r + r")
    rewrite = "def area(r):\n    # circle\n    return 3.14 * r ** 2"
    mock.configure(text=rewrite, rules=AREA_SLIP)
    async with kestrel(mock_options(mock, provider="fim", fimTemplate="qwen")) as client:
        open_doc(client, URI, buggy)
        result = await edit_area(client, "e14", "Fix the bug: area(2) is 8.28")
        assert mock.stats()["requests"].get("/v1/completions") == 2  # the line and its departing token
        assert mock.stats()["requests"].get("/v1/chat/completions") == 1
        assert apply(buggy, as_edits(result)) == buggy.replace("3.14 * r + r", "3.14 * r ** 2")
        assert result.madeBy == "model:rewrite"
        # The rewrite writing the slip's program (another layout) is the slip: offered as the scan's.
        mock.configure(text="def area(r):\n    # circle\n    return 3.14*r*r")
        result = await edit_area(client, "e15", "Fix the bug: area(2) is 8.28")
        assert apply(buggy, as_edits(result)) == SOURCE and result.madeBy == "model:line-scan"


async def test_a_slip_the_model_is_unsure_of_goes_to_a_whole_rewrite(mock):
    """The line-by-line reading writes `*`, but it found `+` (the line as written) nearly as likely:
    no slip is offered from that reading (it asks for log probabilities), and the instruction goes to
    the model as a rewrite, whose answer is what the user gets."""
    buggy = SOURCE.replace("3.14 * r * r", "3.14 * r + r")
    rewrite = "def area(r):\n    # circle\n    return 3.14 * (r + r)"
    mock.configure(text=rewrite, rules=[{"match": "<|fim_middle|>return 3.14 * r ", "text": "* r\n",
                                         "alternatives": {"+": -1.0}},
                                        {"match": "# circle\n    <|fim_suffix|>", "text": "return 3.14 * r * r\n"}])
    async with kestrel(mock_options(mock, provider="fim", fimTemplate="qwen")) as client:
        open_doc(client, URI, buggy)
        result = await edit_area(client, "e13", "Fix the bug: area(2) is 8.28")
        assert mock.stats()["requests"].get("/v1/completions") == 2
        assert mock.stats()["requests"].get("/v1/chat/completions") == 1
        assert apply(buggy, as_edits(result)) == buggy.replace("3.14 * r + r", "3.14 * (r + r)")
        assert result.madeBy == "model:rewrite"


async def test_a_slip_that_leaves_the_program_as_it_was_is_not_a_repair(mock):
    """The line-by-line reading writes `if` for an `elif` after a `return`: the same program (the
    model's taste, not a fix), so no slip is offered and the rewrite, which fixes the bug, is."""
    fixed = "import math\n\n\ndef sign(x):\n    # sign\n    if x > 0:\n        return 1\n    elif x < 0:\n        return -1\n    return 0\n"
    buggy = fixed.replace("return -1", "return 1")
    mock.configure(text=fixed.split("\n\n\n")[1].rstrip("\n"), rules=[{"match": "return 1\n    <|fim_suffix|>\n        return 1",
                                                  "text": "if x < 0:\n"}])
    async with kestrel(mock_options(mock, provider="fim", fimTemplate="qwen")) as client:
        open_doc(client, URI, buggy)
        result = await edit_area(client, "e19", "Fix the bug: sign(-2) is 1")
        assert apply(buggy, as_edits(result)) == fixed
        assert result.madeBy == "model:rewrite"
        assert mock.stats()["requests"].get("/v1/chat/completions") == 1


async def test_a_repair_keeps_the_docstring_it_was_given(mock):
    """Asked to fix a bug, the model also rewrote the docstring's example to match what the code
    does: the example the user wrote comes back, the code change stays."""
    doc = SOURCE.replace("    # circle\n", '    """Area of a circle.\n    >>> area(1)\n    3.14\n    """\n')
    buggy = doc.replace("3.14 * r * r", "3.14 * r + r")
    answer = 'def area(r):\n    """Area of a circle.\n    >>> area(1)\n    4.14\n    """\n    return 3.14 * r * r'
    mock.configure(text=answer)
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, buggy)
        result = await edit_area(client, "e15", "Fix the bug: area(2) is 8.28")
        assert apply(buggy, as_edits(result)) == doc
        # Only the docstring changed: nothing to offer.
        mock.configure(text=answer.replace("3.14 * r * r", "3.14 * r + r"))
        result = await edit_area(client, "e16", "Fix the bug: area(2) is 8.28")
        assert not getattr(result, "error", None) and not result.edits


async def test_a_repair_leaves_out_the_statements_the_model_wrote_to_try_it(mock):
    """Asked to fix a bug with the failing assertion pasted, the model fixed the function and wrote
    the assertion after it: the fix is offered, the echoed assertion is not (it was never in the
    file); an instruction that is not a repair keeps what it asked for."""
    buggy = SOURCE.replace("3.14 * r * r", "3.14 * r + r")
    answer = "def area(r):\n    # circle\n    return 3.14 * r * r\n\nassert area(2) == 12.56\nprint(area(1))"
    mock.configure(text=answer)
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, buggy)
        result = await edit_area(client, "e17", "Fix the bug. The tests fail: assert area(2) == 12.56")
        assert apply(buggy, as_edits(result)) == SOURCE
        result = await edit_area(client, "e18", "add a usage example after it")
        assert "assert area(2) == 12.56" in apply(buggy, as_edits(result))


def test_same_code_ignores_layout_and_where_an_import_sits_but_not_what_is_imported():
    from kestrel.edits.repair_checks import dropped_definitions, same_code

    inner = "def f(x):\n    from math import ceil\n    return ceil(x)\n"
    assert same_code(inner, "from math import ceil\n\n\ndef f(x):\n\n    return ceil( x )\n", "python")
    assert not same_code(inner, "from math import floor\n\n\ndef f(x):\n    return ceil(x)\n", "python")
    assert not same_code(inner, "def f(x):\n    from math import ceil\n    return ceil(x) + 1\n", "python")
    assert not same_code(inner, inner.replace("return", "if x:\n        return"), "python")
    assert not same_code("f(\n", "f()\n", "python") and not same_code(inner, inner, "typescript")
    assert dropped_definitions(inner + "\n\nclass C:\n    pass\n", "def g(x):\n    return x\n", "python") == ["f", "C"]


def test_same_code_reads_respellings_of_one_program_as_the_same_code():
    """`elif` after `return` runs exactly as `if` does (ruff's RET505), and `0.5 * e` as `e * 0.5`: a
    "fix" that only respells the code repairs nothing. After a branch that can fall through, or with
    two expressions swapped (their order of evaluation), it changes what runs."""
    from kestrel.edits.repair_checks import same_code

    exits = "def f(a, b):\n    if not a:\n        return b\n    elif a[0] == b[0]:\n        return 1\n    else:\n        return 2\n"
    assert same_code(exits, exits.replace("    elif", "    if"), "python")
    assert same_code(exits, "def f(a, b):\n    if not a:\n        return b\n    if a[0] == b[0]:\n        return 1\n    return 2\n", "python")
    loop = "def g(xs):\n    for x in xs:\n        if x:\n            continue\n        elif x is None:\n            break\n"
    assert same_code(loop, loop.replace("elif", "if"), "python")
    falls = exits.replace("return b", "b = b + 1")
    assert not same_code(falls, falls.replace("    elif", "    if"), "python")
    assert not same_code(exits, exits.replace("    elif a[0] == b[0]", "    elif a[0] != b[0]"), "python")
    newton = "def step(a, x):\n    return 0.5 * (a + x / a)\n"
    assert same_code(newton, newton.replace("0.5 * (a + x / a)", "(a + x / a) * 0.5"), "python")
    assert same_code(newton, newton.replace("0.5 * (a + x / a)", "0.5 * (x / a + a)"), "python") is False
    assert not same_code(newton, newton.replace("0.5 * (a + x / a)", "(a + x / a) / 2"), "python")


def test_same_code_reads_a_default_range_start_a_nested_if_and_a_ternary_return_as_respellings():
    """Three more spellings of one program that were offered as fixes (held-out HumanEvalFix, both
    models): `range(0, n)` for `range(n)` (unless the code binds `range`), an `if` that holds only an
    `if` for one `if ... and ...` (ruff's SIM102; neither has an `else`), `return a if c else b` for an
    `if` and two returns. One token more or less in any of them is a change."""
    from kestrel.edits.repair_checks import same_code

    loop = "def f(word):\n    for i in range(0, len(word)):\n        if word[i] in 'aeiou':\n            return i\n"
    assert same_code(loop, loop.replace("range(0, len(word))", "range(len(word))"), "python")
    assert not same_code(loop, loop.replace("range(0, len(word))", "range(1, len(word))"), "python")
    assert not same_code(loop, loop.replace("range(0, len(word))", "range(0, len(word), 2)"), "python")
    shadowed = "range = reversed\n" + loop
    assert not same_code(shadowed, shadowed.replace("range(0, len(word))", "range(len(word))"), "python")
    nested = "def g(w, i, v):\n    if w[i] in v:\n        if w[i + 1] not in v and w[i - 1] not in v:\n            return w[i]\n    return ''\n"
    flat = "def g(w, i, v):\n    if w[i] in v and w[i + 1] not in v and w[i - 1] not in v:\n        return w[i]\n    return ''\n"
    assert same_code(nested, flat, "python")
    assert not same_code(nested.replace("    return ''", "    else:\n        return 'x'\n    return ''"), flat, "python")
    assert not same_code(nested, flat.replace(" and w[i - 1]", " or w[i - 1]"), "python")
    ternary = "def h(xs):\n    xs = sorted(xs)\n    return None if len(xs) < 2 else xs[1]\n"
    two_returns = "def h(xs):\n    xs = sorted(xs)\n    if len(xs) < 2:\n        return None\n    return xs[1]\n"
    assert same_code(ternary, two_returns, "python")
    assert same_code(ternary, two_returns.replace("    return xs[1]", "    else:\n        return xs[1]"), "python")
    assert not same_code(ternary, two_returns.replace("< 2", "<= 2"), "python")


async def test_a_repair_that_adds_only_a_test_or_layout_or_loses_the_function_is_not_offered(mock):
    """Rewrites of a bug report that repair nothing are not offered as fixes: one that adds only a test
    function it wrote to try the code, one that changes only the layout (both "nothing to change"), one
    that no longer defines the function (refused, with the reason). Asked for a layout change, the same
    answer is the edit."""
    buggy = SOURCE.replace("3.14 * r * r", "3.14 * r + r")
    function = "def area(r):\n    # circle\n    return 3.14 * r + r"
    answers = {
        "e30": function + "\n\n\ndef test_area():\n    assert area(2) == 12.56",
        "e31": "def area( r ):\n\n    # circle\n    return (3.14 * r\n            + r)",
        "e32": "def circle_area(r):\n    # circle\n    return 3.14 * r * r",
    }
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, buggy)
        for edit_id in ("e30", "e31"):
            mock.configure(text=answers[edit_id])
            result = await edit_area(client, edit_id, "Fix the bug. The tests fail: assert area(2) == 12.56")
            assert not getattr(result, "error", None) and not result.edits, (edit_id, result)
        mock.configure(text=answers["e32"])
        result = await edit_area(client, "e32", "Fix the bug. The tests fail: assert area(2) == 12.56")
        assert not getattr(result, "edits", None) and "no longer defines area" in result.error
        mock.configure(text=answers["e31"])
        result = await edit_area(client, "e33", "put the expression on two lines")
        assert apply(buggy, as_edits(result)) != buggy


async def test_an_import_the_edit_adds_and_never_uses_is_taken_out_not_a_reason_to_refuse(mock):
    """The model adds `import random` it never uses: the edit is offered without that import (it was
    refused for it); an import the file already had and does not use is the user's, and stays."""
    buggy = "import os\n\n\n" + SOURCE.replace("3.14 * r * r", "3.14 * r + r")
    mock.configure(text="import random\nfrom math import pi, tau\n\ndef area(r):\n    # circle\n    return pi * r * r")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, buggy)
        result = await client.protocol.send_request_async("kestrel/edit", {
            "id": "e40", "uri": URI, "instruction": "use math.pi",
            "range": {"start": {"line": 7, "character": 0}, "end": {"line": 7, "character": 0}}})
        after = apply(buggy, as_edits(result))
        assert "return pi * r * r" in after and "from math import pi\n" in after
        assert "random" not in after and "tau" not in after and after.startswith("import os\n")


async def test_an_answer_holding_one_of_two_selected_functions_is_merged_keeping_the_other(mock):
    """Two functions selected, "add type hints": the answer holds only the one it changed. Applied as
    the region, it would delete the other; it is merged instead (the other stays as it was). Asked to
    remove the one it leaves out, the same answer is the edit. A method answered at column 0 goes back
    into its class at the class's indentation."""
    two = "def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n"
    mock.configure(text="def double(x: int) -> int:\n    return 2 * x")
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 16}}
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, two)
        result = await client.protocol.send_request_async("kestrel/edit", {
            "id": "e41", "uri": URI, "instruction": "add type hints", "range": selection})
        assert apply(two, as_edits(result)) == two.replace("def double(x):", "def double(x: int) -> int:")
        result = await client.protocol.send_request_async("kestrel/edit", {
            "id": "e42", "uri": URI, "instruction": "remove triple and type double", "range": selection})
        assert "triple" not in apply(two, as_edits(result))
        shape = "class Shape:\n    def __init__(self, r):\n        self.r = r\n\n    def area(self):\n        return 3 * self.r\n"
        mock.configure(text="def area(self):\n    return 3.14 * self.r * self.r")
        open_doc(client, "file:///work/shape.py", shape)
        result = await client.protocol.send_request_async("kestrel/edit", {
            "id": "e43", "uri": "file:///work/shape.py", "instruction": "use pi r squared",
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 26}}})
        assert apply(shape, as_edits(result)) == shape.replace("3 * self.r\n", "3.14 * self.r * self.r\n")


async def test_a_chat_only_provider_is_not_asked_line_by_line(mock):
    """Re-reading costs one request per line: with a chat-only provider that would be a chat turn
    per line, so the repair goes to the model as one rewrite."""
    buggy = SOURCE.replace("3.14 * r * r", "3.14 * r + r")
    mock.configure(text="def area(r):\n    # circle\n    return 3.14 * r * r")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, buggy)
        result = await edit_area(client, "e13", "Fix the bug: area(2) is 8.28")
        assert apply(buggy, as_edits(result)) == SOURCE
        assert mock.stats()["requests"].get("/v1/chat/completions") == 1 and not mock.stats()["requests"].get("/v1/completions")


def test_a_method_answered_inside_its_class_header_again_keeps_only_the_method():
    from kestrel.edits.inline_edit import Target, region_rewrite

    head = "import math\n\n\nclass Probability:\n    def __init__(self, p):\n        self.p = p\n\n"
    method = "    def odds(self):\n        return self.p / (1 - self.p)"
    text = head + method + "\n"
    target = Target(len(head), len(head) + len(method), method)
    # the header alone, then the method (the lines between skipped): not a run of the lines above
    answer = "```python\nclass Probability:\n    def odds(self):\n        return self.p / (1.0 - self.p)\n```"
    assert region_rewrite(text, target, answer) == "    def odds(self):\n        return self.p / (1.0 - self.p)"
    # a line that is not in the file above is new code the instruction asked for: kept
    added = "```python\n    def log_odds(self):\n        return math.log(self.odds())\n\n" + method + "\n```"
    assert region_rewrite(text, target, added) == added[len("```python\n"):-len("\n```")]
    # a region at the left margin has no enclosing header to drop
    top = "def f():\n    return 1"
    assert region_rewrite("import os\n\n" + top + "\n", Target(11, 11 + len(top), top),
                          "```\nimport os\n\ndef f():\n    return 2\n```") == "def f():\n    return 2"


async def test_an_import_the_rewrite_needs_goes_to_the_import_block(mock):
    """The model writes the import first, then the function: the import joins the file's imports,
    the function changes in place, and the edit is one answer (one undo step in the editor)."""
    mock.configure(text="```python\nimport cmath\n\ndef area(r):\n    # circle\n    return cmath.pi * r * r\n```")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        result = await edit_area(client, "e-imp", "use cmath.pi")
        assert not getattr(result, "error", None)
        assert apply(SOURCE, as_edits(result)) == SOURCE.replace("import math\n", "import math\nimport cmath\n") \
            .replace("3.14 * r * r", "cmath.pi * r * r")


TS_URI = "file:///work/area.ts"
TS_SOURCE = "export function area(r: number): number {\n  return 3.14 * r * r;\n}\n"


@pytest.mark.parametrize("answer, offered", [
    ("export function area(r: number): number {\n  return Math.PI * r * r;\n}", True),
    ("export function area(r: number): number {\n  return (Math.PI * r * r;\n}", False),  # a `)` short
])
async def test_a_typescript_rewrite_that_breaks_the_syntax_is_refused(mock, answer, offered):
    """Other languages are checked with the tree-sitter grammar the completion guard uses: an edit
    that breaks a file that parsed is sent back once, then refused."""
    mock.configure(text=f"```ts\n{answer}\n```")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, TS_URI, TS_SOURCE, language="typescript")
        result = await client.protocol.send_request_async("kestrel/edit", {
            "id": "ts1", "uri": TS_URI, "instruction": "use Math.PI",
            "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 2}}})
        if offered:
            assert not getattr(result, "error", None)
            assert apply(TS_SOURCE, as_edits(result)) == TS_SOURCE.replace("3.14", "Math.PI")
        else:
            assert "does not parse" in result.error and not getattr(result, "edits", None)
            assert mock.stats()["requests"].get("/v1/chat/completions") == 2


async def test_a_standard_import_the_rewrite_forgot_is_added_at_the_head(mock):
    """The model uses `Dict` without importing it: ruff finds F821, a standard import provides the
    name, so the edit comes with that import instead of being refused."""
    mock.configure(text="```python\ndef area(r) -> Dict[str, float]:\n    # circle\n    return {'a': 3.14 * r * r}\n```")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        result = await edit_area(client, "e-dict", "return a dict")
        assert not getattr(result, "error", None), result.error
        after = apply(SOURCE, as_edits(result))
        assert after.startswith("import math\nfrom typing import Dict\n")
        assert "def area(r) -> Dict[str, float]:" in after and after.count("def area") == 1
