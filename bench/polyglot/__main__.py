"""Aider's polyglot benchmark, Python exercises (issue 29's edit measurement): each exercise's request
→ the answer applied → the exercise's tests; on failure a second try with the test output. pass@1,
pass@2, well-formed answers, apply failures and seconds per exercise, raw (Aider's whole-file format)
beside Kestrel's inline edit over the whole file, on one llama.cpp server, which goes first alternating.

    python -m bench.polyglot [--model-path GGUF] [--limit N] [--kestrel-src DIR] [--out FILE]
    python -m bench.polyglot --report FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import percentile
from bench.edit_quality.paired import paired_margin

from .data import Exercise, exercises, run_tests
from .systems import Answer, RawWhole, first_request, kestrel_edit, retry_request

SYSTEMS = ("raw", "kestrel")
N_CTX = 8192  # the longest exercise's instructions (beer-song) are ~3.5k tokens, then the file and the answer
OUT = Path("bench/out/polyglot.json")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


async def _system(name: str, ex: Exercise, raw: RawWhole, kest: Any) -> dict[str, Any]:
    """Two tries at most; what each produced and how the tests went."""
    document, history, tries = ex.stub, [], []
    for attempt in (1, 2):
        request = first_request(ex) if attempt == 1 else retry_request(ex, tries[-1]["output"])
        if name == "raw":
            ans, history = await raw.answer(ex, [*history, {"role": "user", "content": request}], document)
        else:
            ans = await kestrel_edit(kest, ex, document, request, attempt)
        document = ans.document
        run = await asyncio.to_thread(run_tests, ex, document)
        tries.append(_try(ans, run.passed, run.output, run.summary))
        _say(f"polyglot:   {ex.name} {name} try {attempt}: {ans.seconds:.0f}s, "
             f"{'well-formed' if ans.well_formed else ans.error}, tests: {run.summary[-60:]}")
        if run.passed:
            break
    return {"passed_1": tries[0]["passed"], "passed_2": tries[-1]["passed"], "tries": tries,
            "seconds": round(sum(t["seconds"] for t in tries), 1), "document": document}


def _try(ans: Answer, passed: bool, output: str, summary: str) -> dict[str, Any]:
    out = {"passed": passed, "well_formed": ans.well_formed, "seconds": round(ans.seconds, 1), "summary": summary,
           "output": output}
    if ans.error:
        out["error"] = ans.error[:300]
    return out


async def run(model_path: str | None, limit: int | None, kestrel_src: str | None, out: Path) -> dict[str, Any]:
    """Every exercise through both systems; the JSON is rewritten after each exercise (a run cut short
    keeps what it finished, `"complete": false`)."""
    from bench.edit_quality.lsp import EditSession
    from bench.quality.runner import kestrel_source, machine, resolve
    from kestrel.local.runtime import LocalModelServer

    todo = exercises()[:limit] if limit else exercises()
    model = resolve(model_path)
    source = kestrel_source(kestrel_src)
    server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
    t_start = time.perf_counter()
    _say(f"polyglot: starting llama.cpp with {model.path} ...")
    await server.start()
    raw = RawWhole(server.base_url, model.name)
    kest = EditSession(server.base_url, model.name, out.parent / "polyglot-server.log", None, kestrel_src)
    records: list[dict[str, Any]] = []
    doc: dict[str, Any] = {"model": model.name, "model_path": str(model.path), "kestrel": source, "machine": machine(),
                           "n_ctx": N_CTX, "complete": False, "records": records}
    try:
        await kest.start()
        for k, ex in enumerate(todo):
            order = SYSTEMS if k % 2 == 0 else SYSTEMS[::-1]
            rec: dict[str, Any] = {"exercise": ex.name, "first": order[0]}
            for name in order:
                rec[name] = await _system(name, ex, raw, kest)
            records.append(rec)
            out.write_text(json.dumps({**doc, "wall_seconds": round(time.perf_counter() - t_start, 1)}, indent=1))
            _say(f"polyglot: {k + 1}/{len(todo)} {ex.name}: raw {_mark(rec['raw'])}, kestrel {_mark(rec['kestrel'])}; "
                 f"{time.perf_counter() - t_start:.0f}s")
    finally:
        await kest.stop()
        await raw.close()
        await server.stop()
    return {**doc, "complete": True, "wall_seconds": round(time.perf_counter() - t_start, 1)}


def _mark(r: dict[str, Any]) -> str:
    return "pass@1" if r["passed_1"] else "pass@2" if r["passed_2"] else "fail"


def _kestrel_label(source: Any) -> str:
    if isinstance(source, dict):
        return str(source.get("commit") or source.get("source") or source)
    return str(source)


def report(doc: dict[str, Any]) -> str:
    recs = doc["records"]
    n = len(recs)
    cut = "" if doc.get("complete", True) else " (a run cut short: the first exercises only)"
    lines = [f"Model {doc['model']}, {n} exercises{cut}, n_ctx {doc['n_ctx']}, wall {doc['wall_seconds']:.0f} s; "
             f"Kestrel {_kestrel_label(doc['kestrel'])}.",
             "", "| system | pass@1 | pass@2 | well-formed answers | apply failures | s per exercise p50 / p95 |",
             "|---|---|---|---|---|---|"]
    for name in SYSTEMS:
        tries = [t for r in recs for t in r[name]["tries"]]
        p1 = sum(r[name]["passed_1"] for r in recs)
        p2 = sum(r[name]["passed_2"] for r in recs)
        wf = sum(t["well_formed"] for t in tries)
        secs = [r[name]["seconds"] for r in recs]
        lines.append(f"| {name} | {p1}/{n} ({p1 / max(n, 1):.1%}) | {p2}/{n} ({p2 / max(n, 1):.1%}) | "
                     f"{wf}/{len(tries)} ({wf / max(len(tries), 1):.1%}) | {len(tries) - wf} | "
                     f"{percentile(secs, 50) or 0:.0f} / {percentile(secs, 95) or 0:.0f} |")
    lines.append("")
    for key in ("passed_1", "passed_2"):
        b = sum(r["kestrel"][key] and not r["raw"][key] for r in recs)
        c = sum(r["raw"][key] and not r["kestrel"][key] for r in recs)
        m = paired_margin(b, c, n)
        lines.append(f"- Kestrel minus raw, {key.replace('passed_', 'pass@')}: {m['margin'] * 100:+.1f} pts "
                     f"[{m['low'] * 100:+.1f}, {m['high'] * 100:+.1f}], McNemar p={m['p']:.2g} (+{b}/-{c})")
    passed = {name: sorted(r["exercise"] for r in recs if r[name]["passed_2"]) for name in SYSTEMS}
    lines += [f"- passed ({name}): {', '.join(passed[name]) or 'none'}" for name in SYSTEMS]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.polyglot", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-path", default=None, help="a GGUF model (default: the packaged 0.5B)")
    p.add_argument("--limit", type=int, default=None, help="the first N exercises (a quick check)")
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--report", type=Path, default=None, help="print the report of a finished run's JSON")
    args = p.parse_args(argv)
    if args.report:
        print(report(json.loads(args.report.read_text())))
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    doc = asyncio.run(run(args.model_path, args.limit, args.kestrel_src, args.out))
    args.out.write_text(json.dumps(doc, indent=1))
    print(report(doc))


if __name__ == "__main__":
    main()
