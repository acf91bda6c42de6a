"""How fast the endpoint reads a prompt, learned from its own streams; the prompt sized to a budget.

A remote model reads thousands of prompt tokens a second, llama.cpp on a laptop CPU a few hundred.
Each stream is a sample: the tokens the endpoint had to read (after what it kept of the previous
prompt: servers reuse the longest common prefix) and its time to first token. A robust line through
them (Theil–Sen) gives the fixed cost and the cost per token; a prompt that would take longer than
`completion.latencyBudgetMs` to read from scratch loses context, then suffix, then prefix, down to
floors. Until there are enough samples, and when the prompt fits, it is sent as the windows give it."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..context.window import CHARS_PER_TOKEN
SAMPLES = 32  # the recent streams the pace is learned from (an endpoint's load changes)
MIN_SAMPLES = 4
MIN_READ_TOKENS = 48  # a sample that read fewer new tokens says little about the cost per token
# Tokens never cut: below them the 0.5B's completions of real files collapsed (a budget that cut its
# prompts to ~300 tokens in proportion: exact 14 -> 2 of 48 on the repository set; design notes).
FLOOR_PREFIX, FLOOR_SUFFIX = 512, 64


@dataclass(frozen=True)
class Windows:
    prefix_tokens: int
    suffix_tokens: int
    context_tokens: int


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class EndpointPace:
    """The samples of one endpoint (a new provider starts a new pace)."""

    def __init__(self) -> None:
        self._samples: deque[tuple[float, float]] = deque(maxlen=SAMPLES)  # (tokens read, ttft ms)
        self._last_prompt = ""

    def read_tokens(self, prompt: str) -> float:
        """Tokens of `prompt` the endpoint has to read: those after what it shares with the last one."""
        return (len(prompt) - _common_prefix(prompt, self._last_prompt)) / CHARS_PER_TOKEN

    def sent(self, prompt: str) -> float:
        """A prompt goes out: the tokens the endpoint will read for it (recorded with its TTFT)."""
        read = self.read_tokens(prompt)
        self._last_prompt = prompt
        return read

    def record(self, read_tokens: float, ttft_ms: float | None) -> None:
        if ttft_ms is not None and ttft_ms >= 0:
            self._samples.append((read_tokens, ttft_ms))

    def snapshot(self) -> list[list[float]]:
        return [[n, ms] for n, ms in self._samples]

    def restore(self, samples: object) -> None:
        """Samples of an earlier run (remembered.py); anything but pairs of non-negative numbers is ignored."""
        if not isinstance(samples, list):
            return
        for pair in samples[-SAMPLES:]:
            if (isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                                  and 0 <= v < 1e9 for v in pair)):
                self._samples.append((float(pair[0]), float(pair[1])))

    def fit(self) -> tuple[float, float] | None:
        """(fixed ms, ms per token read), or None until the samples span enough prompt sizes."""
        from statistics import median  # here, not at the server's start (with fractions and decimal, ~3 ms)

        pts = list(self._samples)
        slopes = [(t2 - t1) / (n2 - n1) for i, (n1, t1) in enumerate(pts) for n2, t2 in pts[i + 1 :]
                  if abs(n2 - n1) >= MIN_READ_TOKENS]
        if len(pts) < MIN_SAMPLES or not slopes:
            return None
        per_token = max(median(slopes), 0.0)
        fixed = max(median(t - per_token * n for n, t in pts), 0.0)
        return fixed, per_token

    def cut(self, sent: Windows, budget_ms: float) -> Windows | None:
        """Smaller windows when the prompt about to be sent (`sent`: the tokens of each of its parts)
        would take longer than `budget_ms` to read from scratch; None when it fits (or the pace is not
        known yet). What is cut first costs the completion least: the context from other files, then
        the text after the cursor down to its floor, then the text before it down to its floor."""
        fitted = self.fit()
        total = sent.prefix_tokens + sent.suffix_tokens + sent.context_tokens
        if fitted is None or budget_ms <= 0 or total <= 0 or fitted[1] <= 0:
            return None
        fixed, per_token = fitted
        over = total - max((budget_ms - fixed) / per_token, 0.0)
        if over <= 0:
            return None
        parts = {"context_tokens": (sent.context_tokens, 0), "suffix_tokens": (sent.suffix_tokens, FLOOR_SUFFIX),
                 "prefix_tokens": (sent.prefix_tokens, FLOOR_PREFIX)}
        kept = {}
        for name, (have, floor) in parts.items():
            take = min(over, max(have - floor, 0))
            kept[name] = int(have - take)
            over -= take
        return Windows(**kept)
