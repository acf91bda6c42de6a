"""Every repair rewrite on the real-bug sets, with its margin (`rewrite_margin`: the line scan's departure
margin, `kestrel.edits.confidence`, at each change the rewrite makes) and whether it fixes the task's
tests: the data behind *not* gating a repair's rewrite by it (docs/design-notes.md, line_scan.py).

    python -m bench.edit_quality.rewrite_study [--kestrel-src DIR] [--model-path GGUF] --out FILE
    python -m bench.edit_quality.rewrite_study --report FILE [--line-scan FILE]

Each task's function is rewritten as the server's rewrite path does (the same messages, greedy, the
answer tidied as the server tidies it; no retry), with the top log probabilities asked for (through
the openai SDK: the server never asks a chat answer for them). The
report says what each threshold would offer; given the line-scan study of the same model, only the
tasks the line scan leaves to the rewrite are counted (those are the ones the server rewrites)."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import Any


def rewrite_margin(original: str, answer: str, code: str, tokens: list[tuple[str, dict[str, float]]]) -> float | None:
    """The least margin among the changes `code` (the region as the model wrote it, found verbatim in
    `answer`, the streamed text of `tokens`) makes to `original`: one per changed line run, taken
    where it first parts from the code as written. Spacing-only changes are not weighed. None: no
    log probabilities, the tokens do not spell the answer, or nothing changed."""
    from kestrel.edits import confidence

    if not tokens or "".join(t for t, _ in tokens) != answer:
        return None
    base = answer.find(code.rstrip("\n"))
    if base < 0:
        return None
    starts, at = [], 0
    for tok, _ in tokens:
        starts.append(at)
        at += len(tok)
    margins: list[float] = []
    last_line = -1
    opcodes = difflib.SequenceMatcher(a=original, b=code, autojunk=False).get_opcodes()
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal" or not (_BLANKS.sub("", original[i1:i2]).strip() or _BLANKS.sub("", code[j1:j2]).strip()):
            continue
        line = code.count("\n", 0, j1)
        if line == last_line:
            continue  # the same change, further along its line: weighed where it began
        last_line = line
        offset = base + j1
        k = max(0, _token_at(starts, offset))
        before = offset - starts[k]  # the part of the token that still follows the code as written
        equal_run = opcodes[n - 1][2] - opcodes[n - 1][1] if n and opcodes[n - 1][0] == "equal" else 0
        if before > equal_run:
            continue
        written = _BLANKS.sub("", original[i1 - before :])
        m = confidence.margin(tokens[k][0], tokens[k][1], lambda t: _starts(written, t))
        if m is not None:
            margins.append(m)
    return min(margins) if margins else None


def _token_at(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts)
    while lo < hi:  # the last token starting at or before `offset`
        mid = (lo + hi) // 2
        if starts[mid] <= offset:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def _starts(written: str, token: str) -> bool:
    bare = _BLANKS.sub("", token)
    return written.startswith(bare)


_BLANKS = re.compile(r"[ \t]+")


async def _chat_with_logprobs(client, model: str, messages: list[dict]) -> tuple[str, list]:
    """The greedy answer streamed with each token's top alternatives ({text: logprob})."""
    from kestrel.edits import confidence

    tokens: list[tuple[str, dict[str, float]]] = []
    answer = ""
    stream = await client.chat.completions.create(model=model, messages=messages, temperature=0.0, stream=True,
                                                  logprobs=True, top_logprobs=confidence.TOP_LOGPROBS)
    async for chunk in stream:
        for choice in chunk.choices:
            answer += choice.delta.content or ""
            for entry in (choice.logprobs.content or []) if choice.logprobs else []:
                tokens.append((entry.token, {t.token: t.logprob for t in entry.top_logprobs}))
    return answer, tokens


