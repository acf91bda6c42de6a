"""The import statements at the head of a file: what a cut prefix keeps of the file's top.

When a file is longer than the prefix window, the window is its tail, and the names the code
below uses lose where they come from (`np`, `Path`, a workspace module). The import block is short
and stable while the user types (the prompt cache keeps it), so the prompt keeps it in front of the
window. Found by line patterns per language, not a parser: the head of a file is simple, and a
statement split over lines is followed to its closing bracket.
"""

from __future__ import annotations

import re

from .window import CHARS_PER_TOKEN, prefix_window

_IMPORT = {
    "python": r"(import|from)\s",
    "typescript": r"(import\b|export\s.*\sfrom\s)",
    "go": r"import\b",
    "rust": r"(use|extern\s+crate)\s",
    "java": r"import\s",
    "kotlin": r"import\s",
    "scala": r"import\s",
    "csharp": r"using\s",
    "c": r"#\s*include\b",
    "swift": r"import\s",
}
_SAME = {"typescriptreact": "typescript", "javascript": "typescript", "javascriptreact": "typescript",
         "cpp": "c", "objective-c": "c"}
# Lines a file's head has before or between its imports: comments, blanks, a package line, a
# module docstring's lines, `#pragma`/`#define` guards, `mod x;`, `'use strict'`.
_HEAD_OTHER = re.compile(r"""^\s*($|#|//|/\*|\*|--|package\b|mod\s+\w+;|["'`]|@file|namespace\b.*;\s*$)""")
MAX_HEAD_LINES = 300  # imports further down than this are not the file's head


def _balance(line: str) -> int:
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def import_block(text: str, language: str) -> tuple[str, int]:
    """The file's leading import statements (each whole, other head lines left out), joined by
    newlines with a trailing one, and the offset in `text` where the last of them ends; ("", 0)
    when the language has no pattern here or the file no imports at its head."""
    pattern = _IMPORT.get(_SAME.get(language, language))
    if pattern is None:
        return "", 0
    starts = re.compile(r"^\s*" + pattern)
    kept: list[str] = []
    depth, in_docstring, offset, end = 0, False, 0, 0
    for line in text.split("\n", MAX_HEAD_LINES)[:MAX_HEAD_LINES]:
        line_end, offset = offset + len(line), offset + len(line) + 1
        if depth > 0:  # inside a statement split over lines
            kept.append(line)
            depth, end = depth + _balance(line), line_end
            continue
        if in_docstring:
            in_docstring = line.count('"""') % 2 == 0 and line.count("'''") % 2 == 0
            continue
        if starts.match(line):
            kept.append(line)
            depth, end = max(_balance(line), 0), line_end
            continue
        if not _HEAD_OTHER.match(line):
            break  # the first line of code: the head ends
        stripped = line.strip()
        if stripped[:3] in ('"""', "'''") and stripped.count(stripped[:3]) == 1:
            in_docstring = True
    return ("\n".join(kept) + "\n", end) if kept else ("", 0)


def prefix_with_imports(before: str, budget_tokens: int, language: str) -> str:
    """The prefix window (window.py) within `budget_tokens`; when it leaves out the file's import
    block, that block goes in front of a window smaller by its size. The block takes at most half
    the budget; both parts keep still while the user types below them (the prompt cache holds)."""
    window = prefix_window(before, budget_tokens)
    if len(window) >= len(before):
        return window
    block, end = import_block(before, language)
    block_tokens = int(len(block) / CHARS_PER_TOKEN) + 1
    if not block or block_tokens > budget_tokens // 2:
        return window
    window = prefix_window(before, budget_tokens - block_tokens)
    if len(before) - len(window) <= end:
        return window  # the window already holds the imports (or starts inside them)
    return block + window
