"""Inline edits: rewrite a region from an instruction, streamed as a live preview.

The target is the selection, or with no selection the enclosing function/block. `rewrite` is the
policy: the model's rewrite streamed through the turn streamer (steerable like a chat answer),
checked, and sent back once with the reason when the check fails; when the instruction asks for a
repair, a slip found line by line first (`line_scan`), offered when the rewrite has no other change.
The feature turns it into minimal edits, rebased when the user typed elsewhere; if the target itself changed, the edit is refused."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..context.window import line_span
from ..providers.base import Provider, ProviderError
from ..providers.collect import collect
from . import confidence, line_scan
from .docstrings import keep_docstrings
from .echoed_tests import drop_echoed_statements
from .repair_checks import dropped_definitions, same_code
from .hoist import mend_imports, split_imports
from .partial_answer import applied_answer
from .diff import clean_rewrite, minimal_edits, to_lsp_edits, trim_context_echo
from .validate import lint_problem, syntax_error, without_new_unused_imports

if TYPE_CHECKING:
    from ..chat.engine import ChatEngine

EDIT_INSTRUCTIONS = (
    "You rewrite code. You get a file with a region between <region> and </region> and an instruction. "
    "Reply with ONLY the new content of the region (without the markers), keeping unchanged lines exactly "
    "as they are. No explanation."
)
_BLOCK_START = re.compile(r"^\s*(async\s+def|def|class|function|func|fn|pub\s+fn|public|private|protected|static|export|const\s+\w+\s*=\s*\(|if|for|while|with|try)\b")
CONTEXT_LINES = 30
STEER_NOTE = "\n(Reply with the whole new region again, from its first line, following this.)"
MADE_BY_LINE_SCAN, MADE_BY_REWRITE = "model:line-scan", "model:rewrite"  # how an edit was found


class EditRefused(Exception):
    """The edit cannot be applied safely; the message says why."""


@dataclass(frozen=True)
class Target:
    start: int  # offsets into the document text
    end: int
    text: str


def enclosing_block(text: str, line: int) -> tuple[int, int]:
    """(first, last) line of the function/block around `line`, by indentation."""
    lines = text.split("\n")
    if not lines:
        return 0, 0
    line = max(0, min(line, len(lines) - 1))

    def indent(s: str) -> int:
        return len(s) - len(s.lstrip())

    start = line
    while start > 0 and not (lines[start].strip() and _BLOCK_START.match(lines[start]) and
                             (start < line or indent(lines[start]) < indent(lines[line]) or not lines[line].strip())):
        start -= 1
    if not _BLOCK_START.match(lines[start] or ""):
        start = line
    base = indent(lines[start])
    end = start
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and indent(lines[i]) <= base and not lines[i].strip().startswith((")", "]", "}")):
            break
        if lines[i].strip():
            end = i
        elif lines[i].strip() == "" and i + 1 < len(lines) and lines[i + 1].strip() and indent(lines[i + 1]) <= base:
            break
    # include a closing brace line at the block's own indentation (C-like languages)
    if end + 1 < len(lines) and lines[end + 1].strip() in ("}", "};", "})", "end") and indent(lines[end + 1]) == base:
        end += 1
    return start, end


def target_for(text: str, start_line: int, start_col: int, end_line: int, end_col: int) -> Target:
    """The selection, expanded to whole lines; an empty selection means the enclosing block."""
    if (start_line, start_col) == (end_line, end_col):
        start_line, end_line = enclosing_block(text, start_line)
    elif end_col == 0 and end_line > start_line:
        end_line -= 1  # a selection ending at column 0 does not include that line
    start, end = line_span(text, start_line, end_line)
    return Target(start, end, text[start:end])


def edit_messages(text: str, target: Target, instruction: str, language: str, path: str) -> list[dict]:
    before = text[: target.start].split("\n")[-CONTEXT_LINES:]
    after = text[target.end :].split("\n")[: CONTEXT_LINES + 1]
    shown = "\n".join(before) + "<region>\n" + target.text + "\n</region>" + "\n".join(after)
    user = f"File {path} ({language}).\n```\n{shown}\n```\nInstruction: {instruction}"
    return [{"role": "system", "content": EDIT_INSTRUCTIONS}, {"role": "user", "content": user}]


def region_rewrite(text: str, target: Target, answer: str) -> str:
    """The region's new text from a model answer: its code, without the context it repeated."""
    rewritten = clean_rewrite(answer, target.text)
    body = rewritten.rstrip("\n")
    trimmed = trim_context_echo(body, text[: target.start], text[target.end :], target.text)
    return trimmed + rewritten[len(body) :]


