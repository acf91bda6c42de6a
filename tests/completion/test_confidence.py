"""When a one-line suggestion is not shown: the model's own probability of its first line."""

from __future__ import annotations

import math

from kestrel.completion.confidence import first_line_logprob, unsure_line

HALF = math.log(0.5)


def tok(text: str, lp: float) -> tuple[str, dict[str, float]]:
    return text, {text: lp, "other": -9.0}


def test_the_first_line_is_its_tokens_up_to_the_one_carrying_the_newline():
    tokens = [tok("x", HALF), tok(" +", HALF), tok(" 1\n", -20.0), tok("more", -20.0)]
    assert first_line_logprob(tokens) == 2 * HALF
    assert first_line_logprob([("x", {"y": -0.1})]) is None  # the chosen token's own figure is missing


def test_an_unlikely_line_is_held_back_a_likely_one_multi_line_or_unscored_is_not():
    five = [tok(t, HALF) for t in ("y", " ", "+", " ", "1")]  # 3 %
    assert unsure_line("y + 1", five, 0.05)
    assert not unsure_line("y + 1", five, 0.02)
    assert not unsure_line("y + 1", five, 0.0)  # off
    assert not unsure_line("y + 1", five[:4], 0.05)  # 6 %
    assert not unsure_line("y + 1\n    z = 2", five, 0.05)  # a block: not judged by its first line
    assert unsure_line("y + 1\n    ", five, 0.05)  # a line opened above existing code is still one line
    assert not unsure_line("y + 1", [], 0.05)  # the endpoint sent no log probabilities
