"""The agent's history within the model's context window (a local model reads 2,048-4,096 tokens; a
read_file result alone is up to 6,000 characters). What gives way, in order: the earlier steps' results,
oldest first, each cut to its head (the model is told what is left out and that it can call the tool
again); then the earlier steps' own calls; last, the latest results, cut to the room left. The system
prompt and the request are never cut, no message is dropped, and a cut is kept for the rest of the run
(the prompt's prefix changes only when the window is full). Why: docs/design-notes.md#pyserverkestrelagenthistorypy
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..chat import fit
from ..context.window import CHARS_PER_TOKEN

ANSWER_TOKENS = 768  # kept for a step's answer: a call with an edit's old and new text
KEPT_CHARS = 240  # of an earlier step's result or call: its head
_RESPONSE = re.compile(r"(<tool_response>\n)(.*?)(\n</tool_response>)", re.S)
_LEFT_OUT = "left out to fit the model's context window"


@dataclass
class HistoryBudget:
    """How many tokens the history may take (0: not known, nothing is cut), where its parts begin and what
    was cut so far."""

    limit: int = 0
    own: int = 0  # messages before this one (the system prompt and the request) are never cut
    latest: int = 0  # the last step's messages begin here
    cut_results: int = 0

    @classmethod
    def for_window(cls, window: int, max_tokens: int | None) -> "HistoryBudget":
        if window <= 0:
            return cls()
        return cls(max(window - min(max_tokens or ANSWER_TOKENS, window // 3), window // 2))

    @property
    def note(self) -> str | None:
        """What was left out, for the user; None when nothing was."""
        n = self.cut_results
        return (f"{n} tool result{'s were' if n > 1 else ' was'} shortened to fit the model's context window "
                f"of about {self.limit:,} tokens") if n else None

    def fit(self, history: list[dict]) -> list[dict]:
        """`history` within the limit; unchanged when it already fits."""
        if not self.limit or size(history) <= self.limit:
            return history
        out = list(history)
        own, latest = self.own, self.latest
        earlier = range(own, min(latest, len(out)))
        for i in (i for i in earlier if _is_result(out[i])):  # the earlier steps' results, oldest first
            out[i] = self._cut(out[i], KEPT_CHARS)
            if size(out) <= self.limit:
                return out
        for i in (i for i in earlier if out[i].get("role") == "assistant"):  # then their calls
            content = out[i].get("content")
            if isinstance(content, str):
                out[i] = {**out[i], "content": _head(content, KEPT_CHARS, "of this step's text")}
            if size(out) <= self.limit:
                return out
        for i in (i for i in range(latest, len(out)) if _is_result(out[i])):  # last, the latest results
            over = size(out) - self.limit
            if over <= 0:
                break
            text = out[i]["content"]
            out[i] = self._cut(out[i], max(len(text) - int(over * CHARS_PER_TOKEN) - 200, KEPT_CHARS))
        return out

    def _cut(self, message: dict, keep: int) -> dict:
        content = message["content"]
        if message.get("role") == "tool":
            cut = _head(content, keep)
        else:  # the text protocol's one message of `<tool_response>` blocks: each block cut on its own
            cut = _RESPONSE.sub(lambda m: m.group(1) + _head(m.group(2), keep) + m.group(3), content)
        if cut == content:
            return message
        self.cut_results += 1
        return {**message, "content": cut}


def size(messages: list[dict]) -> int:
    """The history's tokens, estimated as chat/fit.py does, with native calls' arguments (an edit's text)."""
    calls = (c.get("function") or {} for m in messages for c in m.get("tool_calls") or ())
    return fit.size(messages) + sum(fit.tokens(str(f.get("name", "")) + str(f.get("arguments", ""))) for f in calls)


def _is_result(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, str) and (
        message.get("role") == "tool" or (message.get("role") == "user" and "<tool_response>" in content))


def _head(text: str, keep: int, what: str = "") -> str:
    """`text`'s first `keep` characters, ended at a line end, and how much is left out (`what` is; a tool
    result's says the tool can be called again); `text` itself when it is short or already cut."""
    if len(text) <= keep + 120 or _LEFT_OUT in text[-200:]:
        return text
    end = text.rfind("\n", 0, keep)
    end = end if end > keep // 2 else keep
    rest = text[end:]
    lines = f"{rest.count(chr(10)) + 1} more lines" + (f" {what}" if what else "")
    again = "" if what else "; call the tool again if you need them"
    return f"{text[:end].rstrip()}\n… ({lines} {_LEFT_OUT}{again})"
