"""Quick fixes: "Fix with Kestrel" / "Explain with Kestrel" for any diagnostic.

Listing actions costs nothing: no model call happens until the user picks one
(`codeAction/resolve`, or the action's command for clients without resolve support).
A fix is returned as the smallest edit that turns the region into the model's version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice
from typing import Any, Iterable

from ..context.window import line_span, line_start_offset
from ..providers.base import Provider, ProviderError
from ..providers.collect import collect
from .diff import clean_rewrite, minimal_edits, to_lsp_edits, trim_context_echo
from .brace_checks import dropped_name, made_up_name, reindent, same_program
from .inline_edit import enclosing_block
from .imports import missing_imports, undefined_name
from .repairs import missing_token, similar_name
from .statement_region import statement_lines
from .validate import changed_rows, lint_problem, syntax_error

CONTEXT_LINES = 40

FIX_INSTRUCTIONS = (
    "You are an expert programmer. You fix the problem a linter reports in a file, changing as little as "
    "possible. If the fix needs a new import, put the import line first in your code block."
)
EXPLAIN_INSTRUCTIONS = "You explain compiler and linter diagnostics to programmers briefly and concretely."


@dataclass(frozen=True)
class Region:
    start_line: int
    end_line: int  # inclusive
    start: int  # offsets into the document
    end: int
    problem_line: int = -1  # the diagnostic's first and last line (-1: the region's own)
    problem_end_line: int = -1

    def __post_init__(self) -> None:
        if self.problem_line < 0:
            object.__setattr__(self, "problem_line", self.start_line)
        if self.problem_end_line < 0:
            object.__setattr__(self, "problem_end_line", self.end_line)

    def narrow(self, text: str) -> "Region":
        """Just the diagnostic's lines."""
        return region_for(text, self.problem_line, self.problem_end_line)


def region_for(text: str, first_line: int, last_line: int) -> Region:
    start, end = line_span(text, first_line, last_line)
    return Region(first_line, last_line, start, end)


@dataclass(frozen=True)
class Problem:
    """The diagnostic being fixed, as the editor reported it."""

    message: str
    code: str | None = None
    source: str | None = None

    def describe(self) -> str:
        origin = " ".join(x for x in (self.source, self.code) if x)
        return f"{origin}: {self.message}" if origin else self.message


def fix_messages(text: str, region: Region, message: str, language: str, path: str) -> list[dict]:
    """The file around the problem, the problem, and a request for the corrected block in a code
    block: the form small models follow best (asked for a few marked lines, they rewrite more and
    mark less). The answer is reduced to minimal edits afterwards."""
    ctx_start = line_start_offset(text, max(region.start_line - CONTEXT_LINES, 0))
    ctx_end_line = line_start_offset(text, region.end_line + CONTEXT_LINES + 1)
    ctx_end = len(text) if ctx_end_line <= region.end else ctx_end_line
    first = text[region.start : region.end].split("\n")[0].strip()
    what = (f"the corrected `{first.rstrip(':').strip()}` (lines {region.start_line + 1}-{region.end_line + 1}, "
            "the whole block)" if _BLOCK_HEAD.match(first) else f"the corrected lines {region.start_line + 1}-"
            f"{region.end_line + 1}")
    head = f"```{language}\n{text[ctx_start:ctx_end]}\n```\n{path}, line {region.problem_line + 1}: {message}\n\n"
    user = head + f"Fix this. Reply with {what} in a code block."
    if language != "python":
        # The statement shown again, last: asked only for "lines N-M" after 80 lines of context, the
        # 0.5B wrote the context out from its top and never reached them (TypeScript, 12 of 12).
        user = (head + f"The problem is in lines {region.start_line + 1}-{region.end_line + 1}:\n```{language}\n"
                f"{text[region.start:region.end]}\n```\nFix it. Reply with only these lines, corrected, in a code block.")
    return [{"role": "system", "content": FIX_INSTRUCTIONS}, {"role": "user", "content": user}]


_BLOCK_HEAD = re.compile(r"^(async\s+def|def|class)\s")


