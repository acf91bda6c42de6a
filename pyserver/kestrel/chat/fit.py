"""Fitting a conversation into a model's context window (the embedded model reads 2,048 tokens).

What gives way, in order: earlier turns (oldest first), then the code blocks of the last message,
largest first, each cut to the lines the question names (else its head), with lines saying which are
left out. The question
itself (the last message's text outside its code blocks) is never cut: a question that alone does not
fit is refused with the reason. Sizes are estimated from characters (`CHARS_PER_TOKEN`, on the safe
side for code); why: docs/design-notes.md#pyserverkestrelchatfitpy
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..context.excluded_text import message_text
from ..context.window import CHARS_PER_TOKEN

MESSAGE_TOKENS = 8  # a chat template's markers around each message
_BLOCK = re.compile(r"(```[^\n]*\n)(.*?)(\n```)", re.S)
_LABEL = re.compile(r"([^\n]*):\n$")  # the context builders' "File models.py:" line before a block
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


class DoesNotFit(Exception):
    """Even without its context the question is longer than the model reads; the message says so."""


@dataclass
class Fitted:
    messages: list[dict]
    dropped_turns: int = 0
    cut: list[str] = field(default_factory=list)  # "File models.py (lines 120-160 of 300)"

    @property
    def note(self) -> str | None:
        """What was left out, for the user; None when nothing was."""
        n = self.dropped_turns
        parts = [f"{n} earlier message{'s' if n > 1 else ''} left out"] if n else []
        parts += [f"{c} sent" for c in self.cut]
        return "; ".join(parts) if parts else None


def known_window(host: Any) -> int:
    """The model's context window when it is known to be small (the embedded model's `local.context`,
    or `chat.contextTokens` for a server of the user's own), else 0."""
    return host.settings.local.context if host.embedded.running else host.settings.chat.context_tokens


def tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def size(messages: list[dict]) -> int:
    return sum(tokens(message_text(m)) + MESSAGE_TOKENS for m in messages)


def fit(messages: list[dict], limit: int) -> Fitted:
    """`messages` within about `limit` tokens (unchanged when they already are); DoesNotFit."""
    if size(messages) <= limit or not messages:
        return Fitted(messages)
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(messages) - 1)
    system = [m for m in messages[:last] if m.get("role") == "system"]
    turns = [m for m in messages[:last] if m.get("role") != "system"]
    tail = messages[last:]
    dropped = 0
    while turns and size(system + turns + tail) > limit:
        turns.pop(0)
        dropped += 1
    fitted = Fitted(system + turns + tail, dropped)
    over = size(fitted.messages) - limit
    if over > 0 and isinstance(tail[0].get("content"), str):
        content, fitted.cut = _cut_blocks(tail[0]["content"], over)
        fitted.messages = system + turns + [{**tail[0], "content": content}] + tail[1:]
    if size(fitted.messages) > limit:
        raise DoesNotFit(f"the question is about {size(fitted.messages)} tokens even with the attached code left "
                         f"out, and the model reads about {limit} before its answer: shorten the question, or "
                         "configure a model with a larger context window")
    return fitted


def _cut_blocks(content: str, over: int) -> tuple[str, list[str]]:
    """`content` with its code blocks cut, largest first, until about `over` tokens are gone. A cut block
    keeps the lines the question names (its identifiers outside the blocks), else its first lines."""
    blocks = list(_BLOCK.finditer(content))
    asked = set(_WORD.findall(_BLOCK.sub(" ", content)))
    keep = {i: m.group(2) for i, m in enumerate(blocks)}
    cut: dict[int, str] = {}
    for i in sorted(keep, key=lambda i: len(keep[i]), reverse=True):
        if over <= 0:
            break
        body = keep[i]
        lines = body.split("\n")
        room = max(0, len(body) - int(over * CHARS_PER_TOKEN) - 160)  # 160: the two lines that say what is left out
        first, last = _span(lines, room, asked)
        shown = lines[first:last]
        before = [f"… (lines 1-{first} not shown: the model's context window is full)"] if first else []
        after = [f"… (lines {last + 1}-{len(lines)} not shown)"] if last < len(lines) else []
        keep[i] = "\n".join(before + shown + after)
        over -= tokens(body) - tokens(keep[i])
        label = _LABEL.search(content, 0, blocks[i].start())
        name = re.sub(r"\s*\(.*\)$", "", label.group(1).strip()) if label else "a code block"
        cut[i] = f"{name} (lines {first + 1}-{last} of {len(lines)})" if shown else f"{name} (none of its {len(lines)} lines)"
    out, at = [], 0
    for i, m in enumerate(blocks):
        out += [content[at:m.start(2)], keep[i]]
        at = m.end(2)
    out.append(content[at:])
    return "".join(out), [cut[i] for i in sorted(cut)]


def _span(lines: list[str], room: int, asked: set[str]) -> tuple[int, int]:
    """(first, end) of the lines within `room` characters to keep: around the run that names the
    question's identifiers most, each weighted by how rare it is in the block (`send_headers` counts,
    `the` hardly), from a little before its first strong line on (a definition's body follows its
    name); the block's head when the question names nothing in it."""
    words = [asked & set(_WORD.findall(line)) for line in lines]
    df: dict[str, int] = {}
    for found in words:
        for w in found:
            df[w] = df.get(w, 0) + 1
    weight = [sum(1 / df[w] for w in found) for found in words]
    best, start, end, first, chars, score = 0.0, 0, 0, 0, 0, 0.0
    for last, line in enumerate(lines):  # the best window ending at each line, its start slid to fit
        chars += len(line) + 1
        score += weight[last]
        while chars > room and first <= last:
            chars -= len(lines[first]) + 1
            score -= weight[first]
            first += 1
        if first <= last and score > best + 1e-9:
            best, start, end = score, first, last + 1
    if best > 0:
        strongest = max(weight[start:end])
        anchor = next(i for i in range(start, end) if weight[i] >= strongest / 2)
        start, chars = anchor, 0
        while start > 0 and chars + len(lines[start - 1]) + 1 <= room // 4:  # a quarter before it
            start -= 1
            chars += len(lines[start]) + 1
    end, chars = start, 0
    while end < len(lines) and chars + len(lines[end]) + 1 <= room:
        chars += len(lines[end]) + 1
        end += 1
    while start > 0 and chars + len(lines[start - 1]) + 1 <= room:  # the block ended first: room before
        start -= 1
        chars += len(lines[start]) + 1
    return start, end
