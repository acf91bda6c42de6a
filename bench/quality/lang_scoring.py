"""Scores for the line and block tasks of real package code (no tests can run for it).

What is scored is what the editor holds after accepting the suggestion: the accepted document is
compared with the original file. `completion()` finds the text that stands where the hidden text
stood (for a plain insertion at the cursor: the suggestion itself; an item whose range replaced text
around the cursor widens both sides to match). Trailing whitespace is ignored on both sides.

- exact: the completion equals the hidden text.
- edit similarity: 1 - Levenshtein(completion, truth) / max(len) (1 = identical; nothing shown = 0).
- identifier F1: the identifiers of the completion vs the truth's, as multisets (nothing shown = 0).
- useful: shown and edit similarity >= USEFUL (0.7); noise: shown and edit similarity < NOISE (0.3).
- breaks syntax: Kestrel's own tree-sitter guard (kestrel.completion.guards.treesitter, read only)
  refuses the shown text between the document's text before and after it: the code around the
  cursor gets a parse error that the unfinished code did not have (at or before the first error it
  had). Kestrel runs the same check before it shows anything, so its own rate is ~0 by design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

USEFUL = 0.7
NOISE = 0.3
IDENT = re.compile(r"[A-Za-z_$][\w$]*")


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute: 1 each); Myers' bit-parallel algorithm on Python
    ints, O(len(a) * len(b) / 64)-ish."""
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    # b is the pattern (bit vectors over its characters), a the text
    m = len(b)
    peq: dict[str, int] = {}
    for i, c in enumerate(b):
        peq[c] = peq.get(c, 0) | (1 << i)
    mask = (1 << m) - 1
    high = 1 << (m - 1)
    pv, mv, score = mask, 0, m
    for c in a:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & mask)
        mh = pv & xh
        if ph & high:
            score += 1
        elif mh & high:
            score -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        pv = mh | (~(xv | ph) & mask)
        mv = ph & xv
    return score


def edit_similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    return 1.0 - levenshtein(a, b) / max(len(a), len(b))


def identifier_f1(candidate: str, truth: str) -> float:
    got, want = IDENT.findall(candidate), IDENT.findall(truth)
    if not want:
        return 1.0 if not got else 0.0
    if not got:
        return 0.0
    left = {}
    for w in want:
        left[w] = left.get(w, 0) + 1
    hit = 0
    for g in got:
        if left.get(g, 0) > 0:
            left[g] -= 1
            hit += 1
    if not hit:
        return 0.0
    p, r = hit / len(got), hit / len(want)
    return 2 * p * r / (p + r)


def _common_suffix(a: str, b: str, limit: int) -> int:
    n = 0
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def completion(prefix: str, truth: str, suffix: str, document: str) -> tuple[str, str, int, int]:
    """(completion, the truth it is compared with, start, end): the part of the accepted `document`
    between what is left of `prefix` and of `suffix`, and the original text at the same place."""
    start = 0
    limit = min(len(prefix), len(document))
    while start < limit and document[start] == prefix[start]:
        start += 1
    tail = _common_suffix(document, suffix, min(len(suffix), len(document) - start))
    end = len(document) - tail
    return document[start:end], prefix[start:] + truth + suffix[: len(suffix) - tail], start, end


JUDGE_MS = 10_000.0  # the whole-document check's budget when the guard judges (the eval): in effect none


@dataclass
class _Guards:
    cache: dict[str, Any]

    def refuses(self, language: str, before: str, text: str, after: str) -> str | None:
        guard = self.cache.get(language)
        if guard is None:
            from kestrel.completion.guards.treesitter import TreeSitterGuard

            # No time budget for the judge: its verdict must not depend on how busy the CPU is (with
            # the server's 5 ms, a whole-document parse slowed by a model on the same cores kept a
            # refusal that the unhurried parse lifts).
            guard = self.cache[language] = TreeSitterGuard(language, whole_document_ms=JUDGE_MS)
        return guard.refuses(before, text, after)


GUARDS = _Guards({})


def score(language: str, prefix: str, truth: str, suffix: str, document: str, shown_text: str) -> dict[str, Any]:
    """The scores of one answer: `document` is the editor's text after accepting it (prefix +
    suffix when nothing was shown), `shown_text` the suggestion's text."""
    shown = bool(shown_text.strip())
    cand, want, start, end = completion(prefix, truth, suffix, document)
    cand, want = cand.rstrip(), want.rstrip()
    sim = edit_similarity(cand, want) if shown else 0.0
    why = GUARDS.refuses(language, document[:start], document[start:end], document[end:]) if shown else None
    return {
        "shown": shown,
        "exact": shown and cand == want,
        "edit_sim": round(sim, 4),
        "ident_f1": round(identifier_f1(cand, want), 4) if shown else 0.0,
        "useful": shown and sim >= USEFUL,
        "noise": shown and sim < NOISE,
        "breaks_syntax": why is not None,
        **({"syntax": why} if why else {}),
    }
