"""Where a new block (no code follows the cursor in it) ends: one stage, a list of line rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...context.window import CursorText
from ..shape import indent_of, opens_block
from .base import OPENERS, CutOptions, Lexis, Shown, bracket_depths, log


def single_line(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims a single-line answer at its first newline (final there, or when the stream is done)."""
    if opts.multiline:
        return shown
    first, nl, _ = shown.text.partition("\n")
    return Shown(first, shown.final or bool(nl) or opts.done)


@dataclass(frozen=True)
class Block:
    """The model's lines and what they are held against."""

    lines: list[str]
    base: int  # the block's indentation
    opener: bool  # the cursor line opens a block
    next_code: str | None  # the next line of code after the cursor line, stripped
    trust_end: bool  # the model placed the end: its dedents are part of the answer, up to the top level
    braces: bool = False  # a brace language: a line of closers alone is left to surplus_closer
    open_depth: int = 0  # brackets the cursor line opened before the cursor and left open
    mid_line: bool = False  # code before the cursor on its line
    header: bool = False  # the cursor line is a block header (`if x:`): what follows is its body and branches
    lexis: Lexis = Lexis()

    def deeper_before(self, i: int) -> bool:
        return any(ln.strip() and indent_of(ln) > self.base for ln in self.lines[1:i])


def top_level(b: Block, i: int, line: str) -> bool:
    """An ended block that goes out to the top level from inside a block: past the hole for sure."""
    return b.trust_end and indent_of(line) == 0 and b.base > 0


def dedent(b: Block, i: int, line: str) -> bool:
    """A line left of the block (or, after an opener, at its level past the first line)."""
    ind = indent_of(line)
    at_opener = b.opener and ind <= b.base and line.strip()[0] not in ")]}" and i > 1
    return not b.trust_end and (ind < b.base or at_opener)


def next_statement(b: Block, i: int, line: str) -> bool:
    """A blank line, then a statement at the block's level after deeper ones: the next block."""
    return not b.trust_end and indent_of(line) <= b.base and not b.lines[i - 1].strip() and b.deeper_before(i)


def retypes_next_code(b: Block, i: int, line: str) -> bool:
    """The model started writing the code that already follows. A line of closers alone (`}`) may
    close the answer's own block: it re-types the code below only when it closes a bracket opened
    before the answer, which surplus_closer cuts."""
    return b.next_code is not None and line.strip() == b.next_code and not (b.braces and _closers_only(b.next_code))


def _closers_only(code: str) -> bool:
    return all(ch in ")]};," for ch in code)


def statement_ended(b: Block, i: int, line: str) -> bool:
    """Cursor inside a line of code (`f(`, `name:`, `x = `) that is no block header: once the answer
    has closed the brackets that line opened, a line at the cursor line's level is the next statement
    (or the next parameter, field, element), not part of this one. Even where the model placed the
    end itself: what was asked for is the rest of a statement (`logger = ` answered with
    `get_logger(__name__)`, a blank line and the module's next statement). In Python a deeper line
    after the finished statement ends it too (it can only be the body of a block the answer opened
    with a `:`); in brace languages it may go on the statement (`.then(...)` on a line of its own)."""
    if not (b.mid_line and not b.header):
        return False
    done = b.lines[:i]
    if not b.braces and (_open_triple_quote(done) or done[-1].rstrip().endswith("\\")):
        return False  # Python: a string or a line continued on this one
    depth, opened_block = b.open_depth, False
    for text in done:
        depth, _ = bracket_depths(text, depth, b.lexis)
        opened_block = opened_block or (depth <= 0 and text.rstrip().endswith(":"))
    if depth > 0:
        return False
    return indent_of(line) <= b.base or not (b.braces or opened_block)


def _open_triple_quote(lines: list[str]) -> bool:
    text = "\n".join(lines)
    return text.count('"""') % 2 == 1 or text.count("'''") % 2 == 1


def repetition(b: Block, i: int, line: str) -> bool:
    """The same line twice in a row (more than three characters): a loop."""
    stripped = line.strip()
    return stripped == b.lines[i - 1].strip() and len(stripped) > 3


# Each rule ends the block before the first complete line of code it holds true for.
LINE_RULES: tuple[Callable[[Block, int, str], bool], ...] = (
    top_level, dedent, next_statement, retypes_next_code, statement_ended, repetition,
)


def _block(shown: Shown, cur: CursorText, opts: CutOptions) -> Block:
    lines = shown.text.split("\n")
    lb = cur.line_before
    base = indent_of(lb) if lb.strip() else len(lb)
    if not lb and lines[0].strip():
        base = indent_of(lines[0])  # at column 0 the model's first line sets the block's level
    ended = opts.model_ended and opts.done or opts.expect_end and not opts.done
    trust_end = opts.multiline and _block_lines(lines, base) <= opts.max_lines and ended
    next_code = next((ln.strip() for ln in cur.after.split("\n")[1:6] if ln.strip()), None)
    open_depth = bracket_depths(lb, 0, opts.lexis)[0] if lb.strip() else 0
    header = not opts.braces and lb.rstrip().endswith(":") and opens_block(lb.strip())
    return Block(lines, base, lb.rstrip().endswith(OPENERS), next_code, trust_end, opts.braces, max(open_depth, 0),
                 bool(lb.strip()) if opts.asked_mid_line is None else opts.asked_mid_line, header, opts.lexis)


def block_end(shown: Shown, cur: CursorText, opts: CutOptions) -> Shown:
    """Trims the answer where its block ends (LINE_RULES) or at max_lines; final when one fires."""
    b = _block(shown, cur, opts)
    complete = len(b.lines) if opts.done and not opts.capped else len(b.lines) - 1  # the last line may still grow
    for i in range(1, complete):
        line = b.lines[i]
        if line.strip():
            rule = next((r for r in LINE_RULES if r(b, i, line)), None)
            if rule is not None:
                log.debug("cut block_end: %s at line %d", rule.__name__, i)
                return Shown("\n".join(b.lines[:i]), True)
        if i + 1 >= opts.max_lines:
            log.debug("cut block_end: max_lines at line %d", i)
            return Shown("\n".join(b.lines[: i + 1]), True)
    if opts.capped and len(b.lines) > 1:  # the cap stopped the model mid-line: that line is not shown
        log.debug("cut block_end: the token cap at line %d", len(b.lines) - 1)
        return Shown("\n".join(b.lines[:-1]), True)
    return shown


def _block_lines(lines: list[str], base: int) -> int:
    """Lines before the first one of code at the top level (inside a block, that one ends it)."""
    if base > 0:
        for i, line in enumerate(lines[1:], start=1):
            if line.strip() and indent_of(line) == 0:
                return i
    return len(lines)
