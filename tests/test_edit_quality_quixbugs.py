"""The real-bug edit eval's parts that need no model: the vendored QuixBugs data and its test
runs (the correct function passes, the buggy one fails, an endless loop is a failure and not a
hang), the failure text pasted into the instruction, how a raw chat answer is applied (its
function and imports, never echoed test lines), what counts as touching code outside the
target, and the paired statistics (McNemar's exact test, the margin's interval)."""

from __future__ import annotations

import asyncio

import pytest

from bench.edit_quality import paired, quixbugs, raw, scoring


@pytest.fixture(scope="module")
def tasks():
    made, skipped = quixbugs.all_tasks(["gcd", "hanoi", "breadth_first_search"])
    assert not skipped
    return {t.entry_point: t for t in made["inline-edit"]}


def test_the_vendored_set_is_whole_and_licensed():
    assert len(quixbugs.programs()) == 40
    assert "James Koppel" in (quixbugs.DATA / "LICENSE").read_text()
    for name in quixbugs.programs():
        assert quixbugs.function_lines(quixbugs.buggy_source(name), name) is not None, name
        assert quixbugs.reference_fix(name) is not None, name


def test_the_correct_function_passes_and_the_bug_fails(tasks):
    gcd = tasks["gcd"]
    assert gcd.counted and gcd.passing_before < gcd.counted  # some tests see the bug, some do not
    assert gcd.broken == quixbugs.buggy_source("gcd") and gcd.original != gcd.broken
    # the reference differs from the buggy file only inside the function
    first, last = gcd.target
    assert gcd.original.split("\n")[last + 1:] == gcd.broken.split("\n")[last + 1:]
    scorer = scoring.EditScorer()
    good = asyncio.run(scorer.verdict(gcd, gcd.original))
    assert good.fixed and not good.harm and good.result == "passed"
    bad = asyncio.run(scorer.verdict(gcd, gcd.broken))
    assert not bad.fixed and bad.result.startswith("failed:")


def test_the_instruction_carries_the_failure_as_pasted_without_run_to_run_noise(tasks):
    text = tasks["gcd"].instruction
    assert text.startswith("Fix the bug.\nFAILED test_gcd[")
    assert "RecursionError" in text and "input_data = [" in text
    bfs = tasks["breadth_first_search"].instruction
    assert "IndexError" in bfs and " at 0x" not in bfs  # object addresses differ from run to run


def test_an_endless_loop_fails_its_test_instead_of_hanging(monkeypatch):
    monkeypatch.setattr(quixbugs, "TEST_LIMIT_S", 0.5)
    run = quixbugs.run_tests("gcd", "def gcd(a, b):\n    while True:\n        pass\n", cap=30)
    assert run.tests and set(run.tests.values()) == {"failed"} and not run.capped
    assert "longer than 0.5 s" in next(iter(run.texts.values()))


def test_an_edit_that_breaks_a_passing_test_is_harm(tasks):
    gcd = tasks["gcd"]
    first, last = gcd.target
    lines = gcd.broken.split("\n")
    worse = "\n".join(lines[:first] + ["def gcd(a, b):", "    return -1"] + lines[last + 1:])
    v = asyncio.run(scoring.EditScorer().verdict(gcd, worse))
    assert not v.fixed and v.broke and v.harm and not v.outside


