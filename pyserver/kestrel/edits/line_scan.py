"""Re-reading a region line by line with the completion model, to find a bug's slip.

Each line of the region is asked for in turn (fill-in-the-middle, the rest of the file as it is);
an answer that differs by a slip (≤ 2 tokens, no new names) is a candidate if the model found it at
least ten times as likely as the line as written (`departure_margin`, from the endpoint's log
probabilities) and the region still parses and lints clean. The smallest change wins; none found,
the instruction goes to the model as a rewrite. Only with a `fim` provider (a request per line).
Why, and what was tried: docs/design-notes.md#pyserverkestreleditsline_scanpy
"""

from __future__ import annotations

import difflib
import keyword
import re
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Callable

from ..providers.base import CompletionPrompt, Provider, StreamStats
from ..providers.prompts import comment_prefix
from .confidence import TOP_LOGPROBS, margin

_TOKEN = re.compile(r"\d+(?:\.\d+)?|\w+|==|!=|<=|>=|\*\*|//|->|&&|\|\||\S")
_WORD = re.compile(r"[A-Za-z_]\w*")
MAX_SLIP_TOKENS = 2  # tokens changed on either side for a difference to count as a slip
MAX_LINES = 40  # a longer region is not re-read line by line (one request per line)
MAX_INSERTED_LINES = 3  # a missing statement: its lines written before the line re-read
MAX_INSERTED_TOKENS = 24
_KEYWORDS = set(keyword.kwlist) | {"true", "false", "null", "nil", "undefined", "this", "self"}
_SKIP = re.compile(r"^\s*(#|//|\"\"\"|'''|@|(async\s+)?def\b|class\b|$)")


@dataclass(frozen=True)
class Candidate:
    line: int  # index in the region's lines
    new_line: str
    tokens_changed: int
    margin: float | None = None  # see departure_margin; None when the endpoint gave no log probabilities
    # "slip": the line rewritten; "delete": the line left out (the model wrote the next line in its
    # place); "insert": `inserted` written before the line (the model wrote them, then the line).
    kind: str = "slip"
    inserted: tuple[str, ...] = ()

    def apply(self, region_text: str) -> str:
        lines = region_text.split("\n")
        if self.kind == "delete":
            del lines[self.line]
        elif self.kind == "insert":
            lines[self.line:self.line] = list(self.inserted)
        else:
            lines[self.line] = self.new_line
        return "\n".join(lines)


def slip(old: str, new: str, known_words: set[str]) -> int | None:
    """Tokens changed when `new` differs from `old` by a slip, else None."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if a == b:
        return None
    changed = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        changed += max(i2 - i1, j2 - j1)
        if any(_WORD.fullmatch(t) and t not in known_words and t not in _KEYWORDS for t in b[j1:j2]):
            return None  # a name the code does not have: another way to write it, or a guess
    return changed if changed <= MAX_SLIP_TOKENS else None


def _known(line: str, known_words: set[str]) -> bool:
    """Every name in `line` is one the code has (or a keyword)."""
    return all(w in known_words or w in _KEYWORDS for w in _WORD.findall(line))


def _next_code_line(lines: list[str], i: int) -> str | None:
    """The first non-blank line after `lines[i]` in the region, stripped; None at its end."""
    return next((ln.strip() for ln in lines[i + 1:] if ln.strip()), None)


def comment_block(note: str, indent: str, language: str) -> str:
    """`note` as line comments at `indent`, each line ending in a newline."""
    mark = comment_prefix(language)
    return "".join(f"{indent}{mark} {ln}".rstrip() + "\n" for ln in note.strip().split("\n"))


def _docstring_lines(lines: list[str]) -> set[int]:
    inside, out = False, set()
    for i, line in enumerate(lines):
        quotes = line.count('"""') + line.count("'''")
        if inside or quotes:
            out.add(i)
        if quotes % 2 == 1:
            inside = not inside
    return out


_BLANKS = re.compile(r"[ \t]+")


