"""Broken versions of HumanEval solutions, made deterministically (seeded), of two families.

File = the problem's prompt + canonical solution (imports, helpers, the function).

Quick-fix kinds (a real linter, ruff, must report a diagnostic the original file does not have):
- undefined-name: one read of a local variable is renamed (a typo: last letter dropped, or an
  "s" added), so the name is undefined there (ruff F821).
- missing-import: one top-level import line whose names the code uses is deleted (F821).
- syntax-error: the colon of one block header, or the last closing bracket of one line, is
  deleted (ruff: invalid-syntax).
- (a call with the wrong number of arguments is not made: ruff has no rule that reports it, and
  the diagnostics must come from the linter.)

Inline-edit kinds (the file still compiles, its tests fail):
- comparison: one comparison operator flipped (< and <=, > and >=, == and !=).
- and-or: one `and` turned into `or`, or the reverse.
- off-by-one: one integer literal moved by one (a bound or a constant).

For each problem and kind, every candidate site is listed and one is drawn with a seeded RNG;
mutants whose tests still pass (or that ruff does not flag, for quick fixes) are dropped.
"""

from __future__ import annotations

import ast
import builtins
import io
import random
import re
import tokenize
from dataclasses import dataclass

from bench.quality.data import Problem

QUICK_FIX_KINDS = ("undefined-name", "missing-import", "syntax-error")
INLINE_KINDS = ("comparison", "and-or", "off-by-one")
MUTATION_SEED = 20260113
_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_HEADER = re.compile(r"^\s*(if|elif|else|for|while|with|try|except|finally|def)\b.*:\s*(#.*)?$")


@dataclass(frozen=True)
class Mutant:
    task_id: str  # e.g. "QuickFix/undefined-name/HumanEval/3"
    kind: str
    problem: Problem
    original: str  # the working file
    broken: str  # the file with one mistake
    line: int  # 0-based line of the change in `broken`
    note: str  # what was changed, for the report


def source_of(p: Problem) -> str:
    return p.prompt + p.canonical_solution


def def_line(document: str, name: str) -> int | None:
    """0-based line of `def name(` at the top level (HumanEval keeps the function last), or None."""
    return next((i for i, ln in enumerate(document.split("\n")) if ln.startswith(f"def {name}(")), None)


def _offset(text: str, line: int, col: int) -> int:
    """Offset of a 1-based line and a 0-based column (ast/tokenize positions, str indices)."""
    lines = text.split("\n")
    return sum(len(ln) + 1 for ln in lines[: line - 1]) + col


def _replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _undefined_name(p: Problem, src: str, rng: random.Random) -> tuple[str, int, str] | None:
    tree = ast.parse(src)
    fn = _function(tree, p.entry_point)
    if fn is None:
        return None
    defined = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    defined |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))} | set(dir(builtins))
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    stored |= {a.arg for a in fn.args.args}
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in stored]
    if not reads:
        return None
    node = rng.choice(sorted(reads, key=lambda n: (n.lineno, n.col_offset)))
    typo = node.id[:-1] if len(node.id) > 2 and node.id[:-1] not in defined else node.id + "s"
    if typo in defined:
        return None
    start = _offset(src, node.lineno, node.col_offset)
    return _replace(src, start, start + len(node.id), typo), node.lineno - 1, f"`{node.id}` -> `{typo}`"


def _missing_import(p: Problem, src: str, rng: random.Random) -> tuple[str, int, str] | None:
    tree = ast.parse(src)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.value.id for n in ast.walk(tree)
                                                                       if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno == n.end_lineno
               and any((a.asname or a.name.split(".")[0]) in used for a in n.names)]
    if not imports:
        return None
    node = rng.choice(imports)
    lines = src.split("\n")
    removed = lines[node.lineno - 1]
    return "\n".join(lines[: node.lineno - 1] + lines[node.lineno :]), node.lineno - 1, f"deleted `{removed.strip()}`"


def _syntax_error(p: Problem, src: str, rng: random.Random) -> tuple[str, int, str] | None:
    lines = src.split("\n")
    body_start = src[: len(p.prompt)].count("\n")  # the canonical solution's first line
    sites = []
    for i in range(body_start, len(lines)):
        line = lines[i]
        code = line.split("#")[0].rstrip()
        if _HEADER.match(line) and code.endswith(":"):
            sites.append((i, len(code) - 1, ":"))
        elif code.endswith((")", "]", "}")) and not code.lstrip().startswith((")", "]", "}")):
            sites.append((i, len(code) - 1, code[-1]))
    if not sites:
        return None
    i, col, ch = rng.choice(sites)
    lines[i] = lines[i][:col] + lines[i][col + 1 :]
    return "\n".join(lines), i, f"deleted `{ch}` at the end of line {i + 1}"


def _tokens(src: str, start_line: int) -> list[tokenize.TokenInfo]:
    return [t for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.start[0] - 1 >= start_line]


def _token_mutation(p: Problem, src: str, rng: random.Random, kind: str) -> tuple[str, int, str] | None:
    body_start = len(p.prompt.split("\n")) - 1
    toks = _tokens(src, body_start)
    if kind == "comparison":
        sites = [(t, _FLIP[t.string]) for t in toks if t.type == tokenize.OP and t.string in _FLIP]
    elif kind == "and-or":
        sites = [(t, "or" if t.string == "and" else "and") for t in toks if t.type == tokenize.NAME and t.string in ("and", "or")]
    else:
        sites = []
        for t in toks:
            if t.type == tokenize.NUMBER and t.string.isdigit():
                n = int(t.string)
                sites.append((t, str(n + 1) if n == 0 or rng.random() < 0.5 else str(n - 1)))
    if not sites:
        return None
    tok, new = rng.choice(sites)
    start = _offset(src, tok.start[0], tok.start[1])
    return _replace(src, start, start + len(tok.string), new), tok.start[0] - 1, f"`{tok.string}` -> `{new}` on line {tok.start[0]}"


_MAKERS = {
    "undefined-name": _undefined_name,
    "missing-import": _missing_import,
    "syntax-error": _syntax_error,
}


def candidates(problems: list[Problem], kinds: tuple[str, ...], seed: int = MUTATION_SEED) -> list[Mutant]:
    """One candidate mutant per (problem, kind) where the kind applies (not yet checked)."""
    out = []
    for kind in kinds:
        family = "QuickFix" if kind in QUICK_FIX_KINDS else "InlineEdit"
        for p in problems:
            rng = random.Random(f"{seed}:{kind}:{p.task_id}")
            src = source_of(p)
            made = _MAKERS[kind](p, src, rng) if kind in _MAKERS else _token_mutation(p, src, rng, kind)
            if made is None or made[0] == src:
                continue
            broken, line, note = made
            out.append(Mutant(f"{family}/{kind}/{p.task_id}", kind, p, src, broken, line, note))
    return out
