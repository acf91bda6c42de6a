"""Quick fixes: "Fix with Kestrel" / "Explain with Kestrel" for any diagnostic.

Listing actions costs nothing: no model call happens until the user picks one
(`codeAction/resolve`, or the action's command for clients without resolve support).
A fix is returned as the smallest edit that turns the region into the model's version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..context.window import line_span, line_start_offset
from ..providers.base import Provider, ProviderError, StreamStats
from .diff import clean_rewrite, minimal_replacement, to_lsp_edits

CONTEXT_LINES = 20

FIX_INSTRUCTIONS = (
    "You fix code. You are given a file and a problem reported on some of its lines. Reply with ONLY the "
    "corrected version of the lines between <region> and </region>, without the markers, without "
    "explanation, keeping everything that does not need to change exactly as it is."
)
EXPLAIN_INSTRUCTIONS = "You explain compiler and linter diagnostics to programmers briefly and concretely."


@dataclass(frozen=True)
class Region:
    start_line: int
    end_line: int  # inclusive
    start: int  # offsets into the document
    end: int


def region_for(text: str, first_line: int, last_line: int) -> Region:
    start, end = line_span(text, first_line, last_line)
    return Region(first_line, last_line, start, end)


def fix_messages(text: str, region: Region, message: str, language: str, path: str) -> list[dict]:
    ctx_start = line_start_offset(text, max(region.start_line - CONTEXT_LINES, 0))
    ctx_end_line = line_start_offset(text, region.end_line + CONTEXT_LINES + 1)
    ctx_end = len(text) if ctx_end_line <= region.end else ctx_end_line
    shown = (
        text[ctx_start : region.start] + "<region>\n" + text[region.start : region.end] + "\n</region>" + text[region.end : ctx_end]
    )
    user = f"File {path} ({language}). Problem on lines {region.start_line + 1}-{region.end_line + 1}: {message}\n```\n{shown}\n```"
    return [{"role": "system", "content": FIX_INSTRUCTIONS}, {"role": "user", "content": user}]


def explain_messages(text: str, region: Region, message: str, language: str, path: str) -> list[dict]:
    code = text[region.start : region.end]
    user = f"In {path} ({language}), lines {region.start_line + 1}-{region.end_line + 1}:\n```\n{code}\n```\nDiagnostic: {message}\nWhat is wrong and how do I fix it?"
    return [{"role": "system", "content": EXPLAIN_INSTRUCTIONS}, {"role": "user", "content": user}]


async def collect(provider: Provider, messages: list[dict], prediction: str | None = None) -> str:
    stats = StreamStats()
    stream = provider.chat(messages, stats, prediction=prediction) if prediction else provider.chat(messages, stats)
    return "".join([chunk async for chunk in stream])


async def compute_fix(
    provider: Provider, text: str, region: Region, message: str, language: str, path: str, encoding: str
) -> dict[str, Any] | None:
    """A TextEdit (as LSP JSON) for the fix, or None when the model proposes no change."""
    answer = await collect(provider, fix_messages(text, region, message, language, path),
                           prediction=text[region.start : region.end])  # most of a fix is unchanged text
    old_region = text[region.start : region.end]
    start, end, replacement = minimal_replacement(old_region, clean_rewrite(answer, old_region))
    if start == end and not replacement:
        return None
    return to_lsp_edits(text, region.start, [(start, end, replacement)], encoding)[0]


__all__ = ["ProviderError", "Region", "collect", "compute_fix", "explain_messages", "region_for"]
