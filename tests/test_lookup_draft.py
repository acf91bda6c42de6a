"""Speculative drafts for the embedded model, looked up in the prompt (kestrel/local/lookup_draft.py): what
is proposed, and how the draft's size follows what the model kept. That the model checks each drafted token
(several tokens a pass, the answer it gives without drafts): tests/test_last_logits.py."""

from __future__ import annotations

import numpy as np

from kestrel.local.lookup_draft import COOL_DOWN, MAX_DRAFT, PromptLookupDraft, lookup



def ids(*tokens: int) -> np.ndarray:
    return np.array(tokens, dtype=np.intc)


def test_the_draft_is_what_followed_the_latest_occurrence_of_the_longest_tail():
    # the tail (7, 8) occurs twice: the later one (followed by 9, 10) is the text being copied
    assert lookup(ids(7, 8, 1, 2, 7, 8, 9, 10, 3, 7, 8), 4).tolist() == [9, 10, 3, 7]
    # three tokens match only at the first place; two would have matched the later one
    assert lookup(ids(5, 7, 8, 1, 6, 7, 8, 2, 5, 7, 8), 2).tolist() == [1, 6]
    # the tail itself is not an earlier occurrence; one token alone is not looked up
    assert lookup(ids(1, 2, 3, 4), 5).size == 0
    assert lookup(ids(1, 2, 3, 1), 5).size == 0
    assert lookup(ids(4), 5).size == 0
    # no more than asked, and never past what is written
    assert lookup(ids(1, 2, 3, 4, 5, 1, 2), 2).tolist() == [3, 4]
    assert lookup(ids(1, 2, 1, 2), 9).tolist() == [1, 2]


def test_the_draft_grows_when_taken_and_pauses_after_two_rejected_at_once():
    draft = PromptLookupDraft()
    text = list(range(100, 140))
    context = ids(*text, *text[:3])  # copying the text again: every draft is right
    first = draft(context)
    assert first.tolist() == text[3 : 3 + MAX_DRAFT]
    taken = ids(*context, *first, text[3 + MAX_DRAFT])  # all kept, and the model's next token
    assert draft(taken).size == MAX_DRAFT and draft.accepted == MAX_DRAFT

    # Rejected at once, twice running: half the size, then a pause of COOL_DOWN tokens, then small drafts.
    draft.reset()
    copied = list(range(100, 120))
    other = [101, 102, 7, *range(50, 70)]  # the same two tokens, followed by something else
    context = [*copied, 0, *other, 0, *copied[:3]]
    assert draft(ids(*context)).tolist() == copied[3 : 3 + MAX_DRAFT]
    context.append(7)  # the model wrote 7, not 103: nothing kept
    assert draft(ids(*context)).tolist() == list(range(50, 50 + MAX_DRAFT // 2))  # (101, 102, 7) is found
    context.append(8)  # rejected at once again
    assert draft(ids(*context)).size == 0
    for _ in range(COOL_DOWN - 1):
        context.append(3)
        assert draft(ids(*context)).size == 0
    context += copied[5:8]
    assert draft(ids(*context)).tolist() == copied[8:10]
