"""Cut rules compared on recorded model streams: the same tokens, at the times they came.

`record` streams the local model's fill-in-the-middle answer for every task of the HumanEval
infilling sample (both cursor placements; the timestamp of each token kept) once. `compare` replays
each recording through the completion engine of one or more Kestrel source trees (a provider that
yields the recorded pieces; the engine persists across tasks, as in the eval, so the ending habit is
learned as it would be) and reports, per set and placement: pass@1 of what each would show (scored by
the tasks' tests), shown, precision, and when it would have answered (the recorded time of the piece
it answered at) p50/p95, beside raw's first line (single-line) or own end. Texts that differ between
the first two trees are listed. A cut rule is then judged on identical streams, in seconds, without
the noise of a second model run. The streams are raw's (the bare FIM prompt of the task's prefix
and suffix); where Kestrel's own prompt differs (a cursor before code on its line: Kestrel pushes that
code to a new line, opens_a_line), the engine is replayed on raw's tokens all the same, so its pass@1
here is near, not equal to, the eval's.

    python -m bench.quality.cut_replay record --out streams.json
    python -m bench.quality.cut_replay compare streams.json /tmp/kestrel-old/pyserver pyserver
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import data, raw, scoring

MAX_NEWLINES = {"single-line": 6}  # recorded past the first line's end by this many lines (others: 12)


async def record(out: Path, model_path: str | None) -> None:
    from openai import AsyncOpenAI

    from kestrel.local.runtime import LocalModelServer

    from .runner import N_CTX, resolve

    model = resolve(model_path)
    server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
    await server.start()
    client = AsyncOpenAI(base_url=server.base_url, api_key="local", max_retries=0, timeout=300)
    rows: list[dict[str, Any]] = []
    try:
        for set_name, tasks in data.sample(data.all_sets(), data.DEFAULT_SAMPLE, data.SAMPLE_SEED).items():
            for task in tasks:
                for placement in data.PLACEMENTS:
                    t = task.placed(placement)
                    t0, text, steps, finish = time.perf_counter(), "", [], None
                    stream: Any = await client.completions.create(
                        model=model.name, prompt=raw.fim_prompt(t.prefix, t.suffix), max_tokens=256,
                        temperature=0, stream=True, stop=raw.MODEL_STOPS)
                    async for chunk in stream:
                        if not chunk.choices:
                            continue
                        if chunk.choices[0].text:
                            text += chunk.choices[0].text
                            steps.append((round((time.perf_counter() - t0) * 1000, 1), text))
                        finish = chunk.choices[0].finish_reason or finish
                        if text.count("\n") > MAX_NEWLINES.get(set_name, 12):
                            break
                    await stream.close()
                    rows.append({"set": set_name, "task": task.task_id, "placement": placement, "steps": steps,
                                 "finish": finish})
                    print(f"{len(rows)} {task.task_id} {placement}", file=sys.stderr, flush=True)
    finally:
        await server.stop()
    out.write_text(json.dumps(rows))


_REPLAY = r'''
import asyncio, json, sys
from dataclasses import replace
from kestrel.completion.engine import CompletionInput, InlineCompletionEngine
from kestrel.config import CompletionSettings
from kestrel.context.window import split_at

class Replay:
    kind, model, connection_state = "fim", "replay", "ready"
    steps, finish, index = [], None, -1
    async def complete(self, prompt, stats):
        prev = ""
        for i, (_, text) in enumerate(self.steps):
            self.index = i
            yield text[len(prev):]
            prev = text
            await asyncio.sleep(0.0005)
        stats.stop_reason = self.finish or "length"

class Quiet:
    def generation_started(self): ...
    def generation_finished(self, stats, error): ...

async def main():
    rows = json.load(sys.stdin)
    engine = InlineCompletionEngine(replace(CompletionSettings(), prepare_next=False), Quiet())
    provider = Replay()
    engine.set_provider(provider)
    out = []
    for n, r in enumerate(rows):
        before, doc = r["prefix"], r["prefix"] + r["suffix"]
        cur = split_at(doc, before.count("\n"), len(before) - (before.rfind("\n") + 1))
        provider.steps, provider.finish, provider.index = r["steps"], r["finish"], -1
        uri = f"file:///w/t{n}.py"
        text = await engine.complete(CompletionInput(uri, f"t{n}.py", "python", cur, lambda q, b: ()))
        engine.forget(uri)
        out.append({"text": text, "ms": r["steps"][provider.index][0] if provider.index >= 0 else 0.0})
    json.dump(out, sys.stdout)

asyncio.run(main())
'''


def replay(rows: list[dict[str, Any]], src: str) -> list[dict[str, Any]]:
    """The engine of the Kestrel package in `src` (a pyserver directory) on every recording."""
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run([sys.executable, "-c", _REPLAY], input=json.dumps(rows), env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f) if xs else 0.0


async def compare(streams: Path, sources: list[str]) -> None:
    rows = json.loads(streams.read_text())
    tasks = {t.task_id: t for ts in data.all_sets().values() for t in ts}
    placed = [tasks[r["task"]].placed(r["placement"]) for r in rows]
    for r, t in zip(rows, placed):
        r["prefix"], r["suffix"] = t.prefix, t.suffix
    systems: dict[str, list[dict[str, Any]]] = {"raw": []}
    for r in rows:  # raw: the first line (single-line) or the model's own end, as in the eval
        full = r["steps"][-1][1] if r["steps"] else ""
        line = r["set"] == "single-line" and "\n" in full
        at = next((s[0] for s in r["steps"] if "\n" in s[1]), None) if line else None
        systems["raw"].append({"text": raw.cut_single_line(full) if line else full,
                               "ms": at if at is not None else (r["steps"][-1][0] if r["steps"] else 0.0)})
    for src in sources:
        systems[src] = replay(rows, src)
    scorer = scoring.Scorer()
    passed = {name: [(await scorer.document(t, scoring.editor_text(t, a["text"]))).passed for t, a in zip(placed, answers)]
              for name, answers in systems.items()}
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["set"], r["placement"]), []).append(i)
    print("| set | cursor | system | tasks | pass@1 | shown | precision | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (set_name, placement), idx in groups.items():
        for name, answers in systems.items():
            ok = sum(passed[name][i] for i in idx)
            shown = sum(1 for i in idx if answers[i]["text"])
            ms = [answers[i]["ms"] for i in idx]
            print(f"| {set_name} | {placement} | {name} | {len(idx)} | {ok} | {shown} | {ok / max(shown, 1):.1%} "
                  f"| {_pct(ms, .5):.0f} | {_pct(ms, .95):.0f} |")
    if len(sources) >= 2:
        a, b = systems[sources[0]], systems[sources[1]]
        differ = [i for i in range(len(rows)) if a[i]["text"] != b[i]["text"]]
        print(f"\ntexts that differ between the first two: {len(differ)}")
        for i in differ:
            print(f"- {rows[i]['task']} ({rows[i]['placement']}): {a[i]['text']!r} -> {b[i]['text']!r} "
                  f"(passed {passed[sources[0]][i]} -> {passed[sources[1]][i]})")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.quality.cut_replay", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record the local model's streams for the HumanEval infilling sample")
    rec.add_argument("--out", required=True)
    rec.add_argument("--model-path", default=None)
    cmp_ = sub.add_parser("compare", help="replay recorded streams through Kestrel source trees")
    cmp_.add_argument("streams")
    cmp_.add_argument("sources", nargs="+", help="pyserver directories (e.g. a git archive of another commit)")
    args = p.parse_args(argv)
    if args.command == "record":
        asyncio.run(record(Path(args.out).resolve(), args.model_path))
    else:
        asyncio.run(compare(Path(args.streams), args.sources))


if __name__ == "__main__":
    main()
