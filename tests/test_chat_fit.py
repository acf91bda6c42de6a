"""Fitting a conversation into a small model's context window (chat/fit.py)."""

from __future__ import annotations

import pytest

from kestrel.chat.fit import DoesNotFit, fit, size

SYSTEM = {"role": "system", "content": "You are Kestrel."}
FILE = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n\n" for i in range(200)) + \
    "def parse_due(text):\n    return text[:10]\n"


def ask(question: str, block: str = FILE, label: str = "File tasks.py") -> dict:
    return {"role": "user", "content": f"{label}:\n```python\n{block}\n```\n\n{question}"}


def test_a_conversation_that_fits_is_sent_as_it_is():
    messages = [SYSTEM, ask("What does parse_due return?")]
    fitted = fit(messages, size(messages))
    assert fitted.messages is messages and fitted.note is None


def test_earlier_turns_go_first_oldest_first():
    old = [{"role": "user", "content": "x" * 2000}, {"role": "assistant", "content": "y" * 2000},
           {"role": "user", "content": "short"}, {"role": "assistant", "content": "reply"}]
    last = {"role": "user", "content": "And now?"}
    fitted = fit([SYSTEM, *old, last], size([SYSTEM, *old[2:], last]))
    assert fitted.messages == [SYSTEM, *old[2:], last] and fitted.note == "2 earlier messages left out"


def test_a_long_block_keeps_the_lines_the_question_names_and_says_which():
    messages = [SYSTEM, ask("What does parse_due return?")]
    fitted = fit(messages, 300)
    content = fitted.messages[1]["content"]
    assert size(fitted.messages) <= 300
    assert "def parse_due(text):\n    return text[:10]" in content and "def helper_0(" not in content
    assert content.endswith("```\n\nWhat does parse_due return?")  # the question is never cut
    n = FILE.count("\n") + 1
    first = content.split("```python\n")[1].split("\n")[0]
    assert first.startswith("… (lines 1-") and first.endswith("not shown: the model's context window is full)")
    assert fitted.note.startswith("File tasks.py (lines ") and fitted.note.endswith(f"-{n} of {n}) sent")


def test_a_question_naming_nothing_in_the_block_keeps_its_head_and_rare_words_outweigh_common_ones():
    fitted = fit([SYSTEM, ask("Explain this file.")], 300)
    assert "def helper_0(value):" in fitted.messages[1]["content"]
    # "value" is on every other line, helper_150 on one: the window goes where helper_150 is.
    fitted = fit([SYSTEM, ask("What is the value of helper_150?")], 300)
    assert "def helper_150(value):" in fitted.messages[1]["content"]


def test_the_largest_block_is_cut_first_and_a_small_one_kept_whole():
    small = "def parse_due(text):\n    return text[:10]"
    both = {"role": "user", "content": f"Selected lines 1-2 of tasks.py:\n```python\n{small}\n```\n\n"
                                       f"File tasks.py:\n```python\n{FILE}\n```\n\nWhy?"}
    fitted = fit([SYSTEM, both], 400)
    content = fitted.messages[1]["content"]
    assert content.startswith(f"Selected lines 1-2 of tasks.py:\n```python\n{small}\n```")
    assert fitted.note.startswith("File tasks.py (lines ") and "Selected" not in fitted.note


def test_a_question_too_long_even_without_its_code_is_refused_with_the_reason():
    with pytest.raises(DoesNotFit, match="shorten the question"):
        fit([SYSTEM, ask("why? " * 2000)], 500)
