"""What the two raw systems send: the model's FIM prompt on the file alone (bench.quality.raw's
`fim_prompt`, the windows of bench.quality.lang_tasks.raw_window), and the same with the oracle
definitions in Qwen2.5-Coder's repository format:

    <|repo_name|>{repo}\\n
    <|file_sep|>{path}\\n{content}\\n            (one per context file)
    <|file_sep|>{current path}\\n<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>

A `<|file_sep|>` header with no other files made the 0.5B ignore the suffix (shared/DESIGN.md);
with no context files this falls back to the bare FIM prompt.

`RepoFim` is bench.quality.raw.RawFim (same stops, caps and single-line cut), its whole-prompt
answers one line by default; both take a key for an OpenAI-compatible endpoint.
"""

from __future__ import annotations

from bench.quality.raw import RawAnswer, RawFim, fim_prompt

REPO_NAME, FILE_SEP = "<|repo_name|>", "<|file_sep|>"


def repo_prompt(repo: str, context: tuple[tuple[str, str], ...] | list[tuple[str, str]], path: str, prefix: str,
                suffix: str) -> str:
    """Qwen2.5-Coder's repository-level FIM prompt (see the module docstring)."""
    if not context:
        return fim_prompt(prefix, suffix)
    files = "".join(f"{FILE_SEP}{p}\n{content}\n" for p, content in context)
    return f"{REPO_NAME}{repo}\n{files}{FILE_SEP}{path}\n{fim_prompt(prefix, suffix)}"


class RepoFim(RawFim):
    """RawFim with a key for an endpoint other than the local llama.cpp; `complete_prompt(prompt)`
    answers one line."""

    async def complete_prompt(self, prompt: str, single_line: bool = True) -> RawAnswer:
        return await super().complete_prompt(prompt, single_line)
