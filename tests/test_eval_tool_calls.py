"""The tool-call eval: BFCL's questions and its own AST checker from the pinned wheel, Kestrel's parsing
of an answer that prints its call as text, and the summary. The endpoint is the mock model, reached
through the official openai SDK as the eval reaches a real one."""

from __future__ import annotations

import json

import pytest

from bench.tool_calls import data, summary
from bench.tool_calls.__main__ import run
from kestrel.agent.tool_calls import Toolbox, parse


@pytest.fixture(scope="module")
def questions():
    return data.questions(sample=3)


def _truth(q) -> tuple[str, dict]:
    name, args = next(iter(q.answer[0].items()))
    return name, {k: v[0] for k, v in args.items() if v and v[0] != ""}


def test_bfcls_checker_accepts_the_reference_call_read_from_text_and_rejects_another_value(questions):
    check = data.checker()
    assert {q.category for q in questions} == set(data.CATEGORIES) and len(questions) == 6
    for q in questions:
        name, args = _truth(q)
        text = f"<tool_call>\n{json.dumps({'name': name.replace('.', '_'), 'arguments': args})}\n</tool_call>"
        calls = parse(text, None, Toolbox(q.functions))
        assert check(q, [{c.name: c.arguments} for c in calls]) == (True, ""), q.id
        wrong = {**args, next(iter(args)): "no such value"}
        assert not check(q, [{name: wrong}])[0]
    assert check(questions[0], []) == (False, "no call")


async def test_an_answer_printed_as_text_is_a_call_for_kestrel_and_none_for_native_tool_calling(mock, questions):
    q = questions[0]
    name, args = _truth(q)
    mock.configure(text=f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>")
    records = await run([q], mock.base_url, "mock-model", "test-key", lambda _m: None)
    r = records[0]
    assert not r["native"]["valid"] and r["native"]["why"] == "no call"
    assert r["kestrel"]["valid"] and r["kestrel"]["paths"] == ["text"] and r["kestrel-text"]["valid"]
    body = mock.stats()["last_request"]  # the text-protocol request: the tools are in the system prompt
    assert "<tools>" in body["messages"][0]["content"] and "tools" not in body
    s = summary.summarize(records * 4)
    assert s["scores"]["all"]["kestrel"]["valid"] == 4 and s["margins"]["kestrel|native|all"]["b"] == 4
    doc = {"summary": s, "records": records, "model": "m", "endpoint": "mock", "wheel": data.WHEEL, "sample": 3,
           "wall_seconds": 1.0, "kestrel_src": "working tree"}
    assert "| all | kestrel | 4 | 100.0% (4)" in summary.table(doc) and summary.MARKER in summary.section(doc)
