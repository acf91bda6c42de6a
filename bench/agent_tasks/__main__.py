"""python -m bench.agent_tasks [--model-path X.gguf | --base-url URL --model-name M] [--trials 3] [--per-kind 4]

(An endpoint's key: OPENAI_API_KEY in the environment.)

The agent on multi-file tasks (issue 29; tasks.py): fixing a QuixBugs program whose tests fail (with
`python -m pytest` allowed) and renaming a function across a real package's modules, TRIALS trials
each on a fresh copy (the agent samples at the endpoint's temperature). Reports per task how many
trials passed, pass^k (every trial passed) and pass@1 (the mean), steps, tool calls and seconds per
trial, and writes bench/out/agent-tasks[-<model>].json. Prints a markdown table (bench/AGENT.md has
it by hand).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from bench.quality.lsp import server_env
    from bench.quality.runner import N_CTX

    from . import tasks as task_sets
    from .runner import trial

    chosen = [t for t in task_sets.all_tasks(args.per_kind) if t.kind in args.kinds.split(",")]
    server = None
    if args.base_url:
        base_url, model_name, model_path = args.base_url, args.model_name, None
    else:
        from kestrel.local.models import resolve_model
        from kestrel.local.runtime import LocalModelServer

        model = resolve_model(args.model_path, allow_download=False)
        server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
        _say(f"agent tasks: starting llama.cpp with {model.path} ...")
        await server.start()
        base_url, model_name, model_path = server.base_url, model.name, str(model.path)
    env = server_env(base_url, model_name, None, args.kestrel_src)
    env.update(KESTREL_PROVIDER="chat", KESTREL_CACHE_DIR=tempfile.mkdtemp(prefix="kestrel-agent-tasks-cache-"))
    if args.base_url and os.environ.get("OPENAI_API_KEY"):  # the endpoint's key, from the environment only
        env["OPENAI_API_KEY"] = os.environ["OPENAI_API_KEY"]
    records: list[dict[str, Any]] = []
    started = time.perf_counter()
    log = open(BENCH / "out" / "agent-tasks-server.log", "ab")
    try:
        for task in chosen:
            for n in range(1, args.trials + 1):
                records.append(await trial(task, env, log, n, args.kestrel_src, args.context_tokens))
                r = records[-1]
                _say(f"agent tasks: {task.id} trial {n}: {'passed' if r['passed'] else 'failed'} ({r['why'][:80]}), "
                     f"{r['steps']} steps, {r['seconds']:.0f} s; {time.perf_counter() - started:.0f} s so far")
    finally:
        log.close()
        if server is not None:
            await server.stop()
    return {"model": model_name, "modelPath": model_path, "baseUrl": None if server else base_url,
            "trials": args.trials, "kestrel": args.kestrel_src or "installed", "contextTokens": args.context_tokens,
            "records": records,
            "wallSeconds": round(time.perf_counter() - started, 1),
            "command": "python -m bench.agent_tasks " + " ".join(sys.argv[1:])}


def report(doc: dict[str, Any]) -> str:
    """The markdown table: a row per task, then per kind and overall."""
    recs = doc["records"]
    k = doc["trials"]
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        by_task.setdefault(r["task"], []).append(r)
    lines = [f"Agent tasks, {doc['model']}, {k} trials each, Kestrel {doc['kestrel']} ({doc['wallSeconds']:.0f} s):", "",
             "| task | passed | steps (mean) | tool calls (failed) | seconds p50 | how the last trial ended |",
             "|---|---|---|---|---|---|"]
    for task, rs in by_task.items():
        calls = sum(len(r["calls"]) for r in rs)
        lines.append(f"| {task} | {sum(r['passed'] for r in rs)}/{len(rs)} | {statistics.mean(r['steps'] for r in rs):.1f} | "
                     f"{calls} ({sum(r['failedCalls'] for r in rs)}) | {statistics.median(r['seconds'] for r in rs):.0f} | "
                     f"{(rs[-1]['error'] or rs[-1]['why'])[:70]} |")
    lines += ["", "| kind | tasks | pass^k (every trial) | pass@1 (mean of trials) | seconds p50 / p95 |", "|---|---|---|---|---|"]
    for kind in sorted({r["kind"] for r in recs}) + ["all"]:
        groups = [rs for rs in by_task.values() if kind == "all" or rs[0]["kind"] == kind]
        secs = sorted(r["seconds"] for rs in groups for r in rs)
        every = sum(all(r["passed"] for r in rs) for rs in groups)
        mean = statistics.mean(r["passed"] for rs in groups for r in rs) if groups else 0.0
        p95 = secs[min(len(secs) - 1, int(round(0.95 * (len(secs) - 1))))] if secs else 0
        lines.append(f"| {kind} | {len(groups)} | {every}/{len(groups)} | {mean:.1%} | "
                     f"{statistics.median(secs) if secs else 0:.0f} / {p95:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.agent_tasks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-path", default=None)
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint instead of the local model")
    p.add_argument("--model-name", default=None)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--per-kind", type=int, default=4)
    p.add_argument("--kinds", default="fix,rename")
    p.add_argument("--kestrel-src", default=None)
    p.add_argument("--context-tokens", type=int, default=None,
                   help="the window told to Kestrel (chat.contextTokens; 0: not told); default: llama.cpp's n_ctx "
                        "for the local model, 0 for an endpoint")
    p.add_argument("--out", default=None)
    p.add_argument("--report", default=None, help="print the table of an earlier run's JSON")
    args = p.parse_args(argv)
    if args.report:
        print(report(json.loads(Path(args.report).read_text())))
        return
    if args.context_tokens is None:
        from bench.quality.runner import N_CTX

        args.context_tokens = 0 if args.base_url else N_CTX
    if args.base_url and not args.model_name:
        p.error("--base-url needs --model-name")
    stem = Path(args.model_path).stem if args.model_path else (args.model_name or "").replace("/", "_") or None
    out = Path(args.out) if args.out else BENCH / "out" / (f"agent-tasks-{stem}.json" if stem else "agent-tasks.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = asyncio.run(run(args))
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(report(doc))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
