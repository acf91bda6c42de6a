"""The shape of the answer asked for (kestrel.completion.shape): one line or a block."""

from __future__ import annotations

from kestrel.completion.shape import wants_multiline


def test_multiline_decision():
    assert wants_multiline("def f(x):", "")
    assert wants_multiline("    ", "")
    assert not wants_multiline("x = fo", "")
    assert not wants_multiline("print(", "x, y)")
    assert wants_multiline("call(", ")")
