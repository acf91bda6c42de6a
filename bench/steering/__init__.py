"""Steering a running chat answer (issue 29): the scripted requests, their steers and the checkers
that say whether the final code obeys the steer. Every checker reads the last fenced code block of
what the model wrote after the steer landed (the answer it gives under the steer), preferring a block
that names its language over a bare one (its output)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

_FENCE = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def last_code(text: str) -> tuple[str, str]:
    """(language, code) of the last fenced block of `text` that names a language (an unclosed one
    counts), else of the last block; ("", "") if none. A bare block after the code is most often the
    program's output ("```\n2\n4\n```"), not code written under the steer."""
    blocks = _FENCE.findall(text)
    tagged = [b for b in blocks if b[0]]
    last = (tagged or blocks or [("", "")])[-1]
    return last[0].lower(), last[1]


def _defs(code: str) -> list[tuple[str, str]]:
    """(name, body) of each `def` in the code (the body: the lines indented under it)."""
    out = []
    lines = code.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)def (\w+)\(", line)
        if m:
            body = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= len(m.group(1)):
                    break
                body.append(nxt)
            out.append((m.group(2), "\n".join(body)))
    return out


def _recursive(code: str) -> bool:
    return any(re.search(rf"\b{name}\(", body) for name, body in _defs(code))


def _has(*patterns: str) -> Callable[[str, str], bool]:
    return lambda lang, code: all(re.search(p, code) for p in patterns)


def _lacks(pattern: str, *needs: str) -> Callable[[str, str], bool]:
    return lambda lang, code: bool(code.strip()) and not re.search(pattern, code) and all(
        re.search(p, code) for p in needs)


def _javascript(lang: str, code: str) -> bool:
    return lang in ("javascript", "js", "typescript", "ts") or (
        bool(re.search(r"\bfunction\b|=>", code)) and "def " not in code)


@dataclass(frozen=True)
class Scenario:
    name: str
    request: str
    steer: str
    obeys: Callable[[str, str], bool]  # (language, code) -> the code does what the steer asked


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("pathlib", "Write a Python function that returns the lines of a text file.",
             "Use pathlib instead of open().", _has(r"Path\b|pathlib")),
    Scenario("while-loop", "Write a Python function that sums the even numbers in a list.",
             "Use a while loop, not a for loop.", _lacks(r"\bfor\b", r"\bwhile\b")),
    Scenario("rename-function", "Write a Python function that reverses a string.",
             "Name the function flip.", _has(r"def flip\(")),
    Scenario("recursive", "Write a Python function that computes the factorial of n.",
             "Make it recursive.", lambda lang, code: _recursive(code)),
    Scenario("type-hints", "Write a Python function that counts the words in a sentence.",
             "Add type hints.", _has(r"def \w+\([^)]*:\s*\w+[^)]*\)\s*->")),
    Scenario("raise", "Write a Python function that finds the largest number in a list.",
             "Raise ValueError if the list is empty.", _has(r"raise ValueError")),
    Scenario("javascript", "Write a Python function that checks whether a number is prime.",
             "Write it in JavaScript instead.", _javascript),
    Scenario("docstring", "Write a Python function that merges two dictionaries.",
             "Add a docstring.", _has(r'def \w+\(.*\n\s+("""|\'\'\')')),
    Scenario("parameter-name", "Write a Python function that converts Celsius to Fahrenheit.",
             "Call the parameter degrees.", _has(r"def \w+\(\s*degrees\b")),
    Scenario("f-string", "Write a Python function that greets a user by name.",
             "Use an f-string.", _has(r"\bf[\"']")),
    Scenario("class-name", "Write a Python class for a bank account with deposit and withdraw methods.",
             "Call the class Wallet.", _has(r"class Wallet\b")),
    Scenario("no-set", "Write a Python function that removes duplicates from a list.",
             "Do not use set(); keep the original order.", _lacks(r"\bset\(", r"def ")),
    Scenario("json-loads", "Write a Python function that reads a JSON file and returns the data.",
             "Read the file's text and use json.loads, not json.load.", _lacks(r"json\.load\(", r"json\.loads\(")),
    Scenario("iterative", "Write a Python function that returns the n-th Fibonacci number.",
             "Use a loop, no recursion.", lambda lang, code: bool(_defs(code)) and not _recursive(code)
             and bool(re.search(r"\b(for|while)\b", code))),
    Scenario("no-title", "Write a Python function that capitalizes every word in a sentence.",
             "Do not use str.title().", _lacks(r"\.title\(", r"def ")),
    Scenario("comprehension", "Write a Python function that returns the squares of a list of numbers.",
             "Use a list comprehension.", _has(r"\[[^\]\n]+\bfor\b[^\]\n]+\bin\b[^\]\n]+\]")),
    Scenario("ignore-case", "Write a Python function that checks whether a string is a palindrome.",
             "Ignore upper and lower case.", _has(r"\.(lower|casefold|upper)\(\)")),
    Scenario("longest-first", "Write a Python function that sorts a list of words by length.",
             "Sort the longest first.", _has(r"reverse\s*=\s*True|-\s*len\(|\[::-1\]")),
    Scenario("rename-vowels", "Write a Python function that counts the vowels in a string.",
             "Name it vowel_counts.", _has(r"def vowel_counts\(")),
    Scenario("urllib", "Write a Python function that downloads the text of a web page.",
             "Use urllib from the standard library, not requests.", _lacks(r"import requests|requests\.get", r"urllib")),
    Scenario("os-path", "Write a Python function that builds the path of a file inside a folder.",
             "Use os.path.join.", _has(r"os\.path\.join")),
    Scenario("perf-counter", "Write a Python function that measures how long another function takes to run.",
             "Use time.perf_counter.", _has(r"perf_counter")),
    Scenario("keyword-only", "Write a Python function that formats a price with a currency symbol.",
             "Make the currency symbol a keyword-only argument.", _has(r"def \w+\([^)]*\*\s*,")),
    Scenario("generator", "Write a Python function that returns the even numbers up to n as a list.",
             "Make it a generator that yields them.", _has(r"\byield\b")),
)
