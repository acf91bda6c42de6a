"""Next edit suggestion: after the user edits, predict the related edit nearby (a renamed
parameter → its uses). Off by default (`nextEdit.enabled`).

The model sees the user's recent edits as a unified diff (what changed since the last
suggestion) and the region around the cursor, and rewrites the region; the suggestion is the
minimal edits between the two, so the client can offer "jump to the next edit".
"""

from __future__ import annotations

from ..context.window import line_span
from .diff import clean_rewrite, minimal_edits
from .inline_edit import Target

RADIUS = 15  # lines around the cursor the model may touch

NEXT_EDIT_INSTRUCTIONS = (
    "You predict a programmer's next edit. You get their recent edits as a unified diff and a region of "
    "the current file between <region> and </region>. Rewrite the region applying the follow-up changes "
    "those edits make necessary (for example, update the uses of something that was renamed). Reply with "
    "ONLY the region's new content, without the markers. If nothing needs to change, reply with the region unchanged."
)


def region_around(text: str, line: int) -> Target:
    start, end = line_span(text, max(line - RADIUS, 0), line + RADIUS)
    return Target(start, end, text[start:end])


def next_edit_messages(diff: str, text: str, target: Target, language: str, path: str) -> list[dict]:
    shown = text[: target.start][-2000:] + "<region>\n" + target.text + "\n</region>" + text[target.end :][:2000]
    user = f"Recent edits in {path} ({language}):\n```diff\n{diff}\n```\nCurrent file:\n```\n{shown}\n```"
    return [{"role": "system", "content": NEXT_EDIT_INSTRUCTIONS}, {"role": "user", "content": user}]


def suggested_edits(answer: str, target: Target) -> list[tuple[int, int, str]]:
    return minimal_edits(target.text, clean_rewrite(answer, target.text))
