"""The text around the cursor (kestrel.context.window): UTF-16 columns, prefix and suffix windows."""

from __future__ import annotations

from kestrel.context.window import column_to_index, prefix_window, split_at, suffix_window


def test_split_at_utf16_surrogates_and_clamping():
    text = "a😀b = 1\nsecond\n"
    cur = split_at(text, 0, 3)  # 'a' + surrogate pair (2 units) -> before 'b'
    assert cur.before == "a😀" and cur.line_after == "b = 1"
    assert split_at(text, 0, 2).before == "a😀"  # inside the pair: never split a character
    assert split_at(text, 0, 999).line_after == ""  # past end of line
    cur = split_at(text, 99, 0)  # past end of file
    assert cur.after == "" and cur.before == text
    assert column_to_index("é", 2, "utf-8") == 1 and column_to_index("é", 1, "utf-32") == 1


def test_prefix_window_is_stable_while_typing():
    before = "".join(f"line {i}\n" for i in range(3000))
    w1 = prefix_window(before, 500)
    w2 = prefix_window(before + "x", 500)
    assert w2 == w1 + "x"  # same start: prompt caches keep hitting
    assert len(w1) <= 500 * 3.5 and w1.startswith("line ")
    assert prefix_window("short", 500) == "short"


def test_suffix_window_cuts_on_a_line():
    after = "".join(f"row {i}\n" for i in range(1000))
    s = suffix_window(after, 50)
    assert s.endswith("\n") and len(s) <= 175
