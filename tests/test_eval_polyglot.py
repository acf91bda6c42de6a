"""The polyglot edit eval's harness (bench/polyglot): its data and its checks, without a model."""

from __future__ import annotations

import pytest

from bench.polyglot.__main__ import report
from bench.polyglot.data import exercises, run_tests
from bench.polyglot.systems import first_request, retry_request, whole_file

EXERCISES = exercises()


def test_the_34_python_exercises_are_there_with_their_files():
    assert len(EXERCISES) == 34
    for ex in EXERCISES:
        assert ex.instructions.strip() and ex.stub.strip() and ex.reference.strip()
        assert any(name.endswith("_test.py") for name in ex.test_files)


@pytest.mark.parametrize("name", ["affine-cipher", "paasio", "zipper"])
def test_the_tests_pass_on_the_reference_and_fail_on_the_stub(name):
    ex = next(e for e in EXERCISES if e.name == name)
    assert run_tests(ex, ex.reference).passed
    failed = run_tests(ex, ex.stub)
    assert not failed.passed and "failed" in failed.summary and len(failed.output.split("\n")) <= 50


def test_an_endless_solution_is_stopped():
    ex = next(e for e in EXERCISES if e.name == "affine-cipher")
    run = run_tests(ex, "def encode(plain_text, a, b):\n    while True:\n        pass\n\n\ndef decode(c, a, b):\n    pass\n",
                    timeout=5)
    assert not run.passed and run.summary == "timeout"


def test_the_whole_file_is_the_block_its_name_introduces():
    answer = ("Here is a helper:\n```python\nx = 1\n```\n\naffine_cipher.py\n```python\ndef encode(p, a, b):\n"
              "    return p\n```\nAnd an example:\n```python\nprint(encode('a', 1, 2))\n```\n")
    assert whole_file(answer, "affine_cipher.py") == "def encode(p, a, b):\n    return p\n"
    assert whole_file("```\nonly = 1\n```", "affine_cipher.py") == "only = 1\n"
    assert whole_file("no block here", "affine_cipher.py") is None


def test_both_systems_get_the_same_words():
    ex = EXERCISES[0]
    first = first_request(ex)
    assert first.startswith(ex.instructions) and ex.solution_file in first
    assert "E   AssertionError" in retry_request(ex, "E   AssertionError: None != 'x'")


def test_the_report_counts_both_tries_and_pairs_the_systems():
    ok, bad, malformed = ({"passed": True, "well_formed": True, "seconds": 3.0},
                          {"passed": False, "well_formed": True, "seconds": 3.0},
                          {"passed": False, "well_formed": False, "seconds": 3.0})

    def system(*tries):
        return {"passed_1": tries[0]["passed"], "passed_2": tries[-1]["passed"], "tries": list(tries),
                "seconds": 3.0 * len(tries)}

    doc = {"model": "m", "n_ctx": 8192, "wall_seconds": 10, "kestrel": {"commit": "abc"}, "records": [
        {"exercise": "a", "raw": system(malformed, bad), "kestrel": system(ok)},
        {"exercise": "b", "raw": system(bad, ok), "kestrel": system(bad, ok)},
        {"exercise": "c", "raw": system(bad, bad), "kestrel": system(malformed, malformed)}]}
    text = report(doc)
    assert "| raw | 0/3 (0.0%) | 1/3 (33.3%) | 5/6 (83.3%) | 1 | 6 / 6 |" in text
    assert "| kestrel | 1/3 (33.3%) | 2/3 (66.7%) | 3/5 (60.0%) | 2 | 6 / 6 |" in text
    assert "pass@1: +33.3 pts" in text and "pass@2: +33.3 pts" in text and "(+1/-0)" in text
    assert "- passed (kestrel): a, b" in text
