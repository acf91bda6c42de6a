"""Turn raw model text into what the editor should show.

Rules (each one also tells the engine the answer is final, so it can reply before the
stream ends): strip chat-model fences and echoes; single-line stops at the newline;
multi-line stops at the end of the block (a dedent), at `max_lines`, before a line that
repeats the code after the cursor, and at a repeated line; brackets that the text after
the cursor already closes are not closed twice; truncated text ends where its own
brackets balance; indentation already typed is not inserted again.

Where code follows the cursor in the same block (mid-line, before existing code, or on an
empty line inside a body), the model's middle ends where it starts re-typing that code: a
fill-in-the-middle model rejoins the suffix once the hole is filled. The suggestion is the
text up to that point (a new line above existing code keeps its newline). If it does not
rejoin within a few lines, it is rewriting the code below rather than filling the hole: only
its first line is offered, and nothing if that line repeats the code that follows.
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


SYNC_CHARS = 16  # re-typing this much of the text after the cursor counts as rejoining it
SYNC_MIN_TAIL = 6  # a stream that ended while re-typing: at least this many characters of it
# (both counted without whitespace: a newline and indentation alone match any line at that depth)
SYNC_HORIZON_LINES = 3  # lines past the first in which a filled hole must rejoin the code after it


def suffix_sync(text: str, after: str, done: bool) -> int | None:
    """Index in `text` where the model starts re-typing `after` (the middle ends there), or None."""
    targets = [after]
    if after.startswith("\n\n"):  # a blank line the model may not reproduce
        targets.append("\n" + after.lstrip("\n"))
    best = None
    for target in targets:
        if not target.strip():
            continue
        need = max(_span_with_code(target, SYNC_CHARS), _first_code_line_end(target))
        head = target[:need]
        k = text.find(head)
        while k >= 0 and need == len(target) and k + need < len(text):
            k = text.find(head, k + 1)  # a short suffix must be the very end of the text
        if k < 0 and done:
            for j in range(max(len(text) - need, 0), len(text) - SYNC_MIN_TAIL + 1):
                tail = text[j:]
                if len("".join(tail.split())) >= SYNC_MIN_TAIL and target.startswith(tail):
                    k = j
                    break
        if k >= 0 and (best is None or k < best):
            best = k
    return best


def _first_code_line_end(target: str) -> int:
    """Length of the start of `target` up to the end of its first line of code: a line that only
    begins like the code below (`closing = []` for `closing.reverse()`) is not that code."""
    start = len(target) - len(target.lstrip())
    end = target.find("\n", start)
    return len(target) if end < 0 else end


def _span_with_code(target: str, chars: int) -> int:
    """Length of the start of `target` that holds `chars` characters other than whitespace (or
    all of it): newlines and indentation alone match any deeper line, not the code after the cursor."""
    seen = 0
    for i, ch in enumerate(target):
        if not ch.isspace():
            seen += 1
            if seen == chars:
                return i + 1
    return len(target)


def _following_line(line_after: str, after: str) -> str | None:
    """The first line of code after the cursor (the rest of the cursor line counts)."""
    if line_after.strip():
        return line_after
    return next((ln for ln in after.split("\n")[1:8] if ln.strip()), None)


def _code_follows_in_block(line_before: str, line_after: str, after: str, before_lines: list[str]) -> bool:
    """Is there code after the cursor that continues the block the cursor is in?"""
    following = _following_line(line_after, after)
    if following is None:
        return False
    if line_after.strip():
        return True
    if line_before.strip():
        return False  # end of a line with text: the next line is a separate statement
    previous = next((ln for ln in reversed(before_lines) if ln.strip()), "")
    if previous.rstrip().endswith((":", "{", "(", "[")) and indent_of(following) <= indent_of(previous):
        return False  # an empty body after an opener: a block is wanted
    # At column 0 of an empty line the level is not known yet: the line may continue the block
    # above or start the code below, and either way that code follows the hole.
    return not line_before or indent_of(following) >= len(line_before)


def fill_the_hole(text: str, line_before: str, line_after: str, after: str, *, done: bool,
                  model_ended: bool = False, expect_end: bool = False, max_lines: int = 12) -> Shown:
    """Code follows the cursor: the middle is what comes before the model rejoins it, or where
    the model itself ended it (its end-of-middle token)."""
    shown = _hole_middle(text, line_before, line_after, after, done=done, model_ended=model_ended,
                         expect_end=expect_end, max_lines=max_lines)
    if shown.final and _header_without_body(shown.text, line_before, line_after, after):
        return Shown("", True)
    return shown


def _hole_middle(text: str, line_before: str, line_after: str, after: str, *, done: bool,
                 model_ended: bool, expect_end: bool, max_lines: int) -> Shown:
    k = suffix_sync(text, after, done)
    if k is not None:
        middle = text[:k]
        return Shown(middle if middle.strip() else "", True)
    lines = text.split("\n")
    following = _following_line(line_after, after)
    retyped = _retyped_lines(lines if done else lines[:-1], after)  # a streaming last line may grow
    # An answer the model ended itself may share lines with the code below (`return False` in two
    # branches); two such lines in a row, in the same order below, mean it wrote that code again.
    # A model known to end its blocks (`expect_end`, still streaming) is waited for: its end is
    # the hole's end.
    if (model_ended or expect_end) and len(lines) <= max_lines and not _retypes_a_run(retyped, lines, after):
        first_done = model_ended or len(lines) > 1
        if first_done and following is not None and lines[0].strip() == following.strip():
            return Shown("", True)
        if model_ended:
            return Shown(text if text.strip() else "", True)
        return Shown("", False)
    if not done and len(lines) <= SYNC_HORIZON_LINES + 1 and not retyped:
        return Shown("", False)  # it may still rejoin
    first = lines[0]
    if not first.strip() or (following is not None and first.strip() == following.strip()):
        return Shown("", True)  # nothing, or a re-typing of the code that follows
    if not line_before.strip() and line_after.strip():
        return Shown(first + "\n", True)  # a new line above the existing code
    return Shown(_without_doubled_closers(first, line_after), True)


RETYPE_MIN_CHARS = 8  # a line this long that also appears below the cursor is not a coincidence
RETYPE_LOOKAHEAD_LINES = 40


def _retyped_lines(lines: list[str], after: str) -> list[int]:
    """Indexes (past the first) of the complete lines of the model's text that repeat a line of the
    code below the cursor: a sign that the model is rewriting that code rather than filling the hole."""
    below = {ln.strip() for ln in after.split("\n")[:RETYPE_LOOKAHEAD_LINES] if len(ln.strip()) >= RETYPE_MIN_CHARS}
    return [i for i, line in enumerate(lines[1:], start=1) if line.strip() in below]


def _retypes_a_run(retyped: list[int], lines: list[str], after: str) -> bool:
    """Do two consecutive lines of the model's text repeat two consecutive lines of the code below?"""
    below = [ln.strip() for ln in after.split("\n")[:RETYPE_LOOKAHEAD_LINES] if ln.strip()]
    pairs = set(zip(below, below[1:]))
    return any(i + 1 in retyped and (lines[i].strip(), lines[i + 1].strip()) in pairs for i in retyped)


