"""What the user changed in each open document since the last next-edit suggestion (the
suggestion's "recent edits"). Its own module: the server tracks it from the start, while the
next-edit engine is imported by the first suggestion (docs/design-notes.md#pyserverkestrelcompiled_methodspy)."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 40
MAX_TRACKED_CHARS = 1_000_000


class EditHistory:
    """A baseline per document; the diff from it to now is the 'recent edits'."""

    def __init__(self) -> None:
        self._baseline: dict[str, str] = {}

    def opened(self, uri: str, text: str) -> None:
        if len(text) <= MAX_TRACKED_CHARS:
            self._baseline[uri] = text

    def forget(self, uri: str) -> None:
        self._baseline.pop(uri, None)

    def recent_diff(self, uri: str, current: str) -> str:
        base = self._baseline.get(uri)
        if base is None or base == current:
            return ""
        lines = list(difflib.unified_diff(base.splitlines(), current.splitlines(), "before", "after", n=2, lineterm=""))
        return "\n".join(lines[:MAX_DIFF_LINES])

    def settle(self, uri: str, text: str) -> None:
        """After a suggestion: later diffs start from here."""
        self.opened(uri, text)
