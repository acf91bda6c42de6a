"""The scores of one answer to a repository task, with bench.quality.lang_scoring's functions: what
the editor holds after accepting the suggestion is compared with the real file (lang_scoring.
completion: the text standing where the reference stood, an item's replaced range honoured; trailing
whitespace ignored).

- exact: the completion equals the reference (the rest of the line);
- edit_sim: 1 - Levenshtein / longer length (nothing shown = 0);
- ident_f1: identifiers of the completion vs the reference's (multisets; nothing shown = 0);
- uses_name: shown and the cross-file name at the cursor is one of the completion's identifiers.

*useful* and *noise* are thresholds on edit_sim applied in summary.py (parameters there), not here.
"""

from __future__ import annotations

from typing import Any

from bench.quality.lang_scoring import IDENT, completion, edit_similarity, identifier_f1

from .tasks import RepoTask


def score(task: RepoTask, document: str, shown_text: str) -> dict[str, Any]:
    shown = bool(shown_text.strip())
    cand, want, _, _ = completion(task.prefix, task.truth, task.suffix, document)
    cand, want = cand.rstrip(), want.rstrip()
    sim = edit_similarity(cand, want) if shown else 0.0
    return {
        "shown": shown,
        "exact": shown and cand == want,
        "edit_sim": round(sim, 4),
        "ident_f1": round(identifier_f1(cand, want), 4) if shown else 0.0,
        "uses_name": shown and task.name in IDENT.findall(cand),
    }
