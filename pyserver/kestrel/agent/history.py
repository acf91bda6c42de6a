"""The agent's history within the model's context window (a local model reads 2,048-4,096 tokens; a
read_file result alone is up to 6,000 characters). What gives way, in order: the earlier steps' results,
oldest first, each cut to its head (the model is told what is left out and that it can call the tool
again); then the earlier steps' own calls; last, the latest results, cut to the room left. The system
prompt and the request are never cut, no message is dropped, and a cut is kept for the rest of the run
(the prompt's prefix changes only when the window is full). Why: docs/design-notes.md#pyserverkestrelagenthistorypy
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..chat import fit

ANSWER_TOKENS = 768  # kept for a step's answer: a call with an edit's old and new text
KEPT_CHARS = 240  # of an earlier step's result or call: its head
# A tool result is denser than prose: read_file's numbered lines are 2.3-2.9 characters a token in
# Qwen2.5's tokenizer, search results 3.5-3.8 (chat/fit.py counts 3.5).
RESULT_CHARS_PER_TOKEN = 2.5
_RESPONSE = re.compile(r"(<tool_response>\n)(.*?)(\n</tool_response>)", re.S)
_LEFT_OUT = "left out to fit the model's context window"


@dataclass
class HistoryBudget:
    """How many tokens the history may take (0: not known, nothing is cut), where its parts begin and what
    was cut so far."""

    limit: int = 0
    own: int = 0  # messages before this one (the system prompt and the request) are never cut
    latest: int = 0  # the last step's messages begin here
    cut: set[int] = field(default_factory=set)  # the results cut so far (their places in the history)

    @classmethod
    def for_window(cls, window: int, max_tokens: int | None) -> "HistoryBudget":
        if window <= 0:
            return cls()
        return cls(max(window - min(max_tokens or ANSWER_TOKENS, window // 3), window // 2))

    @property
    def note(self) -> str | None:
        """What was left out, for the user; None when nothing was."""
        n = len(self.cut)
        return (f"{n} tool result{'s were' if n > 1 else ' was'} shortened to fit the model's context window "
                f"of about {self.limit:,} tokens") if n else None

    def fit(self, history: list[dict]) -> list[dict]:
        """`history` within the limit; unchanged when it already fits."""
        if not self.limit or size(history) <= self.limit:
            return history
        out = list(history)
        earlier = range(self.own, min(self.latest, len(out)))
        # The earlier steps' results, oldest first, then their calls: to their heads, and when a long run's
        # heads alone outgrow the window (10 steps of 4 results), to a line that says they were left out.
        for keep in (KEPT_CHARS, 0):
            for i in (i for i in earlier if _is_result(out[i])):
                out[i] = self._cut(out, i, keep)
                if size(out) <= self.limit:
                    return out
            for i in (i for i in earlier if out[i].get("role") == "assistant" and isinstance(out[i].get("content"), str)):
                out[i] = {**out[i], "content": _head(out[i]["content"], keep, "of this step's text")}
                if size(out) <= self.limit:
                    return out
        for i in (i for i in range(self.latest, len(out)) if _is_result(out[i])):  # last, the latest results
            over = size(out) - self.limit
            if over <= 0:
                break
            out[i] = self._cut(out, i, max(len(out[i]["content"]) - int(over * RESULT_CHARS_PER_TOKEN) - 200, KEPT_CHARS))
        return out

    def _cut(self, history: list[dict], i: int, keep: int) -> dict:
        message = history[i]
        content = message["content"]
        blocks = len(_RESPONSE.findall(content))
        if message.get("role") == "tool":
            cut = _head(content, keep)
        elif keep or blocks < 2:  # the text protocol's one message of `<tool_response>` blocks: each cut on its own
            cut = _RESPONSE.sub(lambda m: m.group(1) + _head(m.group(2), keep) + m.group(3), content)
        else:  # down to a line: one for the step's results together
            cut = f"<tool_response>\n(these {blocks} results {_LEFT_OUT}; call the tools again if you need them)\n</tool_response>"
            cut = cut if len(cut) < len(content) else content
        if cut == content:
            return message
        self.cut.add(i)
        return {**message, "content": cut}


def size(messages: list[dict]) -> int:
    """The history's tokens, estimated as chat/fit.py does, with native calls' arguments (an edit's text),
    tool results counted at their own, denser rate."""
    calls = (c.get("function") or {} for m in messages for c in m.get("tool_calls") or ())
    results = [m for m in messages if _is_result(m)]
    dense = sum(int(len(m["content"]) / RESULT_CHARS_PER_TOKEN) - fit.tokens(m["content"]) + 1 for m in results)
    return fit.size(messages) + dense + sum(fit.tokens(str(f.get("name", "")) + str(f.get("arguments", ""))) for f in calls)


def _is_result(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, str) and (
        message.get("role") == "tool" or (message.get("role") == "user" and "<tool_response>" in content))


def _head(text: str, keep: int, what: str = "") -> str:
    """`text`'s first `keep` characters, ended at a line end, and how much is left out (`what` is; a tool
    result's says the tool can be called again); `text` itself when it is short or already cut as far.
    `keep` 0: only the line saying it was left out."""
    again = "" if what else "; call the tool again if you need them"
    if not keep:
        stub = f"({what.removeprefix('of ') if what else 'this result'} {_LEFT_OUT}{again})"
        return stub if len(text) > len(stub) else text
    if len(text) <= keep + 120 or _LEFT_OUT in text[-200:]:
        return text
    end = text.rfind("\n", 0, keep)
    end = end if end > keep // 2 else keep
    rest = text[end:]
    lines = f"{rest.count(chr(10)) + 1} more lines" + (f" {what}" if what else "")
    return f"{text[:end].rstrip()}\n… ({lines} {_LEFT_OUT}{again})"