def test_a_raw_answer_is_applied_as_a_user_applies_it(tasks):
    hanoi = tasks["hanoi"]
    first, last = hanoi.target
    fixed_fn = "\n".join(hanoi.original.split("\n")[first:last + 1])
    block = (f"import math\nfrom typing import List\n\n\ndef helper(n):\n    return n\n\n\n{fixed_fn}\n\n\n"
             "assert hanoi(1, 1, 3) == [(1, 3)]\nprint(hanoi(2))\nif __name__ == '__main__':\n    hanoi(3)\n")
    doc, why = raw.apply_answer(hanoi, block)
    assert why is None
    assert "assert hanoi" not in doc and "print(hanoi" not in doc and "__main__" not in doc  # echoed lines stay out
    assert doc.startswith("import math\nfrom typing import List\n")  # imports go to the import block
    assert doc.index("def helper(") < doc.index("def hanoi(")  # a helper goes above the function
    assert doc.rstrip().endswith('"""')  # the module docstring after the function is untouched
    v = asyncio.run(scoring.EditScorer().verdict(hanoi, doc))
    assert v.fixed and not v.outside and not v.harm
    # no function of that name: nothing applied; a block that does not parse still gives its function
    assert raw.apply_answer(hanoi, "x = 1\n")[1] == "the answer has no function `hanoi`"
    doc2, why2 = raw.apply_answer(hanoi, fixed_fn + "\n\n>>> hanoi(1)\n")
    assert why2 is None and scoring.touched_outside(hanoi, doc2) is False


def test_code_outside_the_function_is_told_apart_from_imports_and_new_helpers(tasks):
    gcd = tasks["gcd"]
    first, last = gcd.target
    lines = gcd.broken.split("\n")
    changed_docstring = "\n".join(lines[: last + 1] + [ln.replace("Greatest", "Largest") for ln in lines[last + 1:]])
    assert scoring.touched_outside(gcd, changed_docstring)
    assert not scoring.touched_outside(gcd, "import math\n" + gcd.broken)
    helper = "\n".join(lines[:first] + ["def _mod(a, b):", "    return a % b", "", ""] + lines[first:])
    assert not scoring.touched_outside(gcd, helper)
    assert scoring.touched_outside(gcd, "\n".join(lines[:first] + ["x = 1"] + lines[first:]))  # top-level code
    inside = "\n".join(lines[:first] + ["def gcd(a, b):", "    if not b:", "        return a",
                                        "    return gcd(b, a % b)"] + lines[last + 1:])
    assert not scoring.touched_outside(gcd, inside)


def test_mcnemar_exact_and_the_margin_interval():
    assert paired.mcnemar_exact_p(8, 1) == pytest.approx(2 * 10 / 512)  # 2 * P(X <= 1), X ~ Bin(9, 1/2)
    assert paired.mcnemar_exact_p(3, 3) == 1.0 and paired.mcnemar_exact_p(0, 0) == 1.0
    lo, hi = paired.clopper_pearson(5, 10)
    assert lo == pytest.approx(0.1871, abs=1e-4) and hi == pytest.approx(0.8129, abs=1e-4)
    assert paired.clopper_pearson(0, 10)[0] == 0.0 and paired.clopper_pearson(0, 10)[1] == pytest.approx(0.3085, abs=1e-4)
    m = paired.paired_margin(8, 1, 30)
    assert m["margin"] == pytest.approx(7 / 30) and m["low"] > 0 and m["high"] < 9 / 30  # excludes 0: a real margin
    tie = paired.paired_margin(4, 4, 40)
    assert tie["margin"] == 0 and tie["low"] < 0 < tie["high"]


def test_humanevalfix_rows_become_tasks_the_tests_see():
    from bench.edit_quality import humanevalfix

    rows = humanevalfix.rows()
    assert len(rows) == 164 and "MIT" in (humanevalfix.DATA.parent / "LICENSE").read_text()
    by_id = {r["task_id"]: r for r in rows}
    _, made = humanevalfix._build(by_id["Python/0"])
    (task,) = made  # no diagnostic: an inline edit only
    assert task.set == "humanevalfix" and task.kind == "missing logic"
    assert task.instruction.startswith("Fix the bug. The tests fail: assert has_close_elements(")
    scorer = scoring.EditScorer()
    assert asyncio.run(scorer.verdict(task, task.original)).fixed
    assert not asyncio.run(scorer.verdict(task, task.broken)).fixed
    _, made = humanevalfix._build(by_id["Python/22"])  # the bug leaves a variable unused: ruff F841
    assert {t.family for t in made} == {"inline-edit", "quick-fix"}
    assert next(t for t in made if t.family == "quick-fix").diagnostic["code"] == "F841"