def rewrite_problem(text: str, target: Target, rewritten: str, language: str, path: str) -> str:
    """Why the rewrite is not offered ("" when it is): it breaks a file that parsed, or the linter
    (when one runs here) finds something in it that the file did not have."""
    after = text[: target.start] + rewritten + text[target.end :]
    broken = syntax_error(after, language)
    if broken and not syntax_error(text, language):
        return f"it does not parse ({broken})"
    return lint_problem(text, after, path, language)


def rebase(current_doc: str, target: Target) -> int:
    """New offset of the target region in `current_doc`; raises EditRefused if it changed."""
    if current_doc[target.start : target.end] == target.text:
        return target.start
    # The user typed elsewhere: find the untouched region nearest its old place.
    candidates = []
    pos = current_doc.find(target.text)
    while pos >= 0:
        candidates.append(pos)
        pos = current_doc.find(target.text, pos + 1)
    if not candidates:
        raise EditRefused("the code being edited changed while the edit was streaming: nothing was applied")
    return min(candidates, key=lambda p: abs(p - target.start))


@dataclass(frozen=True)
class EditJob:
    """One inline edit: the document as it was when the edit started, the region, the instruction,
    and the model that answers."""

    edit_id: str
    text: str
    version: int
    target: Target
    instruction: str
    language: str
    path: str
    provider: Provider


@dataclass
class Rewrite:
    """The region's new text and how it was found (`made_by`), or `error`: why there is none."""

    text: str = ""
    made_by: str = ""
    steers: list[dict] = field(default_factory=list)  # the turn streamer's steer marks
    stopped: bool = False
    error: str | None = None
    imports: list[str] = field(default_factory=list)  # import lines for the file's head (hoist.py)


async def rewrite(job: EditJob, turns: ChatEngine, delta_method: str, live: Any) -> Rewrite:
    """The edit's rewrite. `live` is the open document (`source`, `version`) the user may type
    in meanwhile; the rewrite streams to the client as `delta_method` notifications."""
    slip = await _line_scan_slip(job)
    watch = _TargetWatch(live, job, lambda: turns.stop(job.edit_id))
    messages = edit_messages(job.text, job.target, job.instruction, job.language, job.path)
    # No resume for edits: a rewrite stitched across a dropped stream is not trustworthy code.
    result = await turns.turn(job.provider, job.edit_id, messages, delta_method=delta_method, on_delta=watch,
                              prediction=job.target.text, resume=False, steer_note=STEER_NOTE, deterministic=True)
    if watch.refused:
        return Rewrite(error=watch.refused)
    if result.get("error"):
        if slip is not None and not result.get("stopped"):
            return Rewrite(slip, MADE_BY_LINE_SCAN)
        return Rewrite(error=f"the edit failed: {result['error']}; the document was not changed")
    outcome = await _checked(job, messages, result)
    return outcome if slip is None else _second_reading(job, slip, outcome)


def _second_reading(job: EditJob, slip: str, outcome: Rewrite) -> Rewrite:
    """The scan's slip or the rewrite, asked after it: the rewrite when it makes a change of its own
    (it read the whole function with the user's words; the scan read one line at a time), the slip
    when the rewrite found nothing to change, was refused, or wrote the slip's program. Steered or
    stopped, the rewrite is what the user asked for. Why: docs/design-notes.md (line_scan.py)."""
    if outcome.steers or outcome.stopped:
        return outcome
    if outcome.error or outcome.text == job.target.text:
        return Rewrite(slip, MADE_BY_LINE_SCAN)
    if not outcome.imports and same_code(slip, outcome.text, job.language):
        return Rewrite(slip, MADE_BY_LINE_SCAN)
    return outcome


async def _line_scan_slip(job: EditJob) -> str | None:
    """A slip the model insists on, line by line (see line_scan), before a whole rewrite."""
    text, target, provider = job.text, job.target, job.provider
    language, path, instruction = job.language, job.path, job.instruction
    if not (line_scan.asks_for_a_repair(instruction) and line_scan.reads_lines(provider)):
        return None
    try:
        slips = await line_scan.candidates(
            text, target.start, target.end, provider, language, path,
            lambda region: not (same_code(target.text, region, language) or rewrite_problem(text, target, region, language, path)),
            confidence.MIN_MARGIN)
    except ProviderError:
        slips = []
    return slips[0].apply(target.text) if slips else None


class _TargetWatch:
    """Called with each streamed delta: when the user typed, is the target still there? If not,
    the edit is refused and its stream stopped."""

    def __init__(self, live: Any, job: EditJob, stop: Callable[[], Any]) -> None:
        self.live, self.target, self.stop = live, job.target, stop
        self.version = job.version
        self.refused: str | None = None

    def __call__(self, _delta: str) -> None:
        if self.live.version != self.version and self.refused is None:
            self.version = self.live.version
            try:
                rebase(self.live.source, self.target)
            except EditRefused as exc:
                self.refused = str(exc)
                self.stop()