async def _study(out: Path, model_path: str | None, only: set[str] | None) -> None:
    from openai import AsyncOpenAI

    from kestrel.context.window import line_span
    from kestrel.edits.inline_edit import EditJob, Target, _region, edit_messages, region_rewrite, rewrite_problem

    from .line_scan_study import local_fim, real_bug_tasks
    from .scoring import EditScorer

    tasks = [t for t in real_bug_tasks() if only is None or t.task_id in only]
    scorer = EditScorer()
    rows: list[dict[str, Any]] = []
    async with local_fim(model_path) as (model, server, provider):
        client = AsyncOpenAI(base_url=server.base_url, api_key="local")
        for k, task in enumerate(tasks):
            text = task.broken
            start, end = line_span(text, *task.target)
            target = Target(start, end, text[start:end])
            path = f"{task.entry_point}.py"
            job = EditJob("study", text, 1, target, task.instruction, "python", path, provider)
            messages = edit_messages(text, target, task.instruction, "python", path)
            t0 = time.perf_counter()
            answer, tokens = await _chat_with_logprobs(client, model.name, messages)
            seconds = time.perf_counter() - t0
            written = region_rewrite(text, target, answer)
            region = _region(job, answer)
            problem = rewrite_problem(text, target, region, "python", path)
            weighed = rewrite_margin(target.text, answer, written, tokens)
            row = {"set": task.set, "task": task.task_id, "seconds": round(seconds, 1), "margin": weighed,
                   "tokens": len(tokens), "unchanged": region == target.text, "problem": problem,
                   "fixed": None, "harm": None}
            if not problem and region != target.text:
                v = await scorer.verdict(task, text[:start] + region + text[end:])
                row.update(fixed=v.fixed, harm=v.harm)
            rows.append(row)
            print(f"{k + 1}/{len(tasks)} {task.task_id}: margin {weighed and round(weighed, 2)} fixed {row['fixed']}"
                  f" {seconds:.1f}s", file=sys.stderr, flush=True)
    out.write_text(json.dumps({"model": model.name, "rows": rows}, indent=0) + "\n")


def _slipped(line_scan: dict[str, Any] | None, threshold: float) -> set[str]:
    """Tasks where the line scan offers a slip (so the server never rewrites them)."""
    if not line_scan:
        return set()
    return {r["task"] for r in line_scan["rows"] if r["rank"] >= 0 and r["margin"] is not None
            and r["margin"] >= threshold}


def report(doc: dict[str, Any], line_scan: dict[str, Any] | None = None) -> str:
    from kestrel.edits.confidence import MIN_MARGIN

    skip = _slipped(line_scan, MIN_MARGIN)
    rows = [r for r in doc["rows"] if r["task"] not in skip]
    scope = "tasks the line scan leaves to the rewrite" if line_scan else "every task"
    lines = [f"{doc['model']}: repair rewrites offered at each threshold ({scope}); a rewrite without log "
             "probabilities counts as offered", "",
             "| set | threshold (nats) | rewrites changing code | offered | fixed | wrong | harm |",
             "|---|---|---|---|---|---|---|"]
    for threshold in (None, 1.0, 2.0, math.log(10), 3.0, 4.0, 5.0):
        for name in sorted({r["set"] for r in rows}):
            changed = [r for r in rows if r["set"] == name and r["fixed"] is not None]
            ok = [r for r in changed if threshold is None or r["margin"] is None or r["margin"] >= threshold]
            fixed = sum(bool(r["fixed"]) for r in ok)
            harm = sum(bool(r["harm"]) for r in ok)
            label = "none" if threshold is None else f"{threshold:.2f}"
            lines.append(f"| {name} | {label} | {len(changed)} | {len(ok)} | {fixed} | {len(ok) - fixed} | {harm} |")
    lines += ["", "| set | task | margin | fixed |", "|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["set"], r["margin"] if r["margin"] is not None else 99)):
        if r["fixed"] is not None:
            m = "—" if r["margin"] is None else f"{r['margin']:.2f}"
            lines.append(f"| {r['set']} | {r['task']} | {m} | {'yes' if r['fixed'] else 'no'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.edit_quality.rewrite_study", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--model-path", default=None)
    p.add_argument("--out", default="bench/out/rewrite-study.json")
    p.add_argument("--report", default=None, help="only print the report of this JSON")
    p.add_argument("--line-scan", default=None, help="the line-scan study of the same model (line_scan_study)")
    p.add_argument("--tasks", default=None, help="a JSON list of task ids: study only these (listing each "
                   "answer's log probabilities costs llama-cpp-python ~0.1 s a token: a whole run takes an hour)")
    args = p.parse_args(argv)
    if args.kestrel_src:
        sys.path.insert(0, args.kestrel_src)
    line_scan = json.loads(Path(args.line_scan).read_text()) if args.line_scan else None
    if args.report:
        print(report(json.loads(Path(args.report).read_text()), line_scan))
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    only = set(json.loads(Path(args.tasks).read_text())) if args.tasks else None
    asyncio.run(_study(out, args.model_path, only))
    print(report(json.loads(out.read_text()), line_scan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
