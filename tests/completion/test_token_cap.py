"""A block the token cap stopped mid-line: the unfinished line is not shown (it would read as a
name nothing binds, `next_value`, and the name guard would hide the whole block)."""

from __future__ import annotations

from kestrel.completion.cuts import CutOptions, cut
from kestrel.context.window import CursorText

ANSWER = "if n <= 1:\n        return n\n    total = 0\n    for i in range(n):\n        next_value"


def test_the_line_the_cap_cut_short_is_dropped_and_the_rest_kept():
    cur = CursorText(before="def f(n):\n    ", after="", line_before="    ", line_after="")
    capped = cut(ANSWER, cur, CutOptions(multiline=True, max_lines=20, done=True, capped=True))
    assert capped.text == ANSWER.rsplit("\n", 1)[0] and capped.final
    ended = cut(ANSWER, cur, CutOptions(multiline=True, max_lines=20, done=True, model_ended=True))
    assert ended.text.endswith("next_value")  # the model ended there itself: its last line is whole