def _keeps_to(line: str, text: str) -> bool:
    """`text` (blanks removed) is still the start of `line` (blanks removed, ending in a newline)."""
    if "\n" in text:
        text = text[: text.index("\n") + 1]
    return line.startswith(text)


def _parting(line: str, pieces: list[str]) -> tuple[int, str] | None:
    """Where an answer streamed as `pieces` parts from `line` (blanks removed, ending in a newline):
    the piece's index and the answer before it (blanks removed). None: it keeps to the line."""
    so_far = ""
    for k, piece in enumerate(pieces):
        after = so_far + _BLANKS.sub("", piece)
        if not _keeps_to(line, after):
            return k, so_far
        so_far = after
    return None


def departure_margin(old: str, tokens: list[tuple[str, dict[str, float]]]) -> float | None:
    """How much more likely the model found its answer than the line as written, at the token
    where the two part: log p(its token) − log p(the tokens that keep to the line), in nats.
    Spacing is ignored (another spacing is not a different line). When no listed alternative
    keeps to the line, its probability is at most the least listed one's, so the margin is a
    lower bound. None: no log probabilities, or the answer never parts from the line."""
    line = _BLANKS.sub("", old) + "\n"
    parted = _parting(line, [chosen for chosen, _ in tokens])
    if parted is None:
        return None
    k, so_far = parted
    return margin(tokens[k][0], tokens[k][1], lambda t: _keeps_to(line, so_far + _BLANKS.sub("", t)))


async def first_line(provider: Provider, prompt: CompletionPrompt, deltas: list[str] | None = None) -> str:
    """The model's line; `deltas` gets the streamed pieces (a token each from llama.cpp's servers)."""
    text, pieces = "", deltas if deltas is not None else []
    async with aclosing(provider.complete(prompt, StreamStats())) as stream:  # closed at the line's end
        async for delta in stream:
            pieces.append(delta)
            text += delta
            if "\n" in text:
                break
    return text.split("\n", 1)[0]


def _departure(old: str, deltas: list[str]) -> int | None:
    """Index of the piece where the answer parts from the line as written (spacing ignored);
    `len(deltas)` when the answer ends where the line goes on (the line's end is the departure)."""
    line = _BLANKS.sub("", old) + "\n"
    parted = _parting(line, deltas)
    if parted is not None:
        return parted[0]
    return None if _keeps_to(line, _BLANKS.sub("", "".join(deltas)) + "\n") else len(deltas)


async def weigh(provider: Provider, prompt: CompletionPrompt, old: str, deltas: list[str]) -> float | None:
    """The departure margin of an answer streamed as `deltas`: the log probabilities are asked for
    only at the token where it parts from the line, by asking again for that one token (listing a
    token's alternatives costs llama-cpp-python about 0.1 s on 2 cores: over a whole line, seconds)."""
    k = _departure(old, deltas)
    if k is None:
        return None
    # No stop sequence: where the answer ended the line, the line's end is the token to weigh.
    ask = replace(prompt, answered="".join(deltas[:k]), max_tokens=1, top_logprobs=TOP_LOGPROBS, stop=())
    stats = StreamStats()
    async with aclosing(provider.complete(ask, stats)) as stream:
        async for _ in stream:
            pass
    if not stats.tokens:
        return None
    return departure_margin(old, [(d, {}) for d in deltas[:k]] + stats.tokens[:1])


