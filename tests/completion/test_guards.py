"""Language guards on a final answer (kestrel.completion.guards): a refused block falls back to its
first line. The guards' checks are in test_syntax_guard.py and test_name_guard.py; golden cases with
a `language` run them too."""

from __future__ import annotations

from scripted_completion import complete_at


def test_a_block_that_does_not_fit_the_code_around_it_offers_its_first_line_if_that_fits():
    # The line that opens the `if` is missing; the model writes it, then a branch of its own that
    # collides with the `else:` below (two `else`s). The block is broken; its first line is right.
    doc = "def same(i, j):\n        return '0'\n    else:\n        return '1'\n"
    cursor = doc.index("        return '0'")
    text, _ = complete_at(doc, cursor, "    if i == j:\n        return '1'\n    else:")
    assert text == "    if i == j:\n"
    # Nothing when the first line does not fit either.
    text, _ = complete_at(doc, cursor, "    if i == j\n        return '1'\n    else:")
    assert text == ""
