"""Line and block completion tasks from real TypeScript / JavaScript / Go / Rust files.

The document is the whole real file; the task hides part of it and the cursor sits where the hidden
text starts (prefix = the file before the cursor, suffix = the file after the hidden text, so
prefix + truth + suffix is the file again):

- line, cursor *after indent*: a non-trivial line's text after its indentation is hidden; the
  cursor sits after the indentation (the person has typed it), the newline and the next lines stay.
- line, cursor *mid-line*: the same lines, the cursor after an identifier or an operator inside
  the line (one point per line, drawn with the seed); the rest of the line is hidden.
- block, cursor *block start*: a line that ends with `{`, its body on the next 2-10 lines (at most
  600 characters), indented deeper, closed by a line that starts with `}` at the opener's
  indentation. The cursor sits after the `{`, the newline and the first body line's indentation;
  the body up to the end of its last line is hidden, the newline and the closing `}` line stay (as
  an editor holds it after Enter between braces).

Files: only sources the grammar (tree-sitter, the same grammar wheels Kestrel's guard uses) parses
without an error, at most 100 KB, no CR line ends; no tests (`*_test.go`, `*.test.ts`, test/tests/
testing/testdata/fixtures/benches/examples folders, ...), no vendored code (vendor/, third_party/,
node_modules/), no generated files (a `Code generated` / `DO NOT EDIT` / `@generated` /
`auto-generated` line near the top; no data table or re-export list: over 40% of the lines alike),
no declaration files (`.d.ts`).

Lines: a line qualifies when it starts outside comments and strings, has no comment on it, does
not run into a multi-line string, is not part of an import (`import`, `export ... from`, `use`,
`extern crate`, `mod x;`, Go's `package` and `import`) or of a Rust `#[cfg(test)]` module, is at most 200 characters, and holds at
least two identifiers or numbers outside string literals (not `}`, `});`, `break;`, `} else {`;
`return nil` qualifies). A block's first body line must not be a comment, its body must hold a
qualifying line and must not end inside a multi-line comment or string.

Sampling: per language a fixed number of line and block tasks (60 + 40 by default), spread evenly
over the language's packages (a package with fewer candidates gives its share to the others), drawn
with a fixed seed, then ordered by package, file and position (consecutive tasks share a file, so
llama.cpp can reuse the prompt prefix).
"""

from __future__ import annotations

import bisect
import importlib
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from .lang_sources import EXTENSIONS, LANGUAGES, Package, source_dir

SETS = ("line", "block")
CURSORS = {"line": ("after indent", "mid-line"), "block": ("block start",)}
DEFAULT_SAMPLE = {"line": 60, "block": 40}  # per language
FULL_SAMPLE = {"line": 600, "block": 400}  # --full: ten times as many (every candidate would be ~100k)
SAMPLE_SEED = 2025

MAX_FILE_CHARS = 100_000
MAX_LINE_CHARS = 200
BLOCK_LINES = (2, 10)
BLOCK_MAX_CHARS = 600

