"""Open-tab snippets (context/neighbors.py): what is sent, and that typing along a line keeps it."""

from __future__ import annotations

from kestrel.context.neighbors import NeighborIndex

TAB = "".join(f"def helper_{i}(order):\n    return order.total * {i}\n\n\n" for i in range(12)) + \
    "def shipping_cost(order, country):\n    rate = RATES[country]\n    return order.weight * rate\n"
OTHER = "".join(f"def render_{i}(page):\n    return page.html\n\n\n" for i in range(12))
CANDIDATES = [("file:///w/ship.py", "ship.py", 1, TAB), ("file:///w/pages.py", "pages.py", 1, OTHER)]
ABOVE = "from ship import shipping_cost\n\n\ndef invoice(order, country):\n    weight = order.weight\n"


def test_the_window_most_like_the_code_above_the_cursor_is_sent():
    snippet = NeighborIndex().snippets(ABOVE + "    ", CANDIDATES, 2000)[0]  # the most alike first
    assert snippet.path == "ship.py" and "def shipping_cost(order, country):" in snippet.text


def test_typing_along_the_cursor_line_never_changes_the_snippets():
    """The snippets go before the prefix: a change on a keystroke would make the model read the whole
    prompt again. The line being typed is in the other tab's words (`render_1`, `page`): still the same."""
    index = NeighborIndex()
    line = "    html = render_1(page).html + render_2(page).html + render_3(page).html"
    seen = {index.snippets(ABOVE + line[:k], CANDIDATES, 800) for k in range(len(line) + 1)}
    assert len(seen) == 1
    # A new line is new context: the line just finished now counts.
    moved = index.snippets(ABOVE + line + "\n    ", CANDIDATES, 800)
    assert moved != next(iter(seen))
