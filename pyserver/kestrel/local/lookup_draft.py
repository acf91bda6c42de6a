"""Speculative decoding for the embedded model, its drafts looked up in the prompt.

A rewrite, a fix, a chat answer quoting the file: most of what the model writes is already in its prompt.
The last tokens written are looked up there, what followed them is proposed, and the model checks the whole
draft in one pass (llama-cpp-python's `generate` keeps the tokens it would have picked itself). Where the
lookup keeps guessing wrong, the drafts shrink to nothing for a while.
Why and what it measured: docs/design-notes.md#pyserverkestrellocallookup_draftpy
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # the launcher child has llama-cpp-python; Kestrel's own process imports this only for tests
    from llama_cpp.llama_speculative import LlamaDraftModel
except ImportError:  # pragma: no cover
    LlamaDraftModel = object  # type: ignore[misc,assignment]

MAX_NGRAM = 3  # the longest run of last tokens looked up (longer is more specific, rarer)
MIN_NGRAM = 2  # one token alone (`(`, a newline) matches everywhere and predicts nothing
MAX_DRAFT = 10  # tokens proposed at most: one pass checks them all
COOL_DOWN = 8  # tokens written without drafts after a draft the model rejected at once, twice running


class PromptLookupDraft(LlamaDraftModel):  # type: ignore[misc]
    """Drafts from the latest earlier occurrence of the longest suffix n-gram, sized by how the last
    draft was taken: doubled (up to MAX_DRAFT) when taken whole, what was kept plus one when taken in
    part, halved when rejected at its first token, and none for COOL_DOWN tokens after two such
    rejections running."""

    def __init__(self, max_draft: int = MAX_DRAFT) -> None:
        self.max_draft = max_draft
        self.size = max_draft
        self.misses = 0
        self.quiet_until = 0
        self.last: tuple[int, np.ndarray] | None = None  # (where the last draft began, its tokens)
        self.proposed = 0
        self.accepted = 0
        self.enabled = True  # off for a request whose answer is not drafted (a completion)

    def __call__(self, input_ids: np.ndarray, /, **kwargs: Any) -> np.ndarray:
        n = int(input_ids.shape[0])
        self._learn(input_ids, n)
        if not self.enabled or n < self.quiet_until:
            return np.array([], dtype=np.intc)
        draft = lookup(input_ids, self.size)
        self.last = (n, draft) if draft.size else None
        self.proposed += int(draft.size)
        return draft

    def reset(self, enabled: bool = True) -> None:
        """A new request: the drafts start at full size again (or none are proposed for it)."""
        self.size, self.misses, self.quiet_until, self.last = self.max_draft, 0, 0, None
        self.enabled = enabled

    def _learn(self, input_ids: np.ndarray, n: int) -> None:
        """How much of the last draft the model kept: the tokens now written where it was proposed."""
        if self.last is None:
            return
        start, draft = self.last
        self.last = None
        written = input_ids[start : min(n, start + draft.size)]
        kept = int(np.argmin(np.append(written == draft[: written.size], False)))
        self.accepted += kept
        if kept == draft.size:
            self.size, self.misses = min(self.max_draft, self.size * 2), 0
        elif kept == 0:
            self.misses += 1
            self.size = max(1, self.size // 2)
            if self.misses >= 2:
                self.quiet_until, self.misses, self.size = n + COOL_DOWN, 0, 2
        else:
            self.size, self.misses = max(2, kept + 1), 0


def lookup(input_ids: np.ndarray, size: int) -> np.ndarray:
    """The up to `size` tokens that followed the latest earlier occurrence of the longest suffix n-gram
    (MAX_NGRAM down to MIN_NGRAM tokens) of `input_ids`; empty when none occurs."""
    n = int(input_ids.shape[0])
    for k in range(min(MAX_NGRAM, n - 1), MIN_NGRAM - 1, -1):
        tail = input_ids[n - k :]
        windows = np.lib.stride_tricks.sliding_window_view(input_ids[: n - 1], k)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        for at in hits[::-1]:  # the latest occurrence first: the text being copied is the nearest
            begin = int(at) + k
            if begin < n:
                return np.ascontiguousarray(input_ids[begin : min(n, begin + size)], dtype=np.intc)
    return np.array([], dtype=np.intc)


def install() -> None:
    """Have llama_cpp.server build Kestrel's draft where its settings ask for a prompt-lookup draft (its
    loader calls `llama_speculative.LlamaPromptLookupDecoding(num_pred_tokens=...)`); call before the
    app loads a model."""
    from llama_cpp import llama_speculative

    llama_speculative.LlamaPromptLookupDecoding = (  # type: ignore[misc,assignment]
        lambda num_pred_tokens=MAX_DRAFT, **_: PromptLookupDraft(num_pred_tokens))
