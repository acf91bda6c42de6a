"""Minimal edits: replace only what changed, never the whole region."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:\n```|$)", re.S)


def extract_code(answer: str) -> str:
    """The code in a model answer: the first fenced block if there is one, else the text."""
    match = _FENCE.search(answer)
    return match.group(1) if match else answer.strip("\n")


def minimal_replacement(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, text): replacing old[start:end] with text turns `old` into `new`."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, new[start:end_new]
