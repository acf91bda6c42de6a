"""The bounded region a brace-language guard parses around the cursor (text only, no grammar).

It starts at the outermost statement start within MAX_LINES above the cursor whose block also ends
within MAX_LINES below, found by indentation, and ends where that block does (the document's end
when it is nearer). The headers of the blocks around that statement (`class A {`, `namespace N {`)
are put in front and closed after it, so a method parses as a method. Cost: string scans only.
A cursor line over MAX_LINE_CHARS (minified or generated code) gives no window: it is not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..cuts.brackets import code_only
from ..shape import indent_of

MAX_LINES = 80  # lines read on each side of the cursor line
MAX_CHARS = 6_000  # characters read on each side of the cursor
MAX_LINE_CHARS = 1_000  # a longer cursor line is not checked (its parse would cost milliseconds)
ANCESTOR_CHARS = 60_000  # how far above the window the headers of its enclosing blocks are looked for
_NOT_A_START = tuple(")]}{.,?:&|+=")
_ENDS_A_STATEMENT = ("{", "}", ";", ")", "]", "*/")
_COMMENT_OR_ATTRIBUTE = ("//", "/*", "*", "#", "@")


@dataclass(frozen=True)
class Window:
    head: str  # from the window's start (headers first) to the cursor
    tail: str  # from the cursor to the window's end (closers for the headers last)
    certain: bool = True  # False: it may start or end inside a statement longer than the lines read


@dataclass(frozen=True)
class _Start:
    line: int  # index into the lines above the cursor line
    indent: int


def window(before: str, after: str) -> Window | None:
    above = _lines_above(before)
    below, whole_below = _lines_below(after)
    cursor_line = above[-1] + below[0]
    if len(cursor_line) > MAX_LINE_CHARS:
        return None
    starts = _starts(above[:-1], cursor_line)
    start, end, cut_short = _choose(starts, below, whole_below)
    whole_above = len(above) - 1 < MAX_LINES + 1 and len(before) <= MAX_CHARS
    certain = not cut_short and (start > 0 or whole_above) and any(s.line == start for s in starts)
    head = "\n".join(above[start:])
    tail = "\n".join(below[: end + 1])
    offset = len(before) - len(head)
    headers = _headers(before[max(0, offset - ANCESTOR_CHARS) : offset], indent_of(above[start]))
    opened = sum(max(1, h.count("{") - h.count("}")) for h in headers)
    if cut_short:  # the block goes on past the lines read: close what the window leaves open
        code = code_only(head + tail)
        opened += max(0, code.count("{") - code.count("}"))
    prefix = "".join(h + "\n" for h in headers)
    return Window(prefix + head, tail + ("\n" + "}" * opened if opened else ""), certain)


def _lines_above(before: str) -> list[str]:
    """The lines above the cursor and the cursor line up to the cursor (last)."""
    text = before[-MAX_CHARS:]
    lines = text.split("\n")
    if len(text) < len(before) and len(lines) > 1:
        lines = lines[1:]  # the first line is cut: leave it out
    return lines[-(MAX_LINES + 1) :]


def _lines_below(after: str) -> tuple[list[str], bool]:
    """The rest of the cursor line (first) and the lines below; True when they reach the end."""
    text = after[:MAX_CHARS]
    lines = text.split("\n")
    whole = len(text) == len(after)
    if not whole and len(lines) > 1:
        lines = lines[:-1]
    if len(lines) > MAX_LINES + 1:
        lines, whole = lines[: MAX_LINES + 1], False
    return lines, whole


def _label(text: str) -> bool:
    """`public:`, `case 1:`, `default:`: neither a statement's start nor a block's end."""
    return text.endswith(":") and not text.endswith("::")


def _is_start(lines: list[str], i: int) -> bool:
    """Does line `i` start a statement (not continue the one above it)?"""
    text = lines[i].strip()
    if text.startswith(_NOT_A_START) or text.startswith(("* ", "*/")) or _label(text):
        return False
    if i == 0:
        return True
    previous = lines[i - 1].strip()
    return not previous or previous.endswith(_ENDS_A_STATEMENT) or previous.startswith(_COMMENT_OR_ATTRIBUTE)


def _starts(lines: list[str], cursor_line: str) -> list[_Start]:
    """Statement starts above the cursor, innermost first, each one less indented than the last."""
    found: list[_Start] = []
    least = indent_of(cursor_line) if cursor_line.strip() else 1 << 30
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if not line.strip():
            continue
        ind = indent_of(line)
        if ind > least:
            continue  # inside a block above that is closed before the cursor
        least = ind
        if (not found or ind < found[-1].indent) and _is_start(lines, i):
            found.append(_Start(i, ind))
            if ind == 0:
                break
    return found


def _end(start: _Start, below: list[str]) -> int | None:
    """Index in `below` of the last line of the block that `start` begins (None: not in reach)."""
    for k in range(1, len(below)):
        line = below[k]
        if not line.strip() or _label(line.strip()):
            continue
        ind = indent_of(line)
        if ind < start.indent:
            return k - 1
        if ind == start.indent:
            text = line.strip()
            if not text.startswith(("}", ")", "]")):
                return k - 1  # the next statement at that level
            if not text.endswith(("{", "(")):  # `} else {` goes on
                return k
    return None


def _choose(starts: list[_Start], below: list[str], whole_below: bool) -> tuple[int, int, bool]:
    """(first line above, last line below) of the outermost start whose block ends in reach; True
    when none does (the window then ends where the lines read end)."""
    last = len(below) - 1
    for start in reversed(starts):
        end = _end(start, below)
        if end is None and whole_below:
            end = last
        if end is not None:
            return start.line, end, False
    return (starts[0].line if starts else 0), last, not whole_below


_INDENT_BELOW: dict[int, re.Pattern[str]] = {}


def _last_line_indented_below(text: str, indent: int) -> tuple[int, str] | None:
    pattern = _INDENT_BELOW.get(indent)
    if pattern is None:
        pattern = _INDENT_BELOW[indent] = re.compile(r"^[ \t]{0,%d}[^ \t\n].*$" % (indent - 1), re.M)
    for match in reversed(list(pattern.finditer(text))):
        if not match.group().lstrip().startswith(("#", "//", "/*", "*")):
            return match.start(), match.group()
    return None


def _headers(text: str, indent: int) -> list[str]:
    """The header lines of the blocks that enclose a statement at `indent` at the end of `text`
    (`class A {`; in Allman style the line before a lone `{` too), outermost first."""
    headers: list[str] = []
    while indent > 0:
        found = _last_line_indented_below(text, indent)
        if found is None:
            break
        pos, line = found
        if line.strip() == "{":
            above = text[:pos].rstrip().rsplit("\n", 1)[-1]
            line = above + "\n" + line
        elif not line.rstrip().endswith("{"):
            break
        headers.insert(0, line)
        indent, text = indent_of(line), text[:pos]
    return headers
