"""A second reading of a line-scan slip, by the chat model: the region with that line left out, the
line as written and the slip as two choices, asked in both orders so that a small model's favourite
letter cancels out. `preference` is the mean log-odds it gives the slip (> 0: the slip).
Tried and not adopted (AUC 0.40 on held-out bugs): docs/design-notes.md#benchedit_qualityjudgepy
"""

from __future__ import annotations

from contextlib import aclosing

from kestrel.providers.base import Provider, StreamStats

SYSTEM = "You review code. Answer with one letter."
HOLE = "<missing line>"
TOP_LOGPROBS = 5


def question(region: str, index: int, first: str, second: str, language: str, instruction: str) -> list[dict]:
    """The messages that ask which of two lines (A: `first`, B: `second`) fills line `index` of `region`."""
    lines = region.split("\n")
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    lines[index] = indent + HOLE
    said = f"The user says: {instruction.strip()}\n" if instruction.strip() else ""
    user = (f"One line of this {language} code is missing, marked {HOLE}.\n```{language}\n" + "\n".join(lines)
            + f"\n```\n{said}Which line goes there?\nA: {first.strip()}\nB: {second.strip()}\nAnswer A or B.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _letter_odds(top: dict[str, float]) -> float:
    """log p(B) − log p(A) at the answer's first token; a letter not listed gets the least listed one's
    log probability (a bound)."""
    floor = min(top.values())
    best = {letter: max((lp for t, lp in top.items() if t.strip() == letter), default=floor) for letter in "AB"}
    return best["B"] - best["A"]


async def preference(provider: Provider, region: str, index: int, new_line: str, language: str,
                     instruction: str) -> float | None:
    """The mean, over both orders, of log p(the slip) − log p(the line as written) as the model's
    one-letter answer; None when the endpoint gives no log probabilities."""
    old = region.split("\n")[index]
    total = 0.0
    for slip_is_b in (True, False):
        first, second = (old, new_line) if slip_is_b else (new_line, old)
        stats = StreamStats()
        messages = question(region, index, first, second, language, instruction)
        async with aclosing(provider.chat(messages, stats, max_tokens=1, deterministic=True,
                                          top_logprobs=TOP_LOGPROBS)) as stream:
            async for _ in stream:
                pass
        if not stats.tokens:
            return None
        odds = _letter_odds(stats.tokens[0][1])
        total += odds if slip_is_b else -odds
    return total / 2
