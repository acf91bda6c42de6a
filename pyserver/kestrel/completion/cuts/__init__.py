"""Turn raw model text into what the editor should show: the cut pipeline, read as lists.

Each stage says in one line when it drops or trims; every change is logged at debug with the
stage's name. A cut that fires makes the answer final, so the engine can reply before the
stream ends. Language checks (guards/) run afterwards, in the engine.
"""

from __future__ import annotations

from ...context.window import CursorText
from .base import CutOptions, Shown, first_pick, run
from .block import block_end, single_line
from .brackets import finished, surplus_closer, trailing_space, unbalanced_end
from .cleanup import echoed_line, fences, retyped_line_above, strip_fences, surplus_indent, typed_indent
from .hole import (closes_what_follows, code_follows_in_block, ended_by_model, first_line_only, foreseen_rejoin,
                   left_the_hole,
                   header_without_body, may_still_rejoin, rejoins, retyped_line_end, suffix_sync)

CLEANUP = (fences, echoed_line, typed_indent, surplus_indent, retyped_line_above)
# Code follows the cursor in its block: the first pick that answers gives the middle.
HOLE = (rejoins, closes_what_follows, ended_by_model, foreseen_rejoin, left_the_hole, may_still_rejoin,
        first_line_only)
HOLE_CHECKS = (retyped_line_end, header_without_body)
# Nothing follows in the block: a new block, cut where it ends.
# (Closers after the cursor send it down the hole path: a new block never has them to match.)
# (A closer of a block opened before the answer ends it where the braces close the enclosing block.)
BLOCK = (single_line, surplus_closer, block_end, trailing_space, unbalanced_end, finished)


def cut(raw: str, cur: CursorText, opts: CutOptions) -> Shown:
    """What to show of the model's text `raw` so far at the cursor `cur`."""
    shown = run(CLEANUP, Shown(raw, False), cur, opts)
    if code_follows_in_block(cur):
        middle = first_pick(HOLE, shown.text, cur, opts)
        return run(HOLE_CHECKS, middle, cur, opts)
    return run(BLOCK, shown, cur, opts)


__all__ = ["CutOptions", "Shown", "cut", "strip_fences", "suffix_sync"]
