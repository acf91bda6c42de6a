"""Prompts for the model (kestrel.providers.prompts): FIM templates by model family, chat messages."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kestrel.providers.base import CompletionPrompt, Snippet
from kestrel.providers.prompts import completion_messages, fim_template_for


def test_fim_templates_by_family():
    p = CompletionPrompt(prefix="def f(", suffix=")\n", language="python", path="/a.py",
                         snippets=(Snippet("/b.py", "import os"),))
    qwen = fim_template_for("Qwen2.5-Coder-0.5B").render(p)
    assert qwen.endswith("<|fim_prefix|>def f(<|fim_suffix|>)\n<|fim_middle|>") and "<|file_sep|>/b.py\nimport os" in qwen
    assert fim_template_for("bigcode/starcoder2-3b").render(p).endswith("<fim_prefix>def f(<fim_suffix>)\n<fim_middle>")
    assert "<｜fim▁hole｜>" in fim_template_for("deepseek-coder-6.7b").render(p)
    cl = fim_template_for("codellama:7b-code").render(p)
    assert "<PRE> def f( <SUF>)\n <MID>" in cl and "# Path: /b.py" in cl
    # The repository's name opens the context in the families trained on it, never a bare prompt.
    named = CompletionPrompt(prefix="x", suffix="", language="python", path="pkg/a.py", repo="shop",
                             snippets=(Snippet("pkg/b.py", "B = 1"),))
    assert fim_template_for("Qwen2.5-Coder-0.5B").render(named).startswith(
        "<|repo_name|>shop\n<|file_sep|>pkg/b.py\nB = 1\n<|file_sep|>pkg/a.py\n<|fim_prefix|>x")
    assert fim_template_for("starcoder2-3b").render(named).startswith("<repo_name>shop<file_sep>pkg/b.py\nB = 1\n")
    assert "shop" not in fim_template_for("Qwen2.5-Coder-0.5B").render(replace(named, snippets=()))
    assert "shop" not in fim_template_for("codellama:7b-code").render(named)
    with pytest.raises(ValueError):
        fim_template_for("x", "nope")
    # An answer already begun goes where the model's own tokens go: after the middle marker.
    begun = CompletionPrompt(prefix="def f(", suffix=")\n", language="python", path="/a.py", answered="a, b")
    assert fim_template_for("Qwen2.5-Coder-0.5B").render(begun).endswith("<|fim_middle|>a, b")
    assert fim_template_for("codestral-22b").render(begun) == "[SUFFIX])\n[PREFIX]def f(a, b"
    assert fim_template_for("smollm-360m").render(begun) == "def f(a, b"


def test_chat_prompt_marks_the_cursor():
    msgs = completion_messages(CompletionPrompt(prefix="a = ", suffix="\n", language="python", path="/a.py", multiline=False))
    assert msgs[0]["role"] == "system" and "a = <|cursor|>\n" in msgs[1]["content"]
