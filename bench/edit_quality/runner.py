"""One edit-quality run: one llama.cpp server, raw and Kestrel side by side on the same tasks."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

from bench.quality.runner import N_CTX, kestrel_source, machine, resolve

from . import eslint_set
from .data import EditTask
from .lsp import EditSession
from .raw import RawChatFix
from .scoring import EditScorer

SYSTEMS = ("raw", "kestrel")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


async def _answer(task: EditTask, system: str, rawc: RawChatFix, kest: EditSession) -> Any:
    if system == "raw":
        return await rawc.fix(task)
    if task.family == "quick-fix":
        return await kest.quick_fix(task)
    return await kest.inline_edit(task)


async def _one(task: EditTask, system: str, rawc: RawChatFix, kest: EditSession, scorer: EditScorer) -> dict[str, Any]:
    ans = await _answer(task, system, rawc, kest)
    v = await scorer.verdict(task, ans.document)
    rec = {"offered": ans.offered, "fixed": v.fixed, "harm": v.harm, "outside": v.outside, "broke": v.broke,
           "new_findings": v.new_findings, "lines_changed": v.lines_changed, "result": v.result,
           "made_by": ans.made_by if ans.offered else "", "latency_ms": round(ans.latency_ms, 1)}
    if ans.error:
        rec["error"] = ans.error[:300]
    if ans.document != task.broken:
        rec["document"] = ans.document
    return rec


async def run(tasks: list[EditTask], *, model_path: str | None, logs: Path, counts: dict[str, Any],
              label: str, kestrel_src: str | None = None, progress: Callable[[str], None] = _say,
              speculative: bool = True, systems: tuple[str, ...] = SYSTEMS) -> dict[str, Any]:
    """Every task through raw and Kestrel (which goes first alternates), scored by its tests. `systems`:
    one of them alone for a study (a run of one system has no margins)."""
    from kestrel.local.runtime import LocalModelServer

    from .summary import summarize

    model = resolve(model_path)
    source = kestrel_source(kestrel_src)  # before the run: the code the server process loads
    server = LocalModelServer(model, n_ctx=N_CTX, require_key=False,  # raw clients and other commits' Kestrel connect keyless
                              speculative=speculative)
    t_start = time.perf_counter()
    progress(f"edit quality: starting llama.cpp with {model.path} ...")
    await server.start()
    rawc = RawChatFix(server.base_url, model.name)
    kest = EditSession(server.base_url, model.name, logs / "edit-quality-server.log", None, kestrel_src)
    scorer = EditScorer()
    records: list[dict[str, Any]] = []
    try:
        await kest.start()
        # Warm-up (not measured): the first request of each path pays one-time costs.
        for family in ("quick-fix", "inline-edit"):
            warm = next((t for t in tasks if t.family == family), None)
            if warm is not None:
                for system in systems:
                    await _answer(warm, system, rawc, kest)
        total = len(tasks)
        t_loop = time.perf_counter()
        for k, task in enumerate(tasks):
            order = systems if k % 2 == 0 else tuple(reversed(systems))  # neither goes first every time
            rec: dict[str, Any] = {"set": task.set, "family": task.family, "kind": task.kind, "task_id": task.task_id,
                                   "note": task.note, "first": order[0],
                                   "problem": task.diagnostic["message"] if task.diagnostic else (task.failing or task.instruction)}
            for system in order:
                rec[system] = await _one(task, system, rawc, kest, scorer)
            records.append(rec)
            done = k + 1
            if done % 5 == 0 or done == total:
                el = time.perf_counter() - t_loop
                progress(f"edit quality: {done}/{total} ({task.set} {task.family}) {el:.0f}s elapsed, "
                         f"~{el / done * (total - done):.0f}s left")
    finally:
        await kest.stop()
        await rawc.close()
        await server.stop()
        eslint_set.close()
    doc: dict[str, Any] = {
        "model": model.name, "model_path": str(model.path),
        "config": {"label": label, "full": label == "full", "sizes": _sizes(tasks), "speculative": speculative,
                   "systems": list(systems)},
        "counts": counts, "kestrel": source, "machine": machine(),
        "wall_seconds": round(time.perf_counter() - t_start, 1), "records": records,
    }
    if tuple(systems) == SYSTEMS:
        doc.update(summarize(records))
    return doc


def _sizes(tasks: list[EditTask]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for t in tasks:
        out.setdefault(t.set, {}).setdefault(t.family, 0)
        out[t.set][t.family] += 1
    return out
