"""Turn a `CompletionPrompt` into what each transport sends: FIM strings or chat messages.

FIM templates follow each model family's published special tokens. Context from other
files goes *before* the current file so the prompt's prefix stays stable while the user
types (llama.cpp and hosted prompt caches only hit on an unchanged prefix).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import CompletionPrompt


@dataclass(frozen=True)
class FimTemplate:
    name: str
    begin: str  # before the prefix
    hole: str  # between prefix and suffix
    end: str  # after the suffix: the model writes the middle
    stop: tuple[str, ...]
    file_sep: str | None = None  # repo-level context separator, when the family has one
    repo_name: str | None = None  # the repository's name before its files ({} is the name), when the family has one
    suffix_first: bool = False  # Codestral/Mistral put the suffix before the prefix
    prefix_only: bool = False  # models without FIM tokens: plain continuation of the prefix

    def render(self, prompt: CompletionPrompt) -> str:
        context = render_context(prompt, self.file_sep, self.repo_name)
        if self.prefix_only:
            return f"{context}{prompt.prefix}{prompt.answered}"
        if self.suffix_first:
            return f"{context}{self.begin}{prompt.suffix}{self.hole}{prompt.prefix}{self.end}{prompt.answered}"
        return f"{context}{self.begin}{prompt.prefix}{self.hole}{prompt.suffix}{self.end}{prompt.answered}"


FIM_TEMPLATES: dict[str, FimTemplate] = {
    "qwen": FimTemplate(
        "qwen", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>",
        ("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>", "<|fim_prefix|>"),
        file_sep="<|file_sep|>", repo_name="<|repo_name|>{}\n",
    ),
    "starcoder": FimTemplate(
        "starcoder", "<fim_prefix>", "<fim_suffix>", "<fim_middle>",
        ("<|endoftext|>", "<file_sep>", "<fim_prefix>"),
        file_sep="<file_sep>", repo_name="<repo_name>{}",
    ),
    "deepseek": FimTemplate(
        "deepseek", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>",
        ("<｜end▁of▁sentence｜>", "<｜fim▁begin｜>", "<|EOT|>"),
    ),
    "codellama": FimTemplate("codellama", "<PRE> ", " <SUF>", " <MID>", ("<EOT>", "<PRE>", "<SUF>")),
    "codestral": FimTemplate("codestral", "[SUFFIX]", "[PREFIX]", "", ("</s>", "[PREFIX]", "[SUFFIX]"), suffix_first=True),
    "plain": FimTemplate("plain", "", "", "", ("<|endoftext|>", "<|im_end|>", "</s>", "\n\n\n"), prefix_only=True),
}


def fim_template_for(model: str, setting: str = "auto") -> FimTemplate:
    """Pick the template from the setting, else from the model's name."""
    if setting != "auto":
        try:
            return FIM_TEMPLATES[setting]
        except KeyError:
            raise ValueError(f"unknown FIM template {setting!r}: use one of {', '.join(FIM_TEMPLATES)}") from None
    name = model.lower()
    for needle, key in (
        ("qwen", "qwen"), ("starcoder", "starcoder"), ("starchat", "starcoder"), ("deepseek", "deepseek"),
        ("codellama", "codellama"), ("code-llama", "codellama"), ("codestral", "codestral"), ("mistral", "codestral"),
        ("smollm", "plain"), ("llama-3", "plain"), ("phi-", "plain"),
    ):
        if needle in name:
            return FIM_TEMPLATES[key]
    return FIM_TEMPLATES["qwen"]  # the most common open FIM format today


def render_context(prompt: CompletionPrompt, file_sep: str | None, repo_name: str | None = None) -> str:
    if not prompt.snippets:
        # No repository context: the bare FIM prompt. A lone `<|file_sep|>{path}` header makes
        # small instruct models (Qwen2.5-Coder-0.5B measured) ignore the suffix.
        return ""
    if file_sep:
        # The family's repository format as its authors trained it (Qwen2.5-Coder's report, StarCoder2):
        # the repository's name, then each file after a separator and its path, the current file last.
        parts = [repo_name.format(prompt.repo)] if repo_name and prompt.repo else []
        parts += [f"{file_sep}{s.path}\n{s.text}\n" for s in prompt.snippets]
        parts.append(f"{file_sep}{prompt.path}\n")
        return "".join(parts)
    comment = comment_prefix(prompt.language)
    lines = []
    for s in prompt.snippets:
        lines.append(f"{comment} Path: {s.path}")
        lines.extend(f"{comment} {line}" for line in s.text.splitlines())
    return "\n".join(lines) + "\n"


def comment_prefix(language: str) -> str:
    if language in ("python", "shellscript", "ruby", "perl", "r", "yaml", "toml", "dockerfile", "makefile"):
        return "#"
    if language in ("lua", "sql", "haskell"):
        return "--"
    return "//"


CURSOR = "<|cursor|>"

COMPLETION_INSTRUCTIONS = (
    "You are Kestrel, a code completion engine inside an editor. The user's file is shown with "
    f"{CURSOR} marking the cursor. Reply with ONLY the exact text to insert at {CURSOR}: no "
    "explanation, no markdown fences, never repeat code that is already before or after the cursor."
)


def completion_messages(prompt: CompletionPrompt) -> list[dict]:
    """Chat-style prompt for providers without FIM (Responses, Chat Completions)."""
    parts = []
    for s in prompt.snippets:
        parts.append(f"Context from {s.path}:\n```\n{s.text}\n```\n")
    scope = (
        "Complete the current statement or block (several lines are fine)."
        if prompt.multiline
        else "Complete only the rest of the current line."
    )
    parts.append(f"File {prompt.path} ({prompt.language}). {scope}\n```\n{prompt.prefix}{CURSOR}{prompt.suffix}\n```")
    return [
        {"role": "system", "content": COMPLETION_INSTRUCTIONS},
        {"role": "user", "content": "\n".join(parts)},
    ]