async def candidates(
    text: str,
    start: int,
    end: int,
    provider: Provider,
    language: str,
    path: str,
    acceptable: Callable[[str], bool],
    min_margin: float | None = None,
    note: str = "",
    structural: bool = False,
) -> list[Candidate]:
    """Slips the model finds in `text[start:end]`, best first; each keeps the region acceptable
    and, given `min_margin`, was preferred to the line as written by at least that margin. A `note`
    (the user's words) is shown to the model as a comment above the region: for studies only (the
    server passes none: it cost right slips, docs/design-notes.md#line_scan). `structural` also
    reads a line left out (the model wrote the next line in its place) and a statement missing
    before the line (the model wrote new lines of known names, then the line): after every slip."""
    region = text[start:end]
    lines = region.split("\n")
    if len(lines) > MAX_LINES:
        return []
    words = set(_WORD.findall(text))
    if note:
        first = next((ln for ln in lines if ln.strip()), "")
        block = comment_block(note, first[: len(first) - len(first.lstrip())], language)
        text, start, end = text[:start] + block + text[start:], start + len(block), end + len(block)
    skip = _docstring_lines(lines)
    found: list[Candidate] = []
    offset = start
    for i, line in enumerate(lines):
        line_start, offset = offset, offset + len(line) + 1
        if i in skip or _SKIP.match(line):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        prompt = CompletionPrompt(prefix=text[:line_start] + indent, suffix=text[line_start + len(line):],
                                  language=language, path=path, max_tokens=64, multiline=False, stop=("\n",))
        deltas: list[str] = []
        new = indent + (await first_line(provider, prompt, deltas)).strip()
        changed = slip(line.strip(), new.strip(), words)
        if changed is not None:
            candidate = Candidate(i, new, changed)
        elif structural:
            candidate = await _structural(provider, prompt, lines, i, new, deltas, words)
            if candidate is None:
                continue
        else:
            continue
        if not acceptable(candidate.apply(region)):
            continue
        weighed = await weigh(provider, prompt, line, deltas)
        if min_margin is not None and (weighed is None or weighed < min_margin):
            continue
        found.append(replace(candidate, margin=weighed))
    return sorted(found, key=lambda c: (c.kind != "slip", c.tokens_changed, c.line))


async def _structural(provider: Provider, prompt: CompletionPrompt, lines: list[str], i: int, new: str,
                      deltas: list[str], words: set[str]) -> Candidate | None:
    """A line left out or a statement missing before line `i`, read from the model's answer `new` for it
    (docs/design-notes.md#line_scan: HumanEvalFix's missing and excess logic, which a slip cannot reach)."""
    line = lines[i]
    if _TOKEN.findall(new) == _TOKEN.findall(line):
        return None  # the model wrote the line as it is: it agrees with it, nothing to continue
    if not new.strip() or new.strip() == _next_code_line(lines, i):
        return Candidate(i, "", len(_TOKEN.findall(line)), kind="delete")
    if not _known(new, words):
        return None
    # The model wrote a line of known names where this one is: does it go on with this very line?
    ask = replace(prompt, answered="".join(deltas).split("\n", 1)[0] + "\n", max_tokens=64, multiline=True, stop=())
    written, rest = [new], ""
    async with aclosing(provider.complete(ask, StreamStats())) as stream:
        async for delta in stream:
            rest += delta
            if rest.count("\n") >= MAX_INSERTED_LINES:
                break
    for more in rest.split("\n")[:MAX_INSERTED_LINES]:
        if more.strip() == line.strip():
            tokens = sum(len(_TOKEN.findall(w)) for w in written)
            if tokens > MAX_INSERTED_TOKENS or not all(_known(w, words) for w in written):
                return None
            return Candidate(i, "\n".join(written), tokens, kind="insert", inserted=tuple(written))
        if not more.strip():
            return None
        written.append(more.rstrip())
    return None


# Words that say the code misbehaves (not "fix" alone: "fix the formatting" asks for no repair, and a
# re-read of correct code can still find a slip the model prefers).
_REPAIR = re.compile(r"\b(bugs?|buggy|wrong|incorrect|fails|failing|failed|broken|does ?n[o']t work)\b", re.IGNORECASE)


def reads_lines(provider: Provider) -> bool:
    """The provider has a fill-in-the-middle endpoint (one cheap request per line)."""
    return getattr(provider, "kind", "") == "fim"


def asks_for_a_repair(instruction: str) -> bool:
    """The instruction asks to fix what is there (not to add or restyle something)."""
    return bool(_REPAIR.search(instruction))