def _header_without_body(middle: str, line_before: str, line_after: str, after: str) -> bool:
    """A suggestion whose last line opens a block (`...:`) with no deeper code after it: in an
    indentation language that is a syntax error, and the model meant a body it did not write."""
    if not middle.strip():
        return False
    ends_line = middle.endswith("\n") or not line_after.strip()
    if not ends_line:
        return False
    body = middle.rstrip("\n")
    last = body.split("\n")[-1] if "\n" in body else line_before + body
    if not last.rstrip().endswith(":"):
        return False
    nxt = line_after if middle.endswith("\n") and line_after.strip() else _following_line("", after)
    return nxt is not None and indent_of(nxt) <= indent_of(last)


def _without_doubled_closers(text: str, line_after: str) -> str:
    rest = line_after.strip()
    if rest and text.rstrip().endswith(rest):
        return text.rstrip()[: len(text.rstrip()) - len(rest)]
    return text


def finalize(
    raw: str,
    line_before: str,
    line_after: str,
    after: str,
    *,
    multiline: bool,
    max_lines: int,
    done: bool,
    before_lines: list[str] | None = None,
    model_ended: bool = False,
    expect_end: bool = False,
) -> Shown:
    """`model_ended`: the stream is done and the model ended it itself. `expect_end`: the stream
    goes on, and the model is known to end its blocks: cuts that guess where the block ends
    wait for that end instead (those that see the model re-typing the code below still cut)."""
    text = strip_fences(raw) if raw.startswith("```") else raw
    final = False
    # Chat models sometimes echo the line they were given.
    if line_before.strip() and text.startswith(line_before):
        text = text[len(line_before) :]
    # Indentation the user already typed is not inserted again.
    if line_before and not line_before.strip() and text.startswith(line_before):
        text = text[len(line_before) :]

    if _code_follows_in_block(line_before, line_after, after, before_lines or []):
        return fill_the_hole(text, line_before, line_after, after, done=done, model_ended=model_ended,
                             expect_end=expect_end and not done, max_lines=max_lines)

    lines = text.split("\n")
    complete = len(lines) - 1 if not done else len(lines)  # the last line may still grow
    if not multiline:
        if len(lines) > 1 or done:
            final = True
        lines = lines[:1]
        complete = 1 if final else 0
    cursor_line = line_before + lines[0]
    base = indent_of(line_before) if line_before.strip() else len(line_before)
    if not line_before and lines[0].strip():
        base = indent_of(lines[0])  # at column 0 the model's first line sets the block's level
    opener = line_before.rstrip().endswith((":", "{", "(", "["))
    next_code = next((ln.strip() for ln in after.split("\n")[1:6] if ln.strip()), None)

    # A fill-in-the-middle model that ended the middle itself has placed the end of the hole: its
    # dedents are part of the answer (a hole may span levels), up to the top level. One known to
    # end its blocks is waited for on the same terms. Either way, only within max_lines of the
    # block: code the model adds at the top level after it (a test, an example) is cut below.
    trust_end = multiline and _block_lines(lines, base) <= max_lines and (model_ended and done or expect_end and not done)
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
            if trust_end and ind == 0 and base > 0:
                final = True  # from inside a block out to the top level: past the hole for sure
                break
            if not trust_end and (ind < base or (opener and ind <= base and stripped[0] not in ")]}" and i > 1)):
                final = True
                break
            if seen_deeper and ind <= base and not kept[-1].strip() and not trust_end:
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


def _block_lines(lines: list[str], base: int) -> int:
    """Lines before the first one of code at the top level (inside a block, that one ends it)."""
    if base > 0:
        for i, line in enumerate(lines[1:], start=1):
            if line.strip() and indent_of(line) == 0:
                return i
    return len(lines)


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
