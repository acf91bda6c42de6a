"""Quick fixes: "Fix with Kestrel" / "Explain with Kestrel" for any diagnostic.

Listing actions costs nothing: no model call happens until the user picks one
(`codeAction/resolve`, or the action's command for clients without resolve support).
A fix is returned as the smallest edit that turns the region into the model's version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..context.window import index_to_column, line_start_offset
from ..providers.base import Provider, ProviderError, StreamStats
from .diff import extract_code, minimal_replacement

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
    start = line_start_offset(text, first_line)
    end = text.find("\n", line_start_offset(text, last_line))
    end = len(text) if end < 0 else end
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
    new_region = extract_code(answer)
    old_region = text[region.start : region.end]
    if old_region.endswith("\n") is False and new_region.endswith("\n"):
        new_region = new_region.rstrip("\n")
    start, end, replacement = minimal_replacement(old_region, new_region)
    if start == end and not replacement:
        return None
    return {"range": _range(text, region.start + start, region.start + end, encoding), "newText": replacement}


def _position(text: str, offset: int, encoding: str) -> dict[str, int]:
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", line_start)
    line_text = text[line_start : len(text) if line_end < 0 else line_end]
    return {"line": line, "character": index_to_column(line_text, offset - line_start, encoding)}


def _range(text: str, start: int, end: int, encoding: str) -> dict[str, dict[str, int]]:
    return {"start": _position(text, start, encoding), "end": _position(text, end, encoding)}


__all__ = ["ProviderError", "Region", "collect", "compute_fix", "explain_messages", "region_for"]
