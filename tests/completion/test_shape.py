"""The shape of the answer asked for (kestrel.completion.shape): one line or a block."""

from __future__ import annotations

from kestrel.completion.shape import wants_multiline


def test_multiline_decision():
    assert wants_multiline("def f(x):", "")
    assert wants_multiline("    ", "")
    assert not wants_multiline("x = fo", "")
    assert not wants_multiline("print(", "x, y)")
    assert wants_multiline("call(", ")")


def test_a_colon_opens_a_block_only_after_a_header_and_an_arrow_never():
    assert wants_multiline("    if x > 1:", "") and wants_multiline("    else:", "") and wants_multiline("  case 3:", "")
    assert wants_multiline("async def f():", "") and wants_multiline("class A(B):", "")
    assert not wants_multiline("    chunk_key_encoding: ", "")  # a parameter's annotation
    assert not wants_multiline("def pack(request: ", "")
    assert not wants_multiline('    "key": ', "")  # a dict value
    assert not wants_multiline("const x: ", "")  # TypeScript
    assert not wants_multiline("    ) -> ", "")  # a return type


def test_the_end_of_a_line_whose_block_already_has_a_body_is_one_line():
    header = "    def compute(self, spec: "
    assert not wants_multiline(header, "", "        raise NotImplementedError")
    assert not wants_multiline("class Client(", "", "    backend = 'e2b'")
    assert wants_multiline("def f(x):", "", "")  # no body yet: a block is wanted
    assert wants_multiline("    def f(x):", "", "    def g(y):")  # the next line is a sibling, not a body
    assert wants_multiline("items = [", "", "")