GRAMMARS = {
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "javascript": ("tree_sitter_javascript", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
}
COMMENTS = {"comment", "line_comment", "block_comment", "html_comment"}
STRINGS = {
    "typescript": {"string", "template_string", "regex"},
    "javascript": {"string", "template_string", "regex"},
    "go": {"interpreted_string_literal", "raw_string_literal", "rune_literal"},
    "rust": {"string_literal", "raw_string_literal", "char_literal"},
}
IMPORTS = {
    "typescript": {"import_statement"},
    "javascript": {"import_statement"},
    "go": {"import_declaration", "package_clause"},
    "rust": {"use_declaration", "extern_crate_declaration"},
}

TEST_DIRS = {"test", "tests", "__tests__", "testing", "testdata", "testutil", "testutils", "fixtures", "__fixtures__",
             "__mocks__", "bench", "benches", "benchmark", "benchmarks", "example", "examples", "_cookbook", "fuzz",
             "e2e"}
VENDOR_DIRS = {"vendor", "vendored", "third_party", "third-party", "node_modules"}
TEST_FILE = re.compile(r"(_test\.go|\.(test|spec|bench)\.[cm]?[jt]s|_tests?\.rs|^tests?\.rs|^test_\w+\.rs|\.d\.[cm]?ts"
                       r"|^functional_tests\.go|test[-_]?utils?\.\w+)$")
GENERATED = re.compile(r"code generated|do not edit|@generated|auto-?generated|automatically generated|"
                       r"this file is generated", re.I)
WORD = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*")
OPERATOR_RUN = re.compile(r"[=(\[{,:.+\-*/<>!&|?]+")
SKIP_MID_AFTER = {"//", "/*"}


class HiddenSpan:
    """A task that hides `text[start:end]` of a real file: the prefix, the hidden truth, the suffix
    (prefix + truth + suffix is the file again) and the 1-based line of the cursor."""

    text: str
    start: int
    end: int

    @property
    def prefix(self) -> str:
        return self.text[: self.start]

    @property
    def truth(self) -> str:
        return self.text[self.start : self.end]

    @property
    def suffix(self) -> str:
        return self.text[self.end :]

    @property
    def line(self) -> int:
        return self.text.count("\n", 0, self.start) + 1


@dataclass(frozen=True)
class LangTask(HiddenSpan):
    task_id: str  # "<language>/<package>/<path>:<line>:<column>/<cursor>"
    language: str
    set: str  # "line" | "block"
    cursor: str  # "after indent" | "mid-line" | "block start"
    package: str
    path: str  # relative to the package's source folder
    text: str  # the whole original file
    start: int  # the cursor (string offset)
    end: int  # the end of the hidden text


# --- files ------------------------------------------------------------------------------------
def skipped_path(rel: str) -> str | None:
    """Why a file at `rel` (relative to the package's sources) is not used, or None."""
    parts = rel.split("/")
    if any(p.lower() in TEST_DIRS for p in parts[:-1]):
        return "test"
    if any(p.lower() in VENDOR_DIRS for p in parts[:-1]):
        return "vendored"
    if TEST_FILE.search(parts[-1].lower()):
        return "test"
    return None


def skipped_text(text: str) -> str | None:
    if len(text) > MAX_FILE_CHARS:
        return "too large"
    if "\r" in text:
        return "CR line ends"
    head = "\n".join(text.split("\n", 40)[:40])
    if GENERATED.search(head):
        return "generated"
    if "//go:build ignore" in head or "// +build ignore" in head:
        return "build-ignored"
    if is_table(text):
        return "table or list"
    return None


def is_table(text: str) -> bool:
    """A data table or a barrel of re-exports (generated or not): over 40% of its 50+ lines that hold
    a word have one shape (words -> `w`), e.g. `w : []w{w},` or `w,`."""
    shapes: dict[str, int] = {}
    for line in text.split("\n"):
        if re.search(r"\w", line):
            shape = re.sub(r"\w+", "w", line.strip())
            shapes[shape] = shapes.get(shape, 0) + 1
    n = sum(shapes.values())
    return n >= 50 and max(shapes.values()) > 0.4 * n


@lru_cache(maxsize=None)
def parser(language: str) -> Any:
    import tree_sitter

    module, function = GRAMMARS[language]
    grammar = getattr(importlib.import_module(module), function)()
    return tree_sitter.Parser(tree_sitter.Language(grammar))


@dataclass
class Scan:
    """One parsed file: where comments, strings and imports are (string offsets, sorted; `imports`
    also holds Rust's in-file test modules: no task starts in either)."""

    text: str
    code: str  # the text with comments and strings blanked (newlines kept)
    noncode: list[tuple[int, int]]
    comment_starts: list[int]
    imports: list[tuple[int, int]]

    def _inside(self, ranges: list[tuple[int, int]], pos: int, strict: bool) -> bool:
        i = bisect.bisect_right(ranges, (pos, float("inf"))) - 1
        if i < 0:
            return False
        a, b = ranges[i]
        return (a < pos < b) if strict else (a <= pos < b)

    def in_noncode(self, pos: int, strict: bool = False) -> bool:
        return self._inside(self.noncode, pos, strict)

    def runs_on(self, line_start: int, end: int) -> bool:
        """A comment or string holds the line end `end` and began on an earlier line or goes on past
        this line (a `//` comment's range may hold its newline: that one does not count)."""
        i = bisect.bisect_right(self.noncode, (end, float("inf"))) - 1
        if i < 0:
            return False
        a, b = self.noncode[i]
        return a < end < b and (a < line_start or "\n" in self.text[end:b].rstrip("\n"))

    def in_import(self, pos: int) -> bool:
        return self._inside(self.imports, pos, False)

    def noncode_crossing(self, a: int, b: int) -> bool:
        """A comment or string that starts inside [a, b) and ends after b, or a comment in it."""
        i = bisect.bisect_left(self.noncode, (a, -1))
        while i < len(self.noncode) and self.noncode[i][0] < b:
            if self.noncode[i][1] > b:
                return True
            i += 1
        j = bisect.bisect_left(self.comment_starts, a)
        return j < len(self.comment_starts) and self.comment_starts[j] < b


def _char_offsets(text: str) -> list[int] | None:
    """byte offset -> string offset for non-ASCII text (None: they are equal)."""
    if text.isascii():
        return None
    out: list[int] = []
    for i, ch in enumerate(text):
        out.extend([i] * len(ch.encode("utf-8", "surrogatepass")))
    out.append(len(text))
    return out


def _test_module(node: Any) -> int | None:
    """Where the attributes of a `#[cfg(test)]` module start (bytes), None for another module."""
    prev, start, test = node.prev_named_sibling, node.start_byte, False
    while prev is not None and prev.type == "attribute_item":
        test = test or b"cfg(test)" in (prev.text or b"")
        start, prev = prev.start_byte, prev.prev_named_sibling
    return start if test else None


def scan(text: str, language: str) -> Scan | None:
    """The file's comment/string/import ranges; None when the grammar finds an error."""
    data = text.encode("utf-8", "surrogatepass")
    tree = parser(language).parse(data)
    root = tree.root_node
    if root.has_error:
        return None
    conv = _char_offsets(text)

    def ch(b: int) -> int:
        return b if conv is None else conv[b]

    noncode: list[tuple[int, int]] = []
    comment_starts: list[int] = []
    imports: list[tuple[int, int]] = []
    strings, import_types = STRINGS[language], IMPORTS[language]
    stack = [root]
    while stack:
        node = stack.pop()
        t = node.type
        if t in COMMENTS:
            noncode.append((ch(node.start_byte), ch(node.end_byte)))
            comment_starts.append(ch(node.start_byte))
            continue
        if t in strings:
            noncode.append((ch(node.start_byte), ch(node.end_byte)))
            continue
        if t in import_types or (t == "export_statement" and node.child_by_field_name("source") is not None) or (
                t == "mod_item" and node.child_by_field_name("body") is None):
            imports.append((ch(node.start_byte), ch(node.end_byte)))
        elif t == "mod_item" and _test_module(node) is not None:  # Rust's `#[cfg(test)] mod tests {...}`
            imports.append((ch(_test_module(node)), ch(node.end_byte)))
            continue
        stack.extend(node.children)
    noncode.sort()
    comment_starts.sort()
    imports.sort()
    chars = list(text)
    for a, b in noncode:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return Scan(text, "".join(chars), noncode, comment_starts, imports)


# --- candidates ---------------------------------------------------------------------------------
def _width(indent: str) -> int:
    return len(indent.expandtabs(4))


def _words(code: str) -> int:
    return len(WORD.findall(code))


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, end at its newline (excluded)."""
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def qualifying_line(s: Scan, a: int, b: int) -> int | None:
    """The cursor after the indentation of line [a, b) when the line qualifies for a task, else None."""
    line = s.text[a:b]
    body = line.lstrip(" \t")
    if not body.strip() or len(line) > MAX_LINE_CHARS:
        return None
    c = a + len(line) - len(body)
    if s.in_noncode(c) or s.in_import(c) or s.noncode_crossing(c, b):
        return None
    if _words(s.code[c:b]) < 2:
        return None
    return c


def mid_points(s: Scan, c: int, b: int) -> list[int]:
    """Cursor points inside line [c, b): after an identifier or a run of operator characters, in
    code, with at least three characters and an identifier or number left to type."""
    line = s.code[c:b]
    ends = {m.end() for m in WORD.finditer(line) if not m.group().isdigit()}
    ends |= {m.end() for m in OPERATOR_RUN.finditer(line) if m.group()[:2] not in SKIP_MID_AFTER}
    out = []
    for e in sorted(ends):
        p = c + e
        if p >= b or s.in_noncode(p, strict=True):
            continue
        rest = s.text[p:b]
        if len(rest.strip()) < 3 or not WORD.search(s.code[p:b]):
            continue
        out.append(p)
    return out


def block_at(s: Scan, lines: list[tuple[int, int]], i: int) -> tuple[int, int] | None:
    """(cursor, end) of the block opened by line i (see the module docstring), or None."""
    a, b = lines[i]
    opener = s.text[a:b].rstrip()
    if not opener.endswith("{") or len(opener) > MAX_LINE_CHARS or i + 1 >= len(lines):
        return None
    brace = a + len(opener) - 1
    start_code = a + len(opener) - len(opener.lstrip())
    if s.in_noncode(brace) or s.in_noncode(start_code) or s.in_import(start_code):
        return None
    w0 = _width(opener[: len(opener) - len(opener.lstrip())])
    k, last = i + 1, None
    while k < len(lines):
        la, lb = lines[k]
        line = s.text[la:lb]
        if line.strip():
            ind = line[: len(line) - len(line.lstrip())]
            if _width(ind) <= w0:
                break
            last = k
        elif last is None:
            return None  # a blank first body line
        k += 1
    if last is None or k >= len(lines) or not s.text[lines[k][0] : lines[k][1]].lstrip().startswith("}"):
        return None
    n = last - i
    first_a, first_b = lines[i + 1]
    first = s.text[first_a:first_b]
    cursor = first_a + len(first) - len(first.lstrip(" \t"))
    end = lines[last][1]
    if not BLOCK_LINES[0] <= n <= BLOCK_LINES[1] or end - cursor > BLOCK_MAX_CHARS:
        return None
    if s.in_noncode(cursor) or s.runs_on(lines[last][0], end):
        return None
    body = s.code[cursor:end]
    closer = lines[k][0] + len(s.text[lines[k][0] : lines[k][1]]) - len(s.text[lines[k][0] : lines[k][1]].lstrip())
    if body.count("{") != body.count("}") or s.in_noncode(closer):
        return None
    if not any(qualifying_line(s, *lines[j]) is not None for j in range(i + 1, last + 1)):
        return None
    return cursor, end


def file_tasks(text: str, language: str, package: str, path: str, seed: int = SAMPLE_SEED
               ) -> dict[str, list[LangTask]] | None:
    """Every candidate task of one file ({"line": [...], "block": [...]}), None when the file is
    not used (see skipped_text; a parse error)."""
    if skipped_text(text):
        return None
    s = scan(text, language)
    if s is None:
        return None
    lines = _lines(text)
    out: dict[str, list[LangTask]] = {"line": [], "block": []}

    def task(set_name: str, cursor: str, i: int, start: int, end: int) -> LangTask:
        col = start - lines[i][0]
        return LangTask(f"{language}/{package}/{path}:{i + 1}:{col + 1}/{cursor.replace(' ', '-')}", language,
                        set_name, cursor, package, path, text, start, end)

    for i, (a, b) in enumerate(lines):
        c = qualifying_line(s, a, b)
        if c is not None:
            out["line"].append(task("line", "after indent", i, c, b))
            points = mid_points(s, c, b)
            if points:
                p = random.Random(f"{seed}:{package}:{path}:{i}").choice(points)
                out["line"].append(task("line", "mid-line", i, p, b))
        blk = block_at(s, lines, i)
        if blk is not None:
            out["block"].append(task("block", "block start", i + 1, *blk))
    return out


# --- the sets -----------------------------------------------------------------------------------
@dataclass
class Candidates:
    language: str
    by_package: dict[str, dict[str, list[LangTask]]]  # package name -> set -> tasks
    files: dict[str, int]  # package name -> files used
    skipped: dict[str, int]  # why -> files

    def count(self, set_name: str) -> int:
        return sum(len(v[set_name]) for v in self.by_package.values())


def source_files(root: Path, language: str) -> Iterable[tuple[str, Path]]:
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name.endswith(EXTENSIONS[language]):
            yield p.relative_to(root).as_posix(), p


def candidates(language: str, pkgs: list[Package], roots: dict[str, Path] | None = None,
               seed: int = SAMPLE_SEED) -> Candidates:
    """Every candidate task of `language` over its pinned packages (their sources from the cache,
    or from `roots`: package key -> folder)."""
    out = Candidates(language, {}, {}, {})
    for pkg in pkgs:
        if pkg.language != language:
            continue
        root = (roots or {}).get(pkg.key) or source_dir(pkg)
        sets: dict[str, list[LangTask]] = {"line": [], "block": []}
        used = 0
        for rel, path in source_files(root, language):
            why = skipped_path(rel)
            text = None
            if why is None:
                try:
                    text = path.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    why = "not UTF-8"
            if why is None and text is not None:
                why = skipped_text(text)
                if why is None:
                    got = file_tasks(text, language, pkg.name, rel, seed)
                    if got is None:
                        why = "parse error"
                    else:
                        used += 1
                        for k in sets:
                            sets[k] += got[k]
            if why:
                out.skipped[why] = out.skipped.get(why, 0) + 1
        out.by_package[pkg.name] = sets
        out.files[pkg.name] = used
    return out


def sample(cands: Candidates, sizes: dict[str, int] | None, seed: int = SAMPLE_SEED) -> dict[str, list[LangTask]]:
    """n tasks per set spread evenly over the packages (see the module docstring); None: all."""
    out: dict[str, list[LangTask]] = {}
    order = list(cands.by_package)
    for set_name in SETS:
        pools = {p: cands.by_package[p][set_name] for p in order}
        n = None if sizes is None else sizes.get(set_name)
        out[set_name] = spread_sample(pools, order, n, random.Random(f"{seed}:{cands.language}:{set_name}"))
    return out


def spread_sample(pools: dict[str, list[Any]], order: list[str], n: int | None, rng: random.Random) -> list[Any]:
    """n of the pools' items (None: all), spread evenly over the pools in `order` (a pool with fewer
    gives its share to the others), drawn with `rng`; ordered by pool, then by path and position."""
    if n is None:
        chosen = {p: list(pools[p]) for p in order}
    else:
        quota = {p: 0 for p in order}
        left = min(n, sum(len(v) for v in pools.values()))
        while left > 0:
            open_ = [p for p in order if quota[p] < len(pools[p])]
            share, extra = divmod(left, len(open_))
            bonus = set(rng.sample(open_, extra))
            for p in open_:
                give = min(share + (p in bonus), len(pools[p]) - quota[p])
                quota[p] += give
                left -= give
        chosen = {p: [pools[p][i] for i in sorted(rng.sample(range(len(pools[p])), quota[p]))] for p in order}
    return [t for p in order for t in sorted(chosen[p], key=lambda t: (t.path, t.start))]


def plan(languages: tuple[str, ...], sizes: dict[str, int] | None, pkgs: list[Package], limit: int | None = None,
         seed: int = SAMPLE_SEED, roots: dict[str, Path] | None = None
         ) -> tuple[dict[str, dict[str, list[LangTask]]], dict[str, Any]]:
    """{language: {set: tasks}} and the candidate counts per language."""
    tasks: dict[str, dict[str, list[LangTask]]] = {}
    counts: dict[str, Any] = {}
    for language in languages:
        cands = candidates(language, pkgs, roots, seed)
        chosen = sample(cands, sizes, seed)
        if limit is not None:
            chosen = {k: _spread(v, limit) for k, v in chosen.items()}
        tasks[language] = chosen
        counts[language] = {"packages": len(cands.by_package), "files": sum(cands.files.values()),
                            "files_skipped": dict(sorted(cands.skipped.items())),
                            "line": cands.count("line"), "block": cands.count("block"),
                            "per_package": {p: {"files": cands.files[p], **{k: len(v) for k, v in s.items()}}
                                            for p, s in cands.by_package.items()}}
    return tasks, counts


def _spread(tasks: list[LangTask], n: int) -> list[LangTask]:
    """n of the tasks, evenly spaced (a --limit smoke run still sees several packages)."""
    if n >= len(tasks):
        return tasks
    return [tasks[(i * len(tasks)) // n] for i in range(n)]


# --- what raw is given ------------------------------------------------------------------------
CHARS_PER_TOKEN = 3.5
RAW_PREFIX_TOKENS = 1500  # Kestrel's default completion budgets (prefixTokens / suffixTokens)
RAW_SUFFIX_TOKENS = 400
ANCHOR = 1024


def raw_window(prefix: str, suffix: str) -> tuple[str, str]:
    """The tail of the prefix and the head of the suffix within the budgets above (whole real files
    do not fit n_ctx): the prefix starts on a line boundary at a stable anchor (consecutive tasks
    in a file share it, so llama.cpp reuses the cached prompt), the suffix ends at a line end."""
    budget = int(RAW_PREFIX_TOKENS * CHARS_PER_TOKEN)
    if len(prefix) > budget:
        start = -(-(len(prefix) - budget) // ANCHOR) * ANCHOR
        nl = prefix.find("\n", start)
        prefix = prefix[nl + 1 :] if 0 <= nl < len(prefix) - 1 else prefix[start:]
    budget = int(RAW_SUFFIX_TOKENS * CHARS_PER_TOKEN)
    if len(suffix) > budget:
        cut = suffix.rfind("\n", 0, budget)
        suffix = suffix[: cut + 1] if cut > 0 else suffix[:budget]
    return prefix, suffix


__all__ = ["LANGUAGES", "LangTask", "SETS", "plan", "raw_window", "file_tasks"]
