"""Minimal edits: replace only what changed, never the whole region."""

from __future__ import annotations

import difflib
import re

from ..context.window import offset_to_position

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:\n```|$)", re.S)


def extract_code(answer: str) -> str:
    """The code in a model answer: the first fenced block if there is one, else the text."""
    match = _FENCE.search(answer)
    return match.group(1) if match else answer.strip("\n")


def clean_rewrite(answer: str, original: str) -> str:
    """The code in the answer (fences, prose and region markers removed), keeping the region's own
    trailing newlines: models drop or add a final newline at will."""
    code = extract_code(answer)
    code = code.replace("<region>\n", "").replace("\n</region>", "").replace("<region>", "").replace("</region>", "")
    code = code.rstrip("\n")
    return code + original[len(original.rstrip("\n")) :]


def trim_context_echo(rewritten: str, before: str, after: str, region: str = "") -> str:
    """The rewrite without the lines around the region that the model wrote out again: small models
    often answer with the whole function (or file) when asked for a few of its lines. Leading lines
    that repeat the lines just above the region, and trailing lines that repeat those just below it,
    are dropped (compared without trailing spaces; at least one line of the rewrite is kept); so is
    an enclosing header written again before the region's own first line (see _trim_header_echo)."""
    lines = rewritten.split("\n")
    above = [ln.rstrip() for ln in before.split("\n")[:-1]]  # the lines before the region's first line
    below = [ln.rstrip() for ln in after.split("\n")[1:]] if after.startswith("\n") else [ln.rstrip() for ln in after.split("\n")]
    for k in range(min(len(lines) - 1, len(above)), 0, -1):
        if [ln.rstrip() for ln in lines[:k]] == above[-k:] and any(ln.strip() for ln in lines[:k]):
            lines = lines[k:]
            break
    else:
        lines = _trim_header_echo(lines, above, region)
    while below and not below[-1].strip():
        below.pop()
    for k in range(min(len(lines) - 1, len(below)), 0, -1):
        if [ln.rstrip() for ln in lines[-k:]] == below[:k] and any(ln.strip() for ln in lines[-k:]):
            lines = lines[:-k]
            return "\n".join(lines)
    return "\n".join(_trim_spaced_echo(lines, below))


def _trim_header_echo(lines: list[str], above: list[str], region: str) -> list[str]:
    """A region inside a class (or any block) answered with the block's header first (`class P:`,
    then the method): the lines before the region's own first line are dropped when every one of
    them is a line of the file above the region and one is less indented than the region (a header,
    not new code the instruction asked for: new lines are not in the file)."""
    first = next((ln.rstrip() for ln in region.split("\n") if ln.strip()), "")
    depth = len(first) - len(first.lstrip())
    if not first or depth == 0:
        return lines
    at = next((j for j, ln in enumerate(lines) if ln.rstrip() == first), None)
    if not at:
        return lines
    head = [ln for ln in lines[:at] if ln.strip()]
    known = {ln.strip() for ln in above if ln.strip()}
    if head and all(ln.strip() in known for ln in head) and any(len(ln) - len(ln.lstrip()) < depth for ln in head):
        return lines[at:]
    return lines


def _trim_spaced_echo(lines: list[str], below: list[str]) -> list[str]:
    """Trailing lines that repeat the lines below the region with other blank lines between them
    (a model writes the module docstring after a function back with one blank line instead of two):
    the longest tail of at least two non-blank lines that are the first non-blank lines below, and
    that starts at the left margin (an echo of what follows the region, not the region's own last
    lines: a function's body is indented)."""
    wanted = [ln for ln in below if ln.strip()]
    for start in range(1, len(lines)):
        if not lines[start].strip() or lines[start][:1].isspace():
            continue
        tail = [ln.rstrip() for ln in lines[start:] if ln.strip()]
        if len(tail) < 2 or len(tail) > len(wanted) or tail != wanted[: len(tail)]:
            continue
        kept = lines[:start]
        while len(kept) > 1 and not kept[-1].strip():
            kept.pop()
        return kept
    return lines


def minimal_edits(original: str, rewritten: str) -> list[tuple[int, int, str]]:
    """(start, end, text) edits relative to `original`: one per changed run of lines, each
    trimmed to the characters that actually change."""
    old_lines = original.splitlines(keepends=True)
    new_lines = rewritten.splitlines(keepends=True)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    out = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        s, e, t = minimal_replacement("".join(old_lines[i1:i2]), "".join(new_lines[j1:j2]))
        out.append((offsets[i1] + s, offsets[i1] + e, t))
    return out


def to_lsp_edits(doc: str, base: int, edits: list[tuple[int, int, str]], encoding: str) -> list[dict]:
    """Edits relative to the region starting at `base` in `doc`, as LSP TextEdit JSON."""
    return [
        {"range": {"start": offset_to_position(doc, base + s, encoding), "end": offset_to_position(doc, base + e, encoding)},
         "newText": t}
        for s, e, t in edits
    ]


def minimal_replacement(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, text): replacing old[start:end] with text turns `old` into `new`."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, new[start:end_new]
