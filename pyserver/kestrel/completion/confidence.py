"""When to show nothing: a one-line suggestion the model itself was unsure of.

The model's own probability of the line it wrote (the product of its tokens' probabilities, from the
log probabilities a `fim` endpoint streams with the text) separates right lines from noise: on 40 real
Go lines outside the eval's sample, lines under 5 % were noise or near misses, never useful ones. Not
applied to Python, where the same floor hid lines that passed their tests (the engine's `_floor`).
Measured and why 5 %: docs/design-notes.md#pyserverkestrelcompletionconfidencepy
"""

from __future__ import annotations

import math
from typing import Sequence


def first_line_logprob(tokens: Sequence[tuple[str, dict[str, float]]]) -> float | None:
    """The log probability of the answer's first line: the sum over its tokens up to the one that
    carries the newline (not counted); None when a token's own log probability is missing."""
    total = 0.0
    for text, alternatives in tokens:
        if "\n" in text:
            break
        chosen = alternatives.get(text)
        if chosen is None:
            return None
        total += chosen
    return total


def unsure_line(text: str, tokens: Sequence[tuple[str, dict[str, float]]], floor: float) -> bool:
    """Whether the one-line suggestion `text` should not be shown: its line's probability is under
    `floor` (0: never). A multi-line suggestion, or a stream without log probabilities, is kept."""
    if floor <= 0 or not tokens or "\n" in text.strip():
        return False
    logprob = first_line_logprob(tokens)
    return logprob is not None and logprob < math.log(floor)
