"""Codebase questions in chat: when a question needs code the conversation does not hold, the
workspace index (context/codebase_index.py) finds it, the turn's last user message is given it
within a token budget as numbered parts, the client is told the sources before the answer starts, and
the answer's citations (`[2]`, `[path:L-L]`) are checked afterwards (a number past the sources or a
path no file has is reported as invented, never offered as a link).
Why: docs/design-notes.md#pyserverkestrelchatcodebasepy
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.codebase_index import CodebaseIndex, Hit, code_names
from ..context.excluded_text import message_text
from ..context.window import CHARS_PER_TOKEN  # a budget in tokens, spent in characters

CODEBASE_TAG = re.compile(r"(?<![\w#])#codebase\b", re.IGNORECASE)
# `[src/app.py:10-20]`, `[app.py:7]`, `[app.py]` (a path with a suffix; lines 1-based)
CITATION = re.compile(r"\[`?([\w./\\-]+\.[A-Za-z0-9]{1,8})`?(?::(\d+)(?:\s*[-–]\s*(\d+))?)?\]")
MAX_SOURCES = 8
MIN_PART_CHARS = 400  # a source cut to fit the budget keeps at least this much, else it is left out
_FENCES = {".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "tsx", ".js": "javascript",
           ".jsx": "jsx", ".mjs": "javascript", ".go": "go", ".rs": "rust", ".java": "java", ".c": "c",
           ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby", ".md": "markdown"}
# How a definition of a name starts in the languages the index reads: a file that uses a name but does
# not define it (the caller the user has open) does not answer "where is it defined?".
_DEFINED = (r"(?:\b(?:def|class|function|fn|func|interface|type|struct|enum|trait|const|let|var|module)\s+"
            r"(?:\([^)]*\)\s*)?{0}\b|^\s*{0}\s*[:=])")
# Numbered parts, cited by number: a small model copies `[2]` where it garbles or invents a path
# (the 0.5B named a file that does not exist in 3 of its 13 path mentions), and a number names the exact
# span the prompt held. `[path:L-L]` citations are still read (a capable model writes them unasked).
INSTRUCTION = ("Code from the workspace, found for this question (a search, so some of it may not matter), "
               "numbered. Answer from it; when you use a part, cite its number in brackets, as [1].")
# Said again after the question: a small model follows what it read last (on the 0.5B, with the
# instruction only before the code, 0 of 24 answers cited a file).
# It ends in the example `[1]`: without it the 0.5B cited less and named more files that do not exist (3 of
# 24 answers grounded, 6 of 15 names invented, against 11 and 0 of 26); with it, some answers open by
# quoting the first source (design notes).
REMINDER = "(Answer from the numbered workspace code above; cite each part you use by its number, as [1].)"
# `[2]`, `[1, 3]`, `[1][2]` in prose; not an index (`items[0]`, `f()[1]`) nor a Markdown link (`[1](url)`, `[1]: url`)
NUMBERED = re.compile(r"(?<![\w\])\[`'\"])((?:\[\d{1,2}(?:\s*,\s*\d{1,2})*\])+)(?![(:])")


@dataclass(frozen=True)
class Source:
    path: str
    file: Path
    start: int  # 0-based first line
    end: int  # 0-based last line, inclusive
    name: str
    text: str

    def ref(self) -> dict[str, Any]:
        return source_ref(self.file, self.path, self.start, self.end, self.name)


def source_ref(file: Path, path: str, start: int, end: int, name: str = "") -> dict[str, Any]:
    """A `SourceRef` on the wire: whole lines `start`..`end` (0-based, inclusive) of `file`."""
    ref: dict[str, Any] = {"uri": file.as_uri(), "path": path,
                           "range": {"start": {"line": start, "character": 0}, "end": {"line": end + 1, "character": 0}}}
    if name:
        ref["name"] = name
    return ref


def question_for(flag: bool | None, messages: list[dict], enabled: bool) -> str | None:
    """The question to search the workspace for, or None when this turn needs no search: asked for
    (`codebase: true`, `#codebase`), or the question names code nowhere in the conversation."""
    users = [m for m in messages if m.get("role") == "user"]
    if flag is False or not users:
        return None
    question = message_text(users[-1])
    asked = flag is True or bool(CODEBASE_TAG.search(question))
    question = CODEBASE_TAG.sub(" ", question).strip()
    if asked:
        return question or None
    if not enabled:
        return None
    held = "\n".join(message_text(m) for m in messages[:-1]) + "\n" + _attached(question)
    wanted = [name for name in code_names(_asked(question))
              if not re.search(_DEFINED.format(re.escape(name)), held, re.MULTILINE)]
    return question if wanted else None


# What a client attaches before the question (extension/src/chat/context.ts, mentionContext.ts): a label
# line, then a fenced block or (outlines, problems) lines up to a blank line. Not the user's words.
_ATTACHED_BLOCK = re.compile(r"^(?:File|Files in the folder|Open file|Selected lines [\d-]+ of|Problems in|Outline of|"
                             r"Changes in the working tree)\b[^\n]*:[ \t]*\n(?:[^\n]*\S[^\n]*(?:\n|\Z))*", re.MULTILINE)


_FENCED = re.compile(r"```.*?(```|\Z)", re.DOTALL)


def _asked(text: str) -> str:
    """The user's own words: what the client attached (fenced code, outlines, problems) is not the question."""
    return _ATTACHED_BLOCK.sub(" ", _FENCED.sub(" ", text))


def _attached(text: str) -> str:
    return "\n".join(m.group(0) for m in _FENCED.finditer(text))


_PREAMBLE = re.compile(r"^\s*(?:import\b|from\b.*\bimport\b|package\b|use\b|#include\b|using\b|require\(|"
                       r"const .*= require\(|export \* from|export \{[^}]*\} from|\}|\)|$)")


