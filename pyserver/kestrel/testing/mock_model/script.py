"""Scripted behaviour: what the mock answers for a prompt (text, TTFT, rate, length)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Optional

DEFAULT_TEXT = (
    "def fibonacci(n):\n"
    "    if n < 2:\n"
    "        return n\n"
    "    return fibonacci(n - 1) + fibonacci(n - 2)\n"
)

_TOKEN_RE = re.compile(r"\s+|\w+|[^\w\s]")
_FILLER_TOKENS = _TOKEN_RE.findall("value = compute(x, y) + 1\n")

DEFAULT_CONFIG: dict[str, Any] = {
    "text": DEFAULT_TEXT,  # default output text
    # [{"match": substr, "text": str, (optional) "ttft_ms", "tps", "alternatives", "tool_calls"}]; `tool_calls`
    # ([{"name", "arguments": {...}}]) are sent as native calls (Chat Completions' `tool_calls`, Responses'
    # `function_call` items) when the request offers tools
    "rules": [],
    "tokens": None,  # int: deterministic filler of N tokens when no rule matches
    "ttft_ms": 0.0,  # delay before the first token
    "tps": 0.0,  # tokens per second, 0 = as fast as possible
    "prefill_tps": 0.0,  # prompt tokens read per second before the first token (a CPU server), 0 = instantly
    "model": "mock-model",  # default model name (the request's model is echoed)
    "models": ["mock-model"],  # ids listed by GET /v1/models
    "steering": True,  # WebSocket response.steer support
    "max_lanes": 16,  # concurrently active WebSocket lanes per connection
    "max_pending_steers": 4,  # per active response
    "fault": None,  # None|"drop"|"429"|"500"|"503"|"malformed"|"stall"|"refuse_ws"|"empty" (a stream with no event)
    # int: a request whose text (every string in it) is longer gets the "empty" fault, as llama.cpp's Python
    # server answers a prompt over its context window with a stream that ends at once
    "context_chars": None,
    "fault_count": 1,  # how many requests get the fault (-1 = all)
    "fault_after": 2,  # tokens before a mid-stream fault (drop/malformed/stall)
    "retry_after": 1,  # seconds, for the "429" fault's retry-after header
    "refuse_ws_status": 426,  # HTTP status for the "refuse_ws" fault (426 or 403)
}


def tokenize(text: str) -> list[str]:
    """Split text into the mock's tokens: runs of whitespace, words, punctuation."""
    return _TOKEN_RE.findall(text)


def _strings(obj: Any, out: list[str]) -> None:
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _strings(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _strings(v, out)


def haystack(*parts: Any) -> str:
    """Every string inside the request parts, one per line: what rules are matched against."""
    out: list[str] = []
    for p in parts:
        if p is not None:
            _strings(p, out)
    return "\n".join(out)


def input_text(inp: Any) -> str:
    """Plain text of a Responses ``input`` (string or list of message items)."""
    if isinstance(inp, str):
        return inp
    parts: list[str] = []
    if isinstance(inp, list):
        for item in inp:
            if isinstance(item, str):
                parts.append(item)
                continue
            if not isinstance(item, dict):
                continue
            content = item.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                for c in content:
                    if isinstance(c, dict) and isinstance(c.get("text"), str):
                        parts.append(c["text"])
            elif isinstance(item.get("text"), str):
                parts.append(item["text"])
    return "\n".join(parts)


@dataclass
class Plan:
    """One generation, fully decided before the first byte is written."""

    tokens: list[str]
    finish_reason: str  # "stop" | "length"
    ttft: float  # seconds
    tps: float
    fault: Optional[str] = None
    fault_after: int = 0
    retry_after: float = 1
    prompt_tokens: int = 0
    # Log probabilities of other tokens at every position ({text: logprob}), sent when a legacy
    # Completions request asks for `logprobs`; the chosen token gets the probability they leave.
    alternatives: dict[str, float] = field(default_factory=dict)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # native calls, after the text


@dataclass
class Script:
    """What the configuration says to answer for one prompt (read under the config lock)."""

    text: Optional[str]
    tokens: Optional[list[str]]
    ttft_ms: float
    tps: float
    fault_after: int
    prefill_tps: float
    retry_after: Any
    alternatives: dict[str, float] = field(default_factory=dict)
    tool_calls: list = field(default_factory=list)


def select_script(cfg: dict[str, Any], hay: str, text_override: Optional[str] = None) -> Script:
    """First matching rule, else ``tokens`` filler, else the default text."""
    ttft_ms = float(cfg.get("ttft_ms") or 0)
    tps = float(cfg.get("tps") or 0)
    text: Optional[str] = text_override
    tokens: Optional[list[str]] = None
    alternatives: dict[str, float] = {}
    tool_calls: list = []
    if text is None:
        for rule in cfg.get("rules") or []:
            m = rule.get("match")
            if m is not None and m in hay:
                text = str(rule.get("text", ""))
                alternatives = {str(k): float(v) for k, v in (rule.get("alternatives") or {}).items()}
                tool_calls = list(rule.get("tool_calls") or [])
                if rule.get("ttft_ms") is not None:
                    ttft_ms = float(rule["ttft_ms"])
                if rule.get("tps") is not None:
                    tps = float(rule["tps"])
                break
    if text is None and cfg.get("tokens"):
        n = int(cfg["tokens"])
        tokens = list(itertools.islice(itertools.cycle(_FILLER_TOKENS), n))
    if text is None and tokens is None:
        text = str(cfg.get("text") or "")
    return Script(
        text=text,
        tokens=tokens,
        ttft_ms=ttft_ms,
        tps=tps,
        fault_after=int(cfg.get("fault_after") or 0),
        prefill_tps=float(cfg.get("prefill_tps") or 0),
        retry_after=cfg.get("retry_after", 1),
        alternatives=alternatives,
        tool_calls=tool_calls,
    )


def steered_text(rules: list, default_text: str, steer_text: str) -> str:
    """Text of the successor of a steered response: a matching rule, else an echo of the steer."""
    for rule in rules:
        m = rule.get("match")
        if m is not None and m in steer_text:
            return str(rule.get("text", ""))
    return f"[steered: {steer_text}] " + default_text


def make_plan(
    script: Script, hay: str, *, fault: Optional[str], stop: Any = None, max_tokens: Optional[int] = None
) -> Plan:
    """Apply the request's ``stop`` and token limit to a script."""
    finish = "stop"
    tokens = script.tokens
    if tokens is None:
        text = script.text
        assert text is not None
        if stop:
            stops = [stop] if isinstance(stop, str) else [s for s in stop if s]
            cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
            if cut >= 0:
                text = text[:cut]
        tokens = tokenize(text)
    if max_tokens is not None and max_tokens >= 0 and len(tokens) > max_tokens:
        tokens = tokens[:max_tokens]
        finish = "length"
    return Plan(
        tokens=tokens,
        finish_reason=finish,
        ttft=script.ttft_ms / 1000.0 + (len(hay) / 4 / script.prefill_tps if script.prefill_tps > 0 else 0.0),
        tps=script.tps,
        fault=fault,
        fault_after=script.fault_after,
        retry_after=script.retry_after,
        prompt_tokens=max(1, len(hay) // 4),
        alternatives=script.alternatives,
        tool_calls=script.tool_calls,
    )