def fix_region(text: str, first_line: int, last_line: int, language: str = "python") -> Region:
    """Python: the function or class holding the diagnostic's lines (the innermost one); elsewhere
    just those lines. A language tree-sitter parses: the statement holding them (statement_region.py)."""
    if language != "python":
        start, end = statement_lines(text, language, first_line, last_line) or (first_line, last_line)
        lo, hi = line_span(text, start, end)
        return Region(start, end, lo, hi, problem_line=first_line, problem_end_line=last_line)
    start, end, line = first_line, last_line, first_line
    for _ in range(50):  # walk out through the enclosing blocks (if/for/with ...) to a def or class
        outer, outer_end = enclosing_block(text, line)  # (the line's own block when it is a def line)
        head = text[slice(*line_span(text, outer, outer))].strip()
        if _BLOCK_HEAD.match(head) and outer <= first_line and outer_end >= last_line:
            start, end = outer, outer_end
            break
        if outer >= line:
            break  # nothing encloses it: just the diagnostic's lines
        line = outer
    start, end = min(start, first_line), max(end, last_line)
    lo, hi = line_span(text, start, end)
    return Region(start, end, lo, hi, problem_line=first_line, problem_end_line=last_line)


def explain_messages(text: str, region: Region, message: str, language: str, path: str) -> list[dict]:
    code = text[region.start : region.end]
    user = f"In {path} ({language}), lines {region.start_line + 1}-{region.end_line + 1}:\n```\n{code}\n```\nDiagnostic: {message}\nWhat is wrong and how do I fix it?"
    return [{"role": "system", "content": EXPLAIN_INSTRUCTIONS}, {"role": "user", "content": user}]


# Who made a fix (returned to the client in the resolved action's data as `madeBy`): one of the
# repairs the diagnostic spells out, without the model, or the model.
MADE_BY_IMPORT, MADE_BY_TOKEN, MADE_BY_MODEL, MADE_BY_SIMILAR_NAME = "rule:import", "rule:token", "model", "rule:similar-name"


async def compute_fix(
    provider: Provider, text: str, region: Region, problem: Problem, language: str, path: str, encoding: str
) -> list[dict[str, Any]]:
    """The fix as minimal TextEdits (LSP JSON), [] when the model proposes no change (see
    `compute_fix_made_by`)."""
    edits, _ = await compute_fix_made_by(provider, text, region, problem, language, path, encoding)
    return edits


async def compute_fix_made_by(
    provider: Provider, text: str, region: Region, problem: Problem, language: str, path: str, encoding: str
) -> tuple[list[dict[str, Any]], str]:
    """(the fix as minimal TextEdits (LSP JSON), who made it: MADE_BY_*); no edits when the model
    proposes no change.

    What the diagnostic spells out needs no model: a missing import ("Add import"), a token the
    parser says is missing. Otherwise the model's fix; one that does not parse or leaves the
    diagnostic in place is sent back once with the reason. If the second answer fails too, a
    similar name for an undefined one is the last resort; then ProviderError says why and nothing
    is offered. Every candidate passes the same checks (`why_not`) before it is offered."""

    def edits_to(new_text: str) -> list[dict[str, Any]]:
        return to_lsp_edits(text, 0, minimal_edits(text, new_text), encoding)

    with_import = []
    line = missing_imports(text, undefined_name(problem.message) or "", language)
    if line:
        at = import_insertion_offset(text)
        with_import.append(text[:at] + line + "\n" + text[at:])
    repaired = _first_acceptable(with_import, text, problem, language, path)
    if repaired is not None:
        return edits_to(repaired), MADE_BY_IMPORT
    repaired = _first_acceptable(missing_token(text, region.problem_line, problem.message, language), text, problem,
                                 language, path)
    if repaired is not None:
        return edits_to(repaired), MADE_BY_TOKEN
    old_region = text[region.start : region.end]
    messages = fix_messages(text, region, problem.describe(), language, path)
    reason = ""
    for attempt in range(2):
        answer = await collect(provider, messages, prediction=old_region, deterministic=True)  # mostly unchanged text
        rewritten = clean_rewrite(answer, old_region)
        if language == "python":
            target = region if _starts_alike(rewritten, old_region) else region.narrow(text)  # just the faulty lines?
            new_text = apply_answer(text, target, clean_rewrite(answer, text[target.start : target.end]))
        else:
            new_text = apply_answer(text, region, reindent(rewritten, old_region))
        if new_text == text or (language != "python" and same_program(text, new_text, language)):
            return [], MADE_BY_MODEL  # the same code again (or only its layout): nothing to change
        reason = why_not(text, new_text, problem, language, path)
        if not reason:
            return edits_to(new_text), MADE_BY_MODEL
        messages = [*messages, {"role": "assistant", "content": answer},
                    {"role": "user", "content": f"That does not fix it: {reason}. Reply with ONLY the corrected lines."}]
    renamed = similar_name(text, region.problem_line, region.problem_end_line, undefined_name(problem.message) or "",
                           language)
    repaired = _first_acceptable(renamed, text, problem, language, path)
    if repaired is not None:
        return edits_to(repaired), MADE_BY_SIMILAR_NAME
    raise ProviderError(f"the model's fix did not work ({reason}); nothing was changed")