def gather(index: CodebaseIndex, question: str, budget_tokens: int, held: str = "",
           near: frozenset[str] = frozenset()) -> list[Source]:
    """The best chunks for the question, within the budget: none that overlaps one taken, that the
    conversation already holds (`held`: the file the client attached), or that only imports. `near`:
    the files the user works in (see CodebaseIndex.search)."""
    budget = int(budget_tokens * CHARS_PER_TOKEN)
    picked: list[Source] = []
    for hit in index.search(_asked(question), limit=MAX_SOURCES * 2, near=near):
        if len(picked) >= MAX_SOURCES or budget < MIN_PART_CHARS:
            break
        if any(s.path == hit.path and s.start <= hit.end and hit.start <= s.end for s in picked):
            continue
        if (hit.text.strip() and hit.text.strip() in held) or all(_PREAMBLE.match(line) for line in hit.text.splitlines()):
            continue
        source = _fit(hit, budget)
        if source is not None:
            picked.append(source)
            budget -= len(source.text) + len(source.path) + 20
    return picked


def _fit(hit: Hit, budget: int) -> Source | None:
    text, end = hit.text, hit.end
    if len(text) > budget:
        lines, kept, size = text.splitlines(), [], 0
        for line in lines:
            if size + len(line) + 1 > budget:
                break
            kept.append(line)
            size += len(line) + 1
        if size < MIN_PART_CHARS:
            return None
        text, end = "\n".join(kept), hit.start + len(kept) - 1
    return Source(hit.path, hit.file, hit.start, end, hit.name, text)


def prompt_block(sources: list[Source]) -> str:
    parts = [INSTRUCTION]
    for n, s in enumerate(sources, 1):
        fence = _FENCES.get(Path(s.path).suffix.lower(), "")
        parts.append(f"[{n}] {s.path}:{s.start + 1}-{s.end + 1}\n```{fence}\n{s.text}\n```")
    return "\n\n".join(parts)


def with_sources(messages: list[dict], sources: list[Source]) -> list[dict]:
    """The conversation with the code put before the last user message's text (the system prompt
    and earlier turns stay byte-identical: a provider's prompt cache keeps them)."""
    if not sources:
        return messages
    block = prompt_block(sources)
    last = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    message = dict(messages[last])
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [{"type": "text", "text": block}, *content, {"type": "text", "text": REMINDER}]
    else:
        message["content"] = block + "\n\n" + CODEBASE_TAG.sub(" ", str(content or "")).strip() + "\n\n" + REMINDER
    return messages[:last] + [message] + messages[last + 1:]


_MENTIONED = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,8}")


def near_files(index: CodebaseIndex, recent: list[Path], conversation: str) -> frozenset[str]:
    """The files the user works in: the documents opened or edited last, and the workspace files
    the conversation names (`tasky/utils.py`, a chip's label)."""
    named = {index.has_file(m.group(0)) for m in _MENTIONED.finditer(conversation[-20_000:])}
    return frozenset(str(p) for p in [*recent, *named] if p is not None)


# A file name in inline code: a source, doc or config extension (so `os.path` or `self.items` is no path).
_CODE_PATH = re.compile(r"`((?:[\w.-]+/)*[\w.-]*[A-Za-z_][\w-]*\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|java|kt|c|h|cc|cpp|hpp|"
                        r"cs|rb|php|swift|scala|vue|css|html|sql|sh|md|rst|txt|toml|json|ya?ml|cfg|ini))`")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)


def unknown_paths(index: CodebaseIndex, answer: str) -> list[str]:
    """Paths the answer writes as inline code (`` `tasky/dates.py` ``, outside code blocks and
    `[path:L-L]` citations) that name no workspace file: the client marks them (a bare path a small
    model invents reads as a fact otherwise)."""
    prose = CITATION.sub("", _FENCE.sub("", answer))
    out: list[str] = []
    for match in _CODE_PATH.finditer(prose):
        path = match.group(1)
        if path not in out and index.has_file(path) is None:
            out.append(path)
    return out


def citations(index: CodebaseIndex, answer: str, sources: list[Source] = ()) -> tuple[list[dict[str, Any]], list[str]]:
    """The answer's citations: `[n]` (the turn's n-th source) and `[path:L-L]` that name a workspace
    file, as SourceRefs, in the order written; and those that name none (invented: a path no file has,
    a number past the sources)."""
    prose = _FENCE.sub("", answer)
    found: list[dict[str, Any]] = []
    invented: list[str] = []
    seen: set[tuple] = set()

    def add(ref: dict[str, Any]) -> None:
        key = (ref["uri"], ref["range"]["start"]["line"], ref["range"]["end"]["line"])
        if key not in seen:
            seen.add(key)
            found.append(ref)

    cited = [(m.start(), m) for m in CITATION.finditer(prose)] + [(m.start(), m) for m in NUMBERED.finditer(prose)]
    for _, match in sorted(cited, key=lambda c: c[0]):
        if match.re is NUMBERED:
            for number in (int(n) for n in re.findall(r"\d+", match.group(1))):
                if 1 <= number <= len(sources):
                    add(sources[number - 1].ref())
                elif f"[{number}]" not in invented:
                    invented.append(f"[{number}]")
            continue
        path, first, last = match.group(1).replace("\\", "/"), match.group(2), match.group(3)
        file = index.has_file(path)
        if file is None:
            if path not in invented:
                invented.append(path)
            continue
        start = max(int(first) - 1, 0) if first else 0
        end = max(int(last) - 1, start) if last else start
        root = index.workspace.root_of(file)
        rel = file.relative_to(root).as_posix() if root is not None else path
        add(source_ref(file, rel, start, end))
    return found, invented
