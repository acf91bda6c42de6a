"""Inline edits: rewrite a region from an instruction, streamed as a live preview.

The target is the selection, or with no selection the enclosing function/block. The model's
rewrite streams to the client (`kestrel/editDelta`) through the chat engine, so the user can
steer it like a chat answer. The result is a list of minimal edits (never a whole-region
replacement) against the document version they were computed for. If the user types
elsewhere meanwhile, the edits are rebased onto the new text; if the target itself changed,
the edit is refused (never applied to the wrong lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..context.window import line_span
from .diff import clean_rewrite, minimal_edits, to_lsp_edits, trim_context_echo
from .validate import lint_problem, syntax_error

EDIT_INSTRUCTIONS = (
    "You rewrite code. You get a file with a region between <region> and </region> and an instruction. "
    "Reply with ONLY the new content of the region (without the markers), keeping unchanged lines exactly "
    "as they are. No explanation."
)
_BLOCK_START = re.compile(r"^\s*(async\s+def|def|class|function|func|fn|pub\s+fn|public|private|protected|static|export|const\s+\w+\s*=\s*\(|if|for|while|with|try)\b")
CONTEXT_LINES = 30


class EditRefused(Exception):
    """The edit cannot be applied safely; the message says why."""


@dataclass(frozen=True)
class Target:
    start: int  # offsets into the document text
    end: int
    text: str


def enclosing_block(text: str, line: int) -> tuple[int, int]:
    """(first, last) line of the function/block around `line`, by indentation."""
    lines = text.split("\n")
    if not lines:
        return 0, 0
    line = max(0, min(line, len(lines) - 1))

    def indent(s: str) -> int:
        return len(s) - len(s.lstrip())

    start = line
    while start > 0 and not (lines[start].strip() and _BLOCK_START.match(lines[start]) and
                             (start < line or indent(lines[start]) < indent(lines[line]) or not lines[line].strip())):
        start -= 1
    if not _BLOCK_START.match(lines[start] or ""):
        start = line
    base = indent(lines[start])
    end = start
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and indent(lines[i]) <= base and not lines[i].strip().startswith((")", "]", "}")):
            break
        if lines[i].strip():
            end = i
        elif lines[i].strip() == "" and i + 1 < len(lines) and lines[i + 1].strip() and indent(lines[i + 1]) <= base:
            break
    # include a closing brace line at the block's own indentation (C-like languages)
    if end + 1 < len(lines) and lines[end + 1].strip() in ("}", "};", "})", "end") and indent(lines[end + 1]) == base:
        end += 1
    return start, end


def target_for(text: str, start_line: int, start_col: int, end_line: int, end_col: int) -> Target:
    """The selection, expanded to whole lines; an empty selection means the enclosing block."""
    if (start_line, start_col) == (end_line, end_col):
        start_line, end_line = enclosing_block(text, start_line)
    elif end_col == 0 and end_line > start_line:
        end_line -= 1  # a selection ending at column 0 does not include that line
    start, end = line_span(text, start_line, end_line)
    return Target(start, end, text[start:end])


def edit_messages(text: str, target: Target, instruction: str, language: str, path: str) -> list[dict]:
    before = text[: target.start].split("\n")[-CONTEXT_LINES:]
    after = text[target.end :].split("\n")[: CONTEXT_LINES + 1]
    shown = "\n".join(before) + "<region>\n" + target.text + "\n</region>" + "\n".join(after)
    user = f"File {path} ({language}).\n```\n{shown}\n```\nInstruction: {instruction}"
    return [{"role": "system", "content": EDIT_INSTRUCTIONS}, {"role": "user", "content": user}]


def region_rewrite(text: str, target: Target, answer: str) -> str:
    """The region's new text from a model answer: its code, without the context it repeated."""
    rewritten = clean_rewrite(answer, target.text)
    body = rewritten.rstrip("\n")
    trimmed = trim_context_echo(body, text[: target.start], text[target.end :])
    return trimmed + rewritten[len(body) :]


def rewrite_problem(text: str, target: Target, rewritten: str, language: str, path: str) -> str:
    """Why the rewrite is not offered ("" when it is): it breaks a file that parsed, or the linter
    (when one runs here) finds something in it that the file did not have."""
    after = text[: target.start] + rewritten + text[target.end :]
    broken = syntax_error(after, language)
    if broken and not syntax_error(text, language):
        return f"it does not parse ({broken})"
    return lint_problem(text, after, path, language)


def rebase(current_doc: str, target: Target) -> int:
    """New offset of the target region in `current_doc`; raises EditRefused if it changed."""
    if current_doc[target.start : target.end] == target.text:
        return target.start
    # The user typed elsewhere: find the untouched region nearest its old place.
    candidates = []
    pos = current_doc.find(target.text)
    while pos >= 0:
        candidates.append(pos)
        pos = current_doc.find(target.text, pos + 1)
    if not candidates:
        raise EditRefused("the code being edited changed while the edit was streaming: nothing was applied")
    return min(candidates, key=lambda p: abs(p - target.start))


__all__ = ["EditRefused", "Target", "clean_rewrite", "edit_messages", "enclosing_block", "minimal_edits", "rebase",
           "region_rewrite", "rewrite_problem", "target_for", "to_lsp_edits"]
