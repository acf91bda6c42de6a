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


def test_a_line_that_opens_a_body_where_the_code_takes_none_is_shown_without_it():
    """In a Go interface the model wrote a method's signature as if defining it (`… error {`): the
    line without the brace fits and is shown."""
    from kestrel.completion import guards
    from kestrel.completion.cuts.base import Shown
    from kestrel.context.window import split_at

    doc = "package kv\n\ntype WatchOpt interface {\n\tconfigureWatcher(opts\n}\n"
    cur = split_at(doc, 3, len("\tconfigureWatcher(opts"))
    assert guards.fit(cur, Shown(" *watchOpts) error {", True), "go", None).text == " *watchOpts) error"
    # Not for a `${` or `#{` (a template's, not a body's), nor for more than one line.
    assert guards._without_opened_body("a, b) {") == "a, b)" and guards._without_opened_body("`x ${") == ""
    assert guards._without_opened_body("a) {\n  b") == ""
