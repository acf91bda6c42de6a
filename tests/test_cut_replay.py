"""bench.quality.cut_replay: recorded streams replayed through a Kestrel source tree's engine."""

from __future__ import annotations

from pathlib import Path

from bench.quality.cut_replay import replay

PYSERVER = str(Path(__file__).resolve().parents[1] / "pyserver")


def test_the_replay_answers_when_the_engine_would_with_what_it_would_show():
    prefix = "def f(xs):\n    total = 0\n    "
    suffix = "\n    return total\n"
    pieces = ["total", " +=", " len", "(xs", ")\n", "   ", " return", " total", "\n", "\n"]
    steps, text = [], ""
    for i, piece in enumerate(pieces):
        text += piece
        steps.append((100.0 * (i + 1), text))
    row = {"set": "single-line", "task": "t", "placement": "after_indent", "steps": steps, "finish": "length",
           "prefix": prefix, "suffix": suffix}
    answers = replay([row] * 4, PYSERVER)  # one engine for all, as in the eval
    assert [a["text"] for a in answers] == ["total += len(xs)"] * 4
    # The first streams are watched to their end to learn how the model ends blocks (ending.py); then
    # the answer comes once the next line has re-typed `return t…` (the 8th piece), not at the end.
    assert [a["ms"] for a in answers] == [1000.0, 1000.0, 1000.0, 800.0]