def _region(job: EditJob, answer: str) -> str:
    """The region's new text from a model answer, as a person would tidy it before accepting: a part
    of the region answered alone merged into the rest (partial_answer.py), its import slips mended
    (hoist.py) and, for a repair, the docstrings it was given kept (docstrings.py) and the statements
    it wrote to try the fix left out (echoed_tests.py)."""
    text, target = job.text, job.target
    repair = line_scan.asks_for_a_repair(job.instruction)
    rewritten = applied_answer(target.text, region_rewrite(text, target, answer), job.instruction, job.language, repair)
    rewritten = mend_imports(text, target.start, target.end, rewritten, job.path, job.language)
    rewritten = _without_new_unused_imports(job, rewritten)
    if repair:
        rewritten = keep_docstrings(target.text, rewritten, job.language)
        rewritten = drop_echoed_statements(target.text, rewritten, job.language)
    return rewritten


def _without_new_unused_imports(job: EditJob, rewritten: str) -> str:
    """The region without the imports the model added and nothing uses (a person drops them before
    accepting; the linter would refuse the edit for them); as it is when the fix would reach outside."""
    text, target = job.text, job.target
    had = set(target.text.splitlines())
    if not any(line.lstrip().startswith(("import ", "from ")) and line not in had for line in rewritten.splitlines()):
        return rewritten  # no new import line: nothing to look at (and no linter run)
    head, tail = text[: target.start], text[target.end :]
    after = without_new_unused_imports(text, head + rewritten + tail, job.path, job.language)
    if not (after.startswith(head) and after.endswith(tail)) or len(after) < len(head) + len(tail):
        return rewritten
    return after[len(head) : len(after) - len(tail)]


def _lost(old: str, new: str, language: str, instruction: str, repair: bool) -> str:
    """Why a rewrite is not offered when it loses a definition the region had ("" when it keeps them
    all). An instruction that names the definition may remove or rename it; a repair never does (the
    1.5B on instructed edits: rewrites that answered one function of a two-function region lost the other)."""
    # Looser than partial_answer's merge (a removal word needed there): here the answer is a whole rewrite
    # that chose to leave the named definition out (moved, renamed, folded into another).
    named = set() if repair else set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", instruction))
    lost = [name for name in dropped_definitions(old, new, language) if name not in named]
    return f"it no longer defines {', '.join(lost)}, which the code had" if lost else ""


async def _checked(job: EditJob, messages: list[dict], result: dict) -> Rewrite:
    """The streamed answer if it passes the checks; else one more try, told why (not streamed:
    the preview keeps the first answer meanwhile)."""
    text, target, language, path = job.text, job.target, job.language, job.path
    # After an emulated steer the model answered the region again: that answer is the rewrite.
    restarted = any(st.get("mode") == "emulated" for st in result.get("steers", []))
    answer = result["lastSegment"] if restarted else result["text"]
    rewritten = _region(job, answer)
    repair = line_scan.asks_for_a_repair(job.instruction)
    problem = (rewrite_problem(text, target, rewritten, language, path)
               or _lost(target.text, rewritten, language, job.instruction, repair))
    unchanged = not problem and (rewritten == target.text or (repair and same_code(target.text, rewritten, language)))
    if unchanged and repair:
        # The model's best reading of a bug report finds nothing to change (or only the layout): said as
        # such. A sampled second reading is a guess (0.5B, 61 real bugs: two sampled readings offered 9 and
        # 13 edits, 1 fixed).
        return Rewrite(target.text, MADE_BY_REWRITE, result.get("steers", []), bool(result.get("stopped")))
    if unchanged:
        problem = "that is the region unchanged, and the instruction asks for a change"
    if problem and not result.get("stopped"):
        retry = [*messages, {"role": "assistant", "content": answer},
                 {"role": "user", "content": f"That is not right: {problem}. Reply with ONLY the corrected region."}]
        try:
            # The best answer changed nothing: the second one is sampled (another reading).
            answer = await collect(job.provider, retry, deterministic=not unchanged)
            rewritten = _region(job, answer)
        except ProviderError as exc:
            return Rewrite(error=f"the edit failed: {exc.message}; the document was not changed")
        problem = (rewrite_problem(text, target, rewritten, language, path)
                   or _lost(target.text, rewritten, language, job.instruction, repair))
        if rewritten == target.text:
            problem = ""  # still unchanged: the answer is "nothing to change", offered as such
    if problem:
        return Rewrite(error=f"the model's edit was not offered: {problem}; the document was not changed")
    region, imports = split_imports(rewritten, target.text, language)
    return Rewrite(region, MADE_BY_REWRITE, result.get("steers", []), bool(result.get("stopped")), imports=imports)


__all__ = ["EditJob", "EditRefused", "Rewrite", "Target", "clean_rewrite", "edit_messages", "enclosing_block",
           "minimal_edits", "rebase", "region_rewrite", "rewrite", "rewrite_problem", "target_for", "to_lsp_edits"]
