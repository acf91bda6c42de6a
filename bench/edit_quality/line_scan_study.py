"""Every line-scan candidate on the real-bug sets, with its departure margin and whether applying it
fixes the task's tests: the data behind `confidence.MIN_MARGIN` (docs/design-notes.md#line_scan).

    python -m bench.edit_quality.line_scan_study [--kestrel-src DIR] [--model-path GGUF] [--held-out] --out FILE
    python -m bench.edit_quality.line_scan_study --report FILE

Each task's function is re-read as the server does (every candidate kept, none gated), each
candidate applied alone and scored by the task's tests; the report says what each margin
threshold would offer (the first candidate in the scan's own order that clears it).

`--held-out` studies the HumanEvalFix bugs outside the seeded sample instead (104 of 164): neither the
first study nor the 1.5B eval rows saw them, so a threshold chosen on the study's tasks is checked there."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator


def real_bug_tasks() -> list[Any]:
    """The inline-edit tasks of both real-bug sets, as the eval samples them (the studies' tasks)."""
    from . import humanevalfix, quixbugs

    qb, _ = quixbugs.all_tasks()
    hef, _ = humanevalfix.all_tasks()
    return qb["inline-edit"] + humanevalfix.sample(hef["inline-edit"], humanevalfix.DEFAULT_SAMPLE)


def held_out_tasks() -> list[Any]:
    """The HumanEvalFix inline-edit tasks the seeded sample leaves out: unseen by the study's tasks."""
    from . import humanevalfix

    hef, _ = humanevalfix.all_tasks()
    seen = {t.task_id for t in humanevalfix.sample(hef["inline-edit"], humanevalfix.DEFAULT_SAMPLE)}
    return [t for t in hef["inline-edit"] if t.task_id not in seen]


def reordered(old: str, new: str) -> bool:
    """`new` has the tokens of `old` in another order (swapped operands or arguments). The scan offers
    such a line only when it is within the slip's two tokens (`a, b` for `b, a`); counting every
    reordering as a slip was tried and not adopted (docs/design-notes.md#line_scan)."""
    from kestrel.edits.line_scan import _TOKEN

    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    return a != b and sorted(a) == sorted(b)


@asynccontextmanager
async def local_fim(model_path: str | None) -> AsyncIterator[tuple[Any, Any, Any]]:
    """(model, its llama.cpp server, a `fim` provider on it) for a study; the server stops after."""
    from kestrel.config import Settings
    from kestrel.local.runtime import LocalModelServer
    from kestrel.providers.fim import FimProvider

    from bench.quality.runner import N_CTX, resolve

    model = resolve(model_path)
    server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
    await server.start()
    try:
        yield model, server, FimProvider(Settings(provider="fim", base_url=server.base_url, model=model.name,
                                                  api_key="local"))
    finally:
        await server.stop()


async def _study(out: Path, model_path: str | None, held_out: bool, note: bool = False, judge: bool = False,
                 structural: bool = False) -> None:
    from kestrel.context.window import line_span
    from kestrel.edits import confidence, line_scan

    from . import judge as second_reading
    from kestrel.edits.inline_edit import Target, rewrite_problem

    from .scoring import EditScorer

    tasks = held_out_tasks() if held_out else real_bug_tasks()
    scorer = EditScorer()
    rows: list[dict[str, Any]] = []
    async with local_fim(model_path) as (model, _, provider):
        for k, task in enumerate(tasks):
            text = task.broken
            start, end = line_span(text, *task.target)
            target = Target(start, end, text[start:end])
            path = f"{task.entry_point}.py"
            t0 = time.perf_counter()
            found = await line_scan.candidates(text, start, end, provider, "python", path,
                                               lambda region: not rewrite_problem(text, target, region, "python", path),
                                               note=task.instruction if note else "", structural=structural)
            seconds = time.perf_counter() - t0
            for rank, c in enumerate(found):
                v = await scorer.verdict(task, text[:start] + c.apply(target.text) + text[end:])
                row = {"set": task.set, "task": task.task_id, "rank": rank, "line": c.line,
                       "old": target.text.split("\n")[c.line], "new": c.new_line, "tokens": c.tokens_changed,
                       "margin": c.margin, "fixed": v.fixed, "harm": v.harm,
                       "reordered": reordered(target.text.split("\n")[c.line], c.new_line), "kind": c.kind}
                if judge and c.margin is not None and c.margin >= confidence.MIN_MARGIN:
                    t1 = time.perf_counter()
                    row["judge"] = await second_reading.preference(provider, target.text, c.line, c.new_line,
                                                                   "python", task.instruction)
                    row["judge_s"] = round(time.perf_counter() - t1, 2)
                rows.append(row)
            rows.append({"set": task.set, "task": task.task_id, "rank": -1, "candidates": len(found),
                         "seconds": round(seconds, 1)})
            print(f"{k + 1}/{len(tasks)} {task.task_id}: margins {[c.margin and round(c.margin, 2) for c in found]}",
                  file=sys.stderr, flush=True)
    out.write_text(json.dumps({"model": model.name, "held_out": held_out, "note": note, "judge": judge,
                               "structural": structural, "rows": rows}, indent=0) + "\n")


def _clearing(candidates: list[dict[str, Any]], threshold: float | None) -> list[dict[str, Any]]:
    return [c for c in candidates if threshold is None or (c["margin"] is not None and c["margin"] >= threshold)]


def report(doc: dict[str, Any]) -> str:
    found: dict[str, dict[str, list[dict[str, Any]]]] = {}  # set -> task -> its candidates, the scan's order
    for r in sorted(doc["rows"], key=lambda r: r["rank"]):
        if r["rank"] >= 0:
            found.setdefault(r["set"], {}).setdefault(r["task"], []).append(r)

    lines = [f"{doc['model']}: the first candidate (the scan's order) whose margin clears the threshold", "",
             "| set | threshold (nats) | offered | fixed | wrong |", "|---|---|---|---|---|"]
    if any("reordered" in c for per_set in found.values() for cs in per_set.values() for c in cs):
        lines[2:2] = [_reorder_table(found), ""]
    for threshold in (None, 1.0, 2.0, math.log(10), 3.0, 4.0, 5.0):
        for name in sorted(found):
            firsts = [ok[0] for ok in (_clearing(c, threshold) for c in found[name].values()) if ok]
            offered, fixed = len(firsts), sum(bool(c["fixed"]) for c in firsts)
            label = "none" if threshold is None else f"{threshold:.2f}"
            lines.append(f"| {name} | {label} | {offered} | {fixed} | {offered - fixed} |")
    lines += ["", "At ln 10, by how many lines clear it (one: the scan is sure where the slip is; several: it is not):",
              "", "| set | lines clearing | offered | fixed | wrong |", "|---|---|---|---|---|"]
    for name in sorted(found):
        split: dict[str, list[int]] = {"one": [0, 0], "several": [0, 0]}
        for ok in (_clearing(c, math.log(10)) for c in found[name].values()):
            if ok:
                split["one" if len(ok) == 1 else "several"][0 if ok[0]["fixed"] else 1] += 1
        for key, (fixed, wrong) in split.items():
            lines.append(f"| {name} | {key} | {fixed + wrong} | {fixed} | {wrong} |")
    if doc.get("judge"):
        lines += ["", _judge_table(found)]
    if doc.get("structural"):
        lines += ["", _structural_table(found)]
    return "\n".join(lines)


def _auc(right: list[float], wrong: list[float]) -> float | None:
    """P(a right candidate's score > a wrong one's), ties counting half."""
    if not right or not wrong:
        return None
    return sum((r > w) + 0.5 * (r == w) for r in right for w in wrong) / (len(right) * len(wrong))


def _judge_table(found: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """At ln 10, what the second reading (bench/edit_quality/judge.py) would change: the first candidate is
    offered only when the judge prefers it by more than τ (else the task goes to the rewrite), and
    the AUC of its score against the tests among those first candidates."""
    rows = ["The second reading at ln 10: the first candidate offered only when its judge score > τ (else the rewrite):",
            "", "| set | τ | offered | fixed | wrong | sent on to the rewrite (fixed / wrong as slips) |", "|---|---|---|---|---|---|"]
    aucs = []
    for name in sorted(found):
        firsts = [ok[0] for ok in (_clearing(c, math.log(10)) for c in found[name].values()) if ok]
        firsts = [c for c in firsts if c.get("judge") is not None]
        right = [c["judge"] for c in firsts if c["fixed"]]
        wrong = [c["judge"] for c in firsts if not c["fixed"]]
        auc = _auc(right, wrong)
        aucs.append(f"{name}: AUC {auc:.2f} ({len(right)} right, {len(wrong)} wrong)" if auc is not None else f"{name}: -")
        for tau in (None, -1.0, -0.5, 0.0, 0.5, 1.0):
            kept = [c for c in firsts if tau is None or c["judge"] > tau]
            gone = [c for c in firsts if c not in kept]
            fixed = sum(bool(c["fixed"]) for c in kept)
            gone_fixed = sum(bool(c["fixed"]) for c in gone)
            label = "none" if tau is None else f"{tau:+.1f}"
            rows.append(f"| {name} | {label} | {len(kept)} | {fixed} | {len(kept) - fixed} | "
                        f"{gone_fixed} / {len(gone) - gone_fixed} |")
    return "\n".join(rows + ["", "Judge scores against the tests (first candidates at ln 10): " + "; ".join(aucs)])


def _structural_table(found: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """At ln 10, the scan with and without the lines it reads as left out or missing (`kind` delete /
    insert, line_scan._structural): what each offers, and the tasks whose first offer they change (in
    the server those tasks go to the rewrite without them: the tasks to re-run through the eval)."""
    rows = ["At ln 10, with and without the structural candidates (a line left out, a statement inserted):", "",
            "| set | candidates | offered | fixed | wrong | offers that change: delete fixed / wrong, insert fixed / wrong |",
            "|---|---|---|---|---|---|"]
    changed_tasks: list[str] = []
    for name in sorted(found):
        with_, without = [], []
        for task, cs in found[name].items():
            ok = _clearing(cs, math.log(10))
            first = ok[0] if ok else None
            plain = next((c for c in ok if c.get("kind", "slip") == "slip"), None)
            with_.append(first)
            without.append(plain)
            if first is not plain:
                changed_tasks.append(task)
        new = [a for a, b in zip(with_, without) if a is not b and a is not None]
        cell = ", ".join(f"{kind} {sum(bool(c['fixed']) for c in new if c['kind'] == kind)} / "
                         f"{sum(not c['fixed'] for c in new if c['kind'] == kind)}" for kind in ("delete", "insert"))
        for label, offers, last in (("with", with_, cell), ("without", without, "")):
            made = [c for c in offers if c is not None]
            fixed = sum(bool(c["fixed"]) for c in made)
            rows.append(f"| {name} | {label} | {len(made)} | {fixed} | {len(made) - fixed} | {last} |")
    return "\n".join(rows + ["", "Tasks whose first offer changes: " + (" ".join(changed_tasks) or "none")])


def _reorder_table(found: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """At ln 10, the scan with and without the candidates that only reorder a line's tokens (swapped
    operands or arguments): what each offers, and the tasks where the first offer differs."""
    rows = ["At ln 10, with and without the slips that only reorder a line's tokens:", "",
            "| set | slips | offered | fixed | wrong | tasks whose offer differs: fixed / wrong with swaps, fixed / wrong without |",
            "|---|---|---|---|---|---|"]

    def tally(offers: list[dict[str, Any] | None]) -> tuple[int, int]:
        """(fixed, wrong) among the offers made (None: nothing offered)."""
        fixed = sum(bool(c["fixed"]) for c in offers if c is not None)
        return fixed, sum(c is not None for c in offers) - fixed

    for name in sorted(found):
        with_, without = [], []  # each task's first offer, with and without the reordered candidates
        for cs in found[name].values():
            ok = _clearing(cs, math.log(10))
            with_.append(ok[0] if ok else None)
            without.append(next((c for c in ok if not c.get("reordered")), None))
        differs = [k for k, (a, b) in enumerate(zip(with_, without)) if a is not b]
        cell = " / ".join(str(n) for offers in (with_, without) for n in tally([offers[k] for k in differs]))
        for label, offers, last in (("with", with_, cell), ("without", without, "")):
            fixed, wrong = tally(offers)
            rows.append(f"| {name} | {label} swaps | {fixed + wrong} | {fixed} | {wrong} | {last} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.edit_quality.line_scan_study", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--model-path", default=None)
    p.add_argument("--out", default="bench/out/line-scan-study.json")
    p.add_argument("--held-out", action="store_true", help="the HumanEvalFix bugs outside the seeded sample")
    p.add_argument("--note", action="store_true", help="the scan sees the task's instruction (the bug report and the "
                   "pasted failure) as a comment above the function")
    p.add_argument("--judge", action="store_true", help="ask the chat model which line is right for every candidate "
                   "that clears the margin (bench/edit_quality/judge.py)")
    p.add_argument("--structural", action="store_true", help="the scan also reads a line left out and a statement "
                   "missing before a line (line_scan._structural)")
    p.add_argument("--report", default=None, help="only print the report of this JSON")
    args = p.parse_args(argv)
    if args.report:
        print(report(json.loads(Path(args.report).read_text())))
        return 0
    if args.kestrel_src:
        sys.path.insert(0, args.kestrel_src)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(_study(out, args.model_path, args.held_out, args.note, args.judge, args.structural))
    print(report(json.loads(out.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
