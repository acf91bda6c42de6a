"""The embedded model computes the logits of each batch's last token only, not of every prompt token.

llama_cpp.server builds its model with `logits_all=True` (llama-cpp-python refuses `logprobs` without it):
llama.cpp then runs the output layer over every prompt token and each row (151,936 floats on Qwen2.5-Coder)
is copied into an n_ctx × vocabulary array. Nothing Kestrel asks reads those rows. Measured: a cold prompt
pass 0.75× as long, the same answers, half the memory (bench local_model section 4).
Why and how it is checked: docs/design-notes.md#pyserverkestrellocallast_logitspy
"""

from __future__ import annotations

from typing import Sequence

import llama_cpp
import numpy as np


class LastTokenLogitsLlama(llama_cpp.Llama):
    """`llama_cpp.Llama` whose prompt pass asks for the last token's logits only.

    Built with `logits_all=True` as the server does (so its `scores` keeps a row per position and
    `logprobs` are allowed); the rows of prompt tokens other than each batch's last are never
    written, so log probabilities of *prompt* tokens (`echo=True`) are not available. Kestrel never
    asks for them.
    """

    def eval(self, tokens: Sequence[int]) -> None:
        if not self._logits_all:
            return super().eval(tokens)
        # llama_cpp.Llama.eval, with logits for the batch's last token only.
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        for i in range(0, len(tokens), self.n_batch):
            batch = tokens[i : min(len(tokens), i + self.n_batch)]
            n_past = self.n_tokens
            n_tokens = len(batch)
            self._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)  # the last token's only
            self._ctx.decode(self._batch)
            self.input_ids[n_past : n_past + n_tokens] = batch
            self.scores[n_past + n_tokens - 1, :] = np.ctypeslib.as_array(
                self._ctx.get_logits(), shape=(self._n_vocab,))
            self.n_tokens += n_tokens
            self._requires_eval = False


def install() -> None:
    """Have llama_cpp.server build its models as `LastTokenLogitsLlama` (its loader calls
    `llama_cpp.Llama` when a model loads); call before the app loads a model."""
    llama_cpp.Llama = LastTokenLogitsLlama  # type: ignore[misc]
