"""The embedded model computes the logits of each batch's last token only, not of every prompt token.

llama_cpp.server builds its model with `logits_all=True` (llama-cpp-python refuses `logprobs` without it):
llama.cpp then runs the output layer over every prompt token and each row (151,936 floats on Qwen2.5-Coder)
is copied into an n_ctx × vocabulary array. Nothing Kestrel asks reads those rows. Measured: a cold prompt
pass 0.75× as long, the same answers, half the memory (bench local_model section 4).
Why and how it is checked: docs/design-notes.md#pyserverkestrellocallast_logitspy
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import llama_cpp
import numpy as np

from .lookup_draft import MAX_DRAFT

DRAFT_STEP_MAX = MAX_DRAFT + 1  # a decoding step: the last token written and its draft


class GeneratedLogprobs:
    """A logits processor that keeps each step's logits, and the log probability (and the `top` most
    likely alternatives) of each token `generate` then yields: what a streamed `logprobs=N` returns,
    at the cost of one copy and one partial sort of the vocabulary per token. llama-cpp-python's own
    path turns the vocabulary into a Python list and sorts it per token (~0.1 s on 2 cores)."""

    def __init__(self, llm: llama_cpp.Llama, top: int) -> None:
        self.llm, self.top = llm, max(1, top)
        self.logits: np.ndarray | None = None
        self.pending: list[tuple[str, float, dict[str, float]]] = []

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        self.logits = np.array(scores, dtype=np.float32)  # the samplers after this one change `scores`
        return scores

    def took(self, token: int) -> None:
        if self.logits is None:
            return
        logits, self.logits = self.logits, None
        peak = float(logits.max())
        lse = peak + float(np.log(np.exp(logits - peak, dtype=np.float64).sum()))
        text, chosen = self._text(token), float(logits[token]) - lse
        alternatives = {self._text(int(i)): float(logits[i]) - lse
                        for i in np.argpartition(logits, -self.top)[-self.top :]}
        alternatives[text] = chosen
        self.pending.append((text, chosen, alternatives))

    def drain(self) -> dict[str, list[Any]]:
        """The pending tokens in the legacy completions shape (parallel lists)."""
        taken, self.pending = self.pending, []
        return {"tokens": [t for t, _, _ in taken], "token_logprobs": [lp for _, lp, _ in taken],
                "top_logprobs": [top for _, _, top in taken], "text_offset": [0] * len(taken)}

    def _text(self, token: int) -> str:
        return self.llm.detokenize([token]).decode("utf-8", errors="ignore")


class LastTokenLogitsLlama(llama_cpp.Llama):
    """`llama_cpp.Llama` whose prompt pass asks for the last token's logits only.

    Built with `logits_all=True` as the server does (so its `scores` keeps a row per position and
    `logprobs` are allowed); the rows of prompt tokens other than each batch's last are never
    written, so log probabilities of *prompt* tokens (`echo=True`) are not available. Kestrel never
    asks for them. A streamed request's `logprobs` come from `GeneratedLogprobs` instead.
    """

    _logprobs: GeneratedLogprobs | None = None
    _answering = False  # a chat-template request is being generated: the only kind a draft is proposed for

    def create_chat_completion(self, *args: Any, **kwargs: Any) -> Any:
        """A chat answer (an edit, a fix, a chat turn) is drafted from its prompt; a completion is not: on
        make eval's single-line completions drafts made suggestions 4 % later (design notes, lookup_draft.py)."""
        if not kwargs.get("stream"):
            self._answering = True
            try:
                return super().create_chat_completion(*args, **kwargs)
            finally:
                self._answering = False
        return self._drafted(super().create_chat_completion(*args, **kwargs))

    def _drafted(self, chunks: Iterator[dict]) -> Iterator[dict]:
        self._answering = True  # the stream generates lazily, as it is read
        try:
            yield from chunks
        finally:
            self._answering = False
            chunks.close()  # type: ignore[attr-defined]

    def create_completion(self, *args: Any, **kwargs: Any) -> Any:
        top = kwargs.get("logprobs")
        if args or not top or not kwargs.get("stream") or kwargs.get("echo"):
            return super().create_completion(*args, **kwargs)
        sink = GeneratedLogprobs(self, int(top))
        processors = kwargs.get("logits_processor") or []
        return self._with_logprobs(super().create_completion(
            **{**kwargs, "logprobs": None, "logits_processor": llama_cpp.LogitsProcessorList([sink, *processors])}), sink)

    def _with_logprobs(self, chunks: Iterator[dict], sink: GeneratedLogprobs) -> Iterator[dict]:
        self._logprobs = sink  # one request at a time: llama_cpp.server holds the model per request
        try:
            for chunk in chunks:
                choice = chunk["choices"][0]
                if choice.get("text") and sink.pending:
                    choice["logprobs"] = sink.drain()
                yield chunk
        finally:
            self._logprobs = None
            chunks.close()  # type: ignore[attr-defined]

    def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        if self.draft_model is not None and hasattr(self.draft_model, "reset"):
            self.draft_model.reset(enabled=self._answering)  # sizes learnt on the previous request start over
        inner = super().generate(tokens, *args, **kwargs)
        sink = self._logprobs
        if sink is None:
            yield from inner
            return
        try:
            for token in inner:  # _create_completion only iterates: nothing is sent back in
                sink.took(token)
                yield token
        finally:
            inner.close()

    def eval(self, tokens: Sequence[int]) -> None:
        if not self._logits_all:
            return super().eval(tokens)
        # llama_cpp.Llama.eval, with logits for the batch's last token only; or, for a decoding step that
        # carries a speculative draft (a few tokens), for each of them: `generate` checks every drafted
        # token against the model's own pick at its position.
        drafting = (self.draft_model is not None and getattr(self.draft_model, "enabled", True)
                    and len(tokens) <= DRAFT_STEP_MAX)
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        for i in range(0, len(tokens), self.n_batch):
            batch = tokens[i : min(len(tokens), i + self.n_batch)]
            n_past = self.n_tokens
            n_tokens = len(batch)
            self._batch.set_batch(batch=batch, n_past=n_past, logits_all=drafting)
            self._ctx.decode(self._batch)
            self.input_ids[n_past : n_past + n_tokens] = batch
            if drafting:
                self.scores[n_past : n_past + n_tokens, :] = np.ctypeslib.as_array(
                    self._ctx.get_logits(), shape=(n_tokens * self._n_vocab,)).reshape(-1, self._n_vocab)
            else:
                self.scores[n_past + n_tokens - 1, :] = np.ctypeslib.as_array(
                    self._ctx.get_logits(), shape=(self._n_vocab,))
            self.n_tokens += n_tokens
            self._requires_eval = False


def install() -> None:
    """Have llama_cpp.server build its models as `LastTokenLogitsLlama` (its loader calls
    `llama_cpp.Llama` when a model loads); call before the app loads a model."""
    llama_cpp.Llama = LastTokenLogitsLlama  # type: ignore[misc]
