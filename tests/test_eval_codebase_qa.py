"""The codebase-Q&A eval's own logic (bench/codebase_qa): reference files read from an answer, the
scores, and the markdown keeping each model's answers section when the retrieval part is rewritten."""

from __future__ import annotations

from bench.codebase_qa import report, tasks
from bench.codebase_qa.__main__ import score
from bench.codebase_qa.answers import grounded, mentions, numbered


def test_reference_files_are_the_files_an_answer_names():
    files = ["src/requests/utils.py", "src/requests/models.py", "tests/test_utils.py", "docs/api.rst"]
    answer = "In `src/requests/utils.py`, `get_environ_proxies` calls ...; see also models.py and test_utils.py (or x/nowhere.py)."
    assert tasks._referenced(answer, files) == ("src/requests/utils.py", "src/requests/models.py", "tests/test_utils.py")
    ambiguous = ["a/utils.py", "b/utils.py", "c/utils.py"]
    assert tasks._referenced("utils.py", ambiguous) == ()  # three files end so: no reference


def test_recall_and_mrr_count_files_in_rank_order():
    got = score(["x.py", "a.py", "y.py", "b.py"], ("a.py", "b.py", "c.py"))
    assert got["recall5"] == 2 / 3 and got["mrr"] == 0.5
    assert score([], ("a.py",)) == {"recall5": 0.0, "recall10": 0.0, "mrr": 0.0}


def test_an_answer_is_grounded_when_it_names_a_reference_file():
    assert mentions("see [src/flask/ctx.py:10-20] and app.py") == ["src/flask/ctx.py", "app.py"]
    assert grounded("It lives in `ctx.py`.", ("src/flask/ctx.py",))
    assert grounded("[src/flask/ctx.py:3]", ("src/flask/ctx.py",))
    assert not grounded("It lives in `flask/globals.py`.", ("src/flask/ctx.py",))
    # a number names the answer's source of that number (in the order the server sent them)
    sources = ["src/flask/app.py", "src/flask/ctx.py"]
    assert grounded("It is pushed there [2].", ("src/flask/ctx.py",), sources)
    assert not grounded("It is pushed there [1], see `items[2]` and [3].", ("src/flask/ctx.py",), sources)
    assert numbered("As [1] and [3] say; ```python\nx = [2]\n```", sources) == (["src/flask/app.py"], 1)


def test_the_answers_sections_survive_a_retrieval_rewrite(tmp_path):
    md = tmp_path / "CODEBASE.md"
    md.write_text("# Codebase Q&A\n\n## Results\n\nold\n\n## Per question\n\n- q\n")
    report.write_answers(md, "m1", "### Answers on m1\n\nA")
    report.write_answers(md, "m2", "### Answers on m2\n\nB")
    report.write_answers(md, "m1", "### Answers on m1\n\nA2")
    text = md.read_text()
    assert text.count("\n## Answers\n") == 1 and "\n\n\n" not in text and "A2" in text and "\nA\n" not in text and "B" in text
    assert text.index("## Answers") < text.index("## Per question")
    rewritten = report.with_answers("# Codebase Q&A\n\n## Results\n\nnew\n\n## Per question\n", report.answer_sections(md))
    assert "new" in rewritten and "A2" in rewritten and "B" in rewritten
