"""Which models take a reasoning effort, and how `kestrel.effort` reaches them.

The Responses API always takes `reasoning.effort`. Chat Completions takes a top-level
`reasoning_effort` only where `takes_reasoning_effort(model)` says so: the name after the last "/",
lowercased, starts with "gpt-oss", "o1", "o3", "o4" or "gpt-5", except "o1-mini", "o1-preview" and
the "-chat" variants. The status snapshot reports the same rule (`effort_support`), so the chat
panel's effort picker is disabled where it would do nothing.
Why: docs/design-notes.md#pyserverkestrelprovidersreasoningpy
"""

from __future__ import annotations

import re
from typing import NamedTuple

_REASONING_FAMILY = re.compile(r"^(gpt-oss|o[134](?![0-9a-z])|gpt-5)")
_NOT_REASONING = re.compile(r"^o1-(mini|preview)|-chat")

# Chat Completions' `reasoning_effort` has no "xhigh" on the models the rule matches (gpt-oss
# takes low/medium/high; the o-series and GPT-5 up to 5.1 refuse "xhigh" with HTTP 400), so the
# picker's top level is sent as the highest value they all take.
_CHAT_COMPLETIONS_EFFORT = {"low": "low", "medium": "medium", "high": "high", "xhigh": "high"}

# Inline completions (and other ghost text) always run at the lowest effort: never slower than today.
COMPLETION_EFFORT = "low"


def model_name(model: str) -> str:
    """"openai/gpt-oss-120b" -> "gpt-oss-120b": hosts prefix the publisher (Groq, vLLM, OpenRouter)."""
    return (model or "").strip().lower().rsplit("/", 1)[-1]


def takes_reasoning_effort(model: str) -> bool:
    """Whether Chat Completions takes `reasoning_effort` for `model` (the rule in the module doc)."""
    name = model_name(model)
    return bool(_REASONING_FAMILY.match(name)) and not _NOT_REASONING.search(name)


def is_openai_reasoning_model(model: str) -> bool:
    """OpenAI's own reasoning models (o-series, GPT-5) on Chat Completions refuse `max_tokens` (they
    take `max_completion_tokens`) and any temperature but the default; gpt-oss takes both."""
    return takes_reasoning_effort(model) and not model_name(model).startswith("gpt-oss")


def chat_completions_effort(model: str, effort: str | None) -> str | None:
    """The `reasoning_effort` to send on Chat Completions, or None where the model takes none."""
    if not effort or not takes_reasoning_effort(model):
        return None
    return _CHAT_COMPLETIONS_EFFORT.get(effort, effort)


class EffortSupport(NamedTuple):
    supported: bool
    note: str


def effort_support(kind: str, model: str) -> EffortSupport:
    """What the effort setting does with this provider and model, in words for the picker's tooltip."""
    if kind in ("responses", "responses-ws"):
        return EffortSupport(True, "Effort applies to chat and fixes: sent as reasoning.effort")
    if takes_reasoning_effort(model):
        return EffortSupport(True, "Effort applies to chat and fixes: sent as reasoning_effort "
                                   "(xhigh is sent as high: Chat Completions has no xhigh)")
    return EffortSupport(False, f"This model ({model or 'unknown'}) has no reasoning effort: the setting has no effect")
