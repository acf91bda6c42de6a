"""How sure the model was of a change: at the token where its answer parts from the code as written,
log p(its token) − log p(the listed tokens that keep to the code), in nats, from the endpoint's log
probabilities. The line scan weighs its slips with it (a repair's whole rewrite was weighed too, and
it did not tell right from wrong). Why: docs/design-notes.md#pyserverkestreleditsline_scanpy
"""

from __future__ import annotations

import math
from typing import Callable

TOP_LOGPROBS = 5  # alternatives asked for per token
# A change is trusted when the model found it at least ten times as likely as the code as written
# (a round figure fixed before measuring; what it does on real bugs: the design notes).
MIN_MARGIN = math.log(10)


def margin(chosen: str, top: dict[str, float], keeps: Callable[[str], bool]) -> float | None:
    """log p(`chosen`) − log p(the alternatives in `top` that `keeps`). When none of the listed ones
    keeps to the code, its probability is at most the least listed one's: the margin is a lower bound."""
    if not top:
        return None
    kept = [lp for t, lp in top.items() if t and keeps(t)]
    chosen_lp = top.get(chosen, max(top.values()))
    if not kept:
        return chosen_lp - min(top.values())
    peak = max(kept)
    return chosen_lp - (peak + math.log(sum(math.exp(lp - peak) for lp in kept)))
