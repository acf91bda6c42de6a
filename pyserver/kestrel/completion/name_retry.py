"""A suggestion hidden for reading a name nothing binds gets one more try, from a name the code has.

At the token where the invented name begins, the model's listed alternatives are asked for; the
likeliest one that begins a name the code spells is taken and the model writes the rest after it.
The result goes through the cuts and guards as any answer does. Only where a suggestion would
otherwise be hidden, so a shown suggestion never pays for it.
Why, and what it measured: docs/design-notes.md#pyserverkestrelcompletionname_retrypy
"""

from __future__ import annotations

import logging
import re
from contextlib import aclosing
from dataclasses import replace
from typing import Callable

from ..providers.base import CompletionPrompt, Provider, StreamStats

log = logging.getLogger(__name__)

ALTERNATIVES = 5  # the token's alternatives asked for
_WORD = re.compile(r"[A-Za-z_]\w*")


def known_names(code: str) -> frozenset[str]:
    """Every identifier the code around the cursor spells: a loose superset of what it binds (the
    name guard checks the final text again)."""
    return frozenset(_WORD.findall(code))


def steer_token(invented_token: str, top: dict[str, float], names: frozenset[str]) -> str | None:
    """The likeliest listed token, other than the invented name's own, that begins a known name."""
    for token, _lp in sorted(top.items(), key=lambda kv: -kv[1]):
        start = token.lstrip(" ")
        if token == invented_token or not _WORD.fullmatch(start):
            continue
        if any(name.startswith(start) for name in names):
            return token
    return None


async def retry(provider: Provider, prompt: CompletionPrompt, answer: str, offset: int,
                names: frozenset[str], enough: Callable[[str], bool]) -> str | None:
    """`answer` (what the model wrote for `prompt`, from the cursor) with the invented name at `offset`
    written again from a known name's first token; None when no listed token begins one. The new
    stream is read until `enough(text so far)` (the cuts have decided) or its end."""
    head = answer[:offset]
    ask = replace(prompt, answered=prompt.answered + head, max_tokens=1, top_logprobs=ALTERNATIVES, stop=())
    stats = StreamStats()
    async with aclosing(provider.complete(ask, stats)) as stream:
        async for _ in stream:
            pass
    if not stats.tokens:
        return None  # the endpoint lists no alternatives
    invented, top = stats.tokens[0]
    token = steer_token(invented, top, names)
    if token is None:
        log.debug("name retry: no alternative to %r begins a known name (%s)", invented, ", ".join(top))
        return None
    rest = replace(prompt, answered=prompt.answered + head + token, top_logprobs=0)
    text = head + token
    async with aclosing(provider.complete(rest, StreamStats())) as stream:
        async for delta in stream:
            text += delta
            if enough(text):
                break
    log.debug("name retry: %r instead of %r", token, invented)
    return text