MAX_REPAIRS = 3  # candidates linted at most (each is a linter run)


def _first_acceptable(candidates: Iterable[str], text: str, problem: Problem, language: str, path: str) -> str | None:
    for new_text in islice(candidates, MAX_REPAIRS):
        if not why_not(text, new_text, problem, language, path):
            return new_text
    return None


def _starts_alike(rewritten: str, region_text: str) -> bool:
    """Does the answer start where the region does (its first code line, ignoring imports it
    adds)? If not, the model answered with only the lines at fault."""
    head = region_text.strip().split("\n")[0].strip()
    lines = [ln for ln in rewritten.split("\n") if ln.strip() and not _IMPORT.match(ln)]
    if not lines or not _BLOCK_HEAD.match(head):
        return True
    first = lines[0].strip()
    return first.split("(")[0].split(":")[0] == head.split("(")[0].split(":")[0] or any(
        ln.strip().split("(")[0] == head.split("(")[0] for ln in lines[:40])


def why_not(text: str, new_text: str, problem: Problem, language: str, path: str) -> str:
    """Why a fixed file is not acceptable ("" when it is)."""
    broken = syntax_error(new_text, language)
    # Python: the fixed file must compile. Other languages (tree-sitter): the fix must not break a
    # file that parsed; one half-typed elsewhere is not the fix's fault.
    if broken and (language == "python" or not syntax_error(text, language)):
        return f"the result does not parse ({broken})"
    if language != "python":
        first, last = changed_rows(text, new_text)  # 1-based, in new_text
        changed = "\n".join(new_text.split("\n")[first - 1 : last])
        name = made_up_name(text, changed, language)
        if name:
            return f"it uses `{name}`, which this file never mentions"
        old_last = last + text.count("\n") - new_text.count("\n")
        name = dropped_name(text, new_text, first, max(old_last, first - 1), language)
        if name:
            return f"it takes `{name}` out, but the rest of the file still uses it"
        if len(problem.message) >= 12 and problem.message in changed and problem.message not in text:
            return "it writes the diagnostic's message into the code"
    # ruff's own diagnostic is checked by rule; any linter's fix must not bring new findings.
    fixing = (problem.code, problem.message) if problem.source == "ruff" and problem.code else None
    linted = lint_problem(text, new_text, path, language, fixing)
    return f"the linter says {linted}" if linted else ""


_IMPORT = re.compile(r"^(import\s+\w|from\s+[\w.]+\s+import\s)")


def apply_answer(text: str, region: Region, rewritten: str) -> str:
    """The document with the region replaced. Import lines the answer puts before the region's code
    (and that the region did not have) go to the file's import block instead; lines around the
    region that the answer repeats are dropped (see trim_context_echo)."""
    old_region = text[region.start : region.end]
    lines = rewritten.split("\n")
    imports = []
    while lines and _IMPORT.match(lines[0]) and lines[0] not in old_region:
        imports.append(lines.pop(0))
    body = trim_context_echo("\n".join(lines), text[: region.start], text[region.end :]) if lines else ""
    if not imports or not body:
        return text[: region.start] + (body if lines else rewritten) + text[region.end :]
    new = text[: region.start] + body + text[region.end :]
    at = import_insertion_offset(new)
    missing = [ln for ln in imports if ln not in new.split("\n")]
    return new[:at] + "".join(ln + "\n" for ln in missing) + new[at:]


def import_insertion_offset(text: str) -> int:
    """Where a new import line goes: after the last import of the file's leading import block,
    else after its module docstring, else at the top."""
    lines = text.split("\n")
    ends = [0]
    for line in lines:
        ends.append(ends[-1] + len(line) + 1)
    i, n = 0, len(lines)
    while i < n and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
        i += 1
    after_doc = 0
    if i < n and lines[i].lstrip().startswith(('"""', "\'\'\'")):
        quote = lines[i].lstrip()[:3]
        j = i if lines[i].count(quote) >= 2 else next((k for k in range(i + 1, n) if quote in lines[k]), n - 1)
        i = j + 1
        after_doc = ends[i]
    last_import = None
    while i < n:
        stripped = lines[i].strip()
        if _IMPORT.match(lines[i]):
            last_import = ends[i + 1]
        elif stripped and not stripped.startswith("#"):
            break
        i += 1
    return min(last_import if last_import is not None else after_doc, len(text))


__all__ = ["Problem", "ProviderError", "Region", "compute_fix", "compute_fix_made_by", "explain_messages",
           "fix_region", "region_for"]
