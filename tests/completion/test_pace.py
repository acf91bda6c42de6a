"""The prompt follows the endpoint's learned pace: on a CPU server that reads a few hundred tokens a
second, a prompt that would take longer than the budget to read is cut to what fits (context first,
then suffix, then prefix, down to floors); a prompt that fits, a fast endpoint or one not yet
measured keep what the windows give."""

from __future__ import annotations

import pytest

from kestrel.completion.pace import FLOOR_PREFIX, FLOOR_SUFFIX, EndpointPace, Windows

FULL = Windows(1500, 400, 600)  # the tokens of each part of the prompt about to be sent


def learned(ms_per_token: float, fixed_ms: float, sizes=(200, 600, 1100, 1700, 2500, 900)) -> EndpointPace:
    pace = EndpointPace()
    for n in sizes:
        pace.record(n, fixed_ms + ms_per_token * n)
    return pace


def test_a_prompt_a_slow_endpoint_reads_too_slowly_loses_context_then_suffix_then_prefix_to_fit():
    pace = learned(3.0, 50.0)  # ~330 prompt tokens/s: a 0.5B on two laptop cores
    assert pace.fit() == pytest.approx((50.0, 3.0))
    assert pace.cut(FULL, 6500) == Windows(1500, 400, 250)  # 2,150 tokens fit: only context goes
    assert pace.cut(FULL, 5000) == Windows(1500, 150, 0)  # 1,650: all the context, then some suffix
    w = pace.cut(FULL, 3000)  # 983 tokens
    assert (w.suffix_tokens, w.context_tokens) == (FLOOR_SUFFIX, 0) and w.prefix_tokens == int(983.33 - FLOOR_SUFFIX)


def test_a_prompt_that_fits_a_fast_endpoint_an_unknown_one_or_no_budget_is_not_cut():
    assert learned(3.0, 50.0).cut(Windows(250, 40, 0), 1000) is None  # a short file: it fits as it is
    assert learned(0.1, 150.0).cut(FULL, 1000) is None  # 10k tokens/s
    few = EndpointPace()
    few.record(1000, 5000.0)
    assert few.cut(FULL, 1000) is None
    assert learned(3.0, 50.0).cut(FULL, 0) is None


def test_an_endpoint_slower_than_the_budget_itself_gets_the_floors_not_nothing():
    assert learned(20.0, 2000.0).cut(FULL, 1000) == Windows(FLOOR_PREFIX, FLOOR_SUFFIX, 0)
    assert learned(3.0, 50.0).cut(Windows(384, 96, 0), 1000) == Windows(384, FLOOR_SUFFIX, 0)  # under the floor: kept


def test_one_stream_held_up_by_something_else_does_not_move_the_fit():
    pace = learned(3.0, 50.0)
    pace.record(300, 9000.0)  # the server was busy with a chat answer
    fixed, per_token = pace.fit()
    assert per_token == pytest.approx(3.0, rel=0.2) and fixed < 500


def test_what_the_endpoint_kept_from_the_last_prompt_is_not_counted_as_read():
    pace = EndpointPace()
    first = "x" * 3500
    assert pace.sent(first) == pytest.approx(1000)
    assert pace.sent(first + "y" * 35) == pytest.approx(10)  # typed at the end: only that is new
    assert pace.read_tokens("z" + first) == pytest.approx(3501 / 3.5)  # changed at the start: all of it
