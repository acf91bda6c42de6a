"""Turn raw model text into what the editor should show.

Rules (each one also tells the engine the answer is final, so it can reply before the
stream ends): strip chat-model fences and echoes; single-line stops at the newline;
multi-line stops at the end of the block (a dedent), at `max_lines`, before a line that
repeats the code after the cursor, and at a repeated line; brackets that the text after
the cursor already closes are not closed twice; truncated text ends where its own
brackets balance; indentation already typed is not inserted again.
"""

from __future__ import annotations

from dataclasses import dataclass

from .shape import indent_of

_PAIRS = {")": "(", "]": "[", "}": "{"}
_OPEN = set("([{")


@dataclass(frozen=True)
class Shown:
    text: str
    final: bool  # a cut rule fired: more streamed text cannot change `text`


def strip_fences(text: str) -> str:
    if text.startswith("```"):
        nl = text.find("\n")
        text = "" if nl < 0 else text[nl + 1 :]
        end = text.find("```")
        if end >= 0:
            text = text[:end].rstrip("\n")
    return text


def _bracket_depths(line: str, depth: int) -> tuple[int, int | None]:
    """New depth after `line`, and the index where depth first went negative (None if never)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "\"'`":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _PAIRS:
            depth -= 1
            if depth < 0:
                return depth, i
    return depth, None


def finalize(
    raw: str,
    line_before: str,
    line_after: str,
    after: str,
    *,
    multiline: bool,
    max_lines: int,
    done: bool,
) -> Shown:
    text = strip_fences(raw) if raw.startswith("```") else raw
    final = False
    # Chat models sometimes echo the line they were given.
    if line_before.strip() and text.startswith(line_before):
        text = text[len(line_before) :]
    # Indentation the user already typed is not inserted again.
    if line_before and not line_before.strip() and text.startswith(line_before):
        text = text[len(line_before) :]

    lines = text.split("\n")
    complete = len(lines) - 1 if not done else len(lines)  # the last line may still grow
    if not multiline:
        if len(lines) > 1 or done:
            final = True
        lines = lines[:1]
        complete = 1 if final else 0
    cursor_line = line_before + lines[0]
    base = indent_of(line_before) if line_before.strip() else len(line_before)
    opener = line_before.rstrip().endswith((":", "{", "(", "["))
    next_code = next((ln.strip() for ln in after.split("\n")[1:6] if ln.strip()), None)

    kept: list[str] = [lines[0]]
    seen_deeper = False
    depth, neg = _bracket_depths(cursor_line, 0) if multiline else (0, None)
    for i in range(1, len(lines)):
        line = lines[i]
        if i >= complete:  # still streaming: keep it, decide later
            kept.append(line)
            continue
        stripped = line.strip()
        if stripped:
            ind = indent_of(line)
            if ind < base or (opener and ind <= base and stripped[0] not in ")]}" and i > 1):
                final = True
                break
            if seen_deeper and ind <= base and not kept[-1].strip():
                final = True  # a blank line then a new statement at our level: next block
                break
            seen_deeper = seen_deeper or ind > base
            if next_code is not None and stripped == next_code:
                final = True  # the model started writing the code that already follows
                break
            if kept and stripped == kept[-1].strip() and len(stripped) > 3:
                final = True  # a repetition loop
                break
        kept.append(line)
        if len(kept) >= max_lines:
            final = True
            break

    # Closers that the rest of the line already provides are not typed twice.
    rest = line_after.lstrip()
    if rest and rest[0] in _PAIRS:
        joined = "\n".join(kept)
        d, neg = _bracket_depths(joined, 0)
        if neg is not None and joined[neg] == rest[0]:
            kept = joined[:neg].split("\n")
            final = True
        elif joined.rstrip().endswith(rest.rstrip()):
            kept = joined.rstrip()[: len(joined.rstrip()) - len(rest.rstrip())].split("\n")
    out = "\n".join(kept).rstrip()
    # A multi-line answer cut short should end where its own brackets balance.
    if multiline and final and "\n" in out:
        out = _trim_unbalanced(out)
    if not out.strip():
        out = ""
    return Shown(out, final or done)


def _trim_unbalanced(text: str) -> str:
    lines = text.split("\n")
    depth = 0
    last_balanced = None
    for i, line in enumerate(lines):
        depth, _ = _bracket_depths(line, depth)
        if depth <= 0:
            last_balanced = i
    if depth <= 0 or last_balanced is None:
        return text
    return "\n".join(lines[: last_balanced + 1]).rstrip()
