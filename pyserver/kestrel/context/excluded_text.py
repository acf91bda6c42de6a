"""Does a chat message carry text of a file Kestrel must not send? Checked on the text itself.

Flagged: a label the VS Code extension writes above an attachment ("File .env:", "Open file x:",
"Selected lines 3-4 of x:") naming an excluded path, or a message line that occurs inside an open
excluded document, unless the same text is also in an open document that is not excluded. Lines
shorter than `MIN_LINE_CHARS` are ignored; above `SUBSTRING_SCAN_CHARS` only whole lines are
compared. Why: docs/design-notes.md#pyserverkestrelcontextexcluded_textpy
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

MIN_LINE_CHARS = 12
SUBSTRING_SCAN_CHARS = 256_000
# Every label the extension writes (extension/src/chat/context.ts, mentionContext.ts): `File p:`,
# `Open file p:`, `Selected lines 3-4 of p:` (or one line, `3`), `File p, lines 3-9:`, `File p, lines
# 3-9 (name):` (a symbol), `File p (its first N characters):` (a large file).
_LABEL = re.compile(r"^(?:File|Open file|Selected lines \d+(?:-\d+)? of) (?P<path>.+?)"
                    r"(?:, lines \d+(?:-\d+)?(?: \(.*\))?| \(its first \d+ characters\))?:$")


def message_text(message: object) -> str:
    """A message's text (plain content, or the text parts of a multi-part content)."""
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def _lines(text: str) -> set[str]:
    return {line for line in (raw.strip() for raw in text.splitlines()) if len(line) >= MIN_LINE_CHARS}


def message_chars(messages: Iterable[object]) -> int:
    return sum(len(message_text(message)) for message in messages)


def _found_in(lines: set[str], text: str) -> set[str]:
    """Those of `lines` that occur in `text`."""
    if len(text) <= SUBSTRING_SCAN_CHARS:
        return {line for line in lines if line in text}
    return lines & _lines(text)


def excluded_source(messages: Iterable[object], excluded_docs: Iterable[tuple[str, str]],
                    other_docs: Iterable[str], is_excluded_path: Callable[[str], bool]) -> str | None:
    """The excluded file (path) whose text the messages carry, or None. `excluded_docs` are the
    open excluded documents as (path, text), `other_docs` the texts of the other open documents."""
    said = _lines("\n".join(message_text(message) for message in messages))
    for line in said:
        label = _LABEL.match(line)
        if label and is_excluded_path(label.group("path")):
            return label.group("path")
    suspect = [(path, found) for path, text in excluded_docs if (found := _found_in(said, text))]
    if not suspect:
        return None
    innocent: set[str] = set()
    for text in other_docs:
        innocent |= _found_in(said - innocent, text)
    return next((path for path, found in suspect if found - innocent), None)
