"""The steering eval's checkers (bench/steering): they read the code written under the steer and
say whether it does what the steer asked; a checker that passed anything would score obedience 100 %."""

from __future__ import annotations

import pytest

from bench.steering import SCENARIOS, last_code

BY_NAME = {s.name: s for s in SCENARIOS}


def test_the_last_code_block_is_read_even_when_unclosed():
    text = "Here:\n```python\nx = 1\n```\nNow with the steer:\n```py\ndef flip(s):\n    return s[::-1]\n"
    assert last_code(text) == ("py", "def flip(s):\n    return s[::-1]\n")
    assert last_code("no code at all") == ("", "")


def test_a_bare_block_after_the_code_is_its_output_not_the_code():
    text = "```python\ndef evens(n):\n    yield from range(2, n + 1, 2)\n```\nIt prints:\n```\n2\n4\n```\n"
    assert last_code(text) == ("python", "def evens(n):\n    yield from range(2, n + 1, 2)\n")
    assert last_code("```\nx = 1\n```") == ("", "x = 1\n")  # no block names a language: the last one


@pytest.mark.parametrize("name, obeys, ignores", [
    ("pathlib", "from pathlib import Path\ndef lines(p):\n    return Path(p).read_text().splitlines()\n",
     "def lines(p):\n    with open(p) as f:\n        return f.readlines()\n"),
    ("while-loop", "def s(xs):\n    i = t = 0\n    while i < len(xs):\n        t += xs[i]\n        i += 1\n    return t\n",
     "def s(xs):\n    return sum(x for x in xs if x % 2 == 0)\n"),
    ("recursive", "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n",
     "def fact(n):\n    r = 1\n    for i in range(2, n + 1):\n        r *= i\n    return r\n"),
    ("iterative", "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
     "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"),
    ("type-hints", "def count(s: str) -> int:\n    return len(s.split())\n", "def count(s):\n    return len(s.split())\n"),
    ("json-loads", "import json\ndef read(p):\n    return json.loads(open(p).read())\n",
     "import json\ndef read(p):\n    with open(p) as f:\n        return json.load(f)\n"),
    ("keyword-only", "def price(x, *, symbol='$'):\n    return f'{symbol}{x:.2f}'\n",
     "def price(x, symbol='$'):\n    return f'{symbol}{x:.2f}'\n"),
    ("no-set", "def dedupe(xs):\n    return list(dict.fromkeys(xs))\n", "def dedupe(xs):\n    return list(set(xs))\n"),
])
def test_a_checker_tells_code_that_obeys_from_code_that_does_not(name, obeys, ignores):
    check = BY_NAME[name].obeys
    assert check("python", obeys)
    assert not check("python", ignores)
    assert not check("", "")  # nothing written under the steer obeys nothing


def test_javascript_is_told_by_the_fence_or_the_code():
    check = BY_NAME["javascript"].obeys
    assert check("javascript", "function isPrime(n) { return n > 1; }")
    assert check("", "const isPrime = (n) => n > 1;")
    assert not check("python", "def is_prime(n):\n    return n > 1\n")


def test_there_are_at_least_twenty_scenarios_with_distinct_names():
    assert len(SCENARIOS) >= 20 and len(BY_NAME) == len(SCENARIOS)
