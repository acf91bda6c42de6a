"""python -m bench.context_ttft [--files N] [--model-path X.gguf] [--compare-continued]: what repository context costs while
typing (issue 23: warm typing TTFT with context <= 1.1 x without, thanks to the cache-stable layout).

Real files of the repository set (bench/repo_context: 2025-26 PyPI packages as the workspace), the
same local llama.cpp server (the packaged 0.5B unless --model-path), and two kestrel-lsp processes
that differ only in `completion.repositoryContext` (on / off). In each file the hidden line of a
repository task is typed one character at a time (didChange + inlineCompletion per keystroke, as an
editor sends them); per file one system types the whole line, then the other (alternating which goes
first, so neither always finds the model's cache warm from the other). Reported per system: the
first request in a file (cold: the prompt, with its context, is new to the model), and the requests
that started a new generation while typing (warm: the cache holds the prompt's unchanged start),
p50/p95 at the LSP boundary, and for the warm ones the endpoint's own time to the first token
(`lastGenerationTtftMs` of `kestrel/diagnostics`: the target's figure; the answer's time adds decoding
and the cut, and the texts differ with context); typed-through keystrokes (answered from a live stream) are counted apart.
Each keystroke's suggestion is *right* when the characters typed and its first line make the line that was
there. `--compare-continued` adds context on with `completion.continueTyped` off (every prompt ends at
the cursor, so the suffix is read again after each keystroke) and pairs its texts with context on's.
Writes bench/out/context-ttft.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lsp_client import (
    KestrelClient,
    as_dict,
    change_doc,
    inline_params,
    open_doc,
    position_of,
    server_command,
    stop_server,
    wait_ready,
)
from bench.common import summary as stats
from bench.quality.lsp import server_env
from bench.repo_context import sources, tasks

OUT = Path(__file__).resolve().parent / "out" / "context-ttft.json"
# Each system's completion settings. "typed not continued": context on, but every new generation's prompt
# ends at the cursor (completion.continueTyped off: the whole suffix is read again after a keystroke).
SYSTEMS: dict[str, dict[str, bool]] = {"context on": {"repositoryContext": True},
                                       "context off": {"repositoryContext": False}}
CONTINUED_OFF = {"typed not continued": {"repositoryContext": True, "continueTyped": False}}


async def _start(base_url: str, model: str, root: Path, completion: dict[str, bool], log: Any) -> KestrelClient:
    """kestrel-lsp on the llama.cpp server, with `root` (one package) as its workspace folder."""
    client = KestrelClient("kestrel-context-ttft")
    await client.spawn(server_command(), server_env(base_url, model), log, tempfile.mkdtemp(prefix="kestrel-ttft-"))
    await client.initialize({"kestrel": {"completion": completion}}, root)
    await wait_ready(client, 60.0, connected=False)
    return client


async def _type_line(client: KestrelClient, task: Any, root: Path) -> list[dict[str, Any]]:
    """Type the task's hidden line at its cursor; one record per keystroke."""
    uri = (root / task.path).as_uri()
    before, line, after = task.prefix, task.truth.split("\n")[0], task.suffix
    open_doc(client, uri, before + after)
    out = []
    for i in range(len(line) + 1):
        text = before + line[:i] + after
        if i:
            change_doc(client, uri, text, i + 1)
        started = as_dict(await client.request("kestrel/diagnostics"))["generationsStarted"]
        pos = position_of(text, len(before) + i)
        t0 = time.perf_counter()
        items = await client.inline_items(inline_params(uri, pos.line, pos.character))
        ms = (time.perf_counter() - t0) * 1000
        after_request = as_dict(await client.request("kestrel/diagnostics"))
        new = after_request["generationsStarted"] > started
        shown = items[0].insert_text if items else ""
        shown = shown if isinstance(shown, str) else shown.value
        # Right: what was typed and the suggestion's first line make the line that was there.
        out.append({"keystroke": i, "ms": ms, "new_generation": new, "shown": shown,
                    "right": bool(shown) and (line[:i] + shown.split("\n")[0]).rstrip() == line.rstrip(),
                    "ttft_ms": after_request.get("lastGenerationTtftMs") if new else None})
    client.close_doc(uri)
    return out


async def run(n_files: int, model_path: str | None, compare_continued: bool = False) -> dict[str, Any]:
    from kestrel.local.models import resolve_model
    from kestrel.local.runtime import LocalModelServer

    roots = sources.ensure_all()
    picked, seen = [], set()
    for task in tasks.sample(tasks.candidates(roots), 48):
        if (task.package, task.path) not in seen and "\n" not in task.truth.strip():
            seen.add((task.package, task.path))
            picked.append(task)
    picked = picked[:n_files]
    model = resolve_model(model_path, allow_download=False)
    llama = LocalModelServer(model, n_ctx=8192, require_key=False)
    await llama.start()
    OUT.parent.mkdir(exist_ok=True)  # a fresh checkout has no bench/out
    log = open(OUT.parent / "context-ttft-server.log", "ab")
    systems = {**SYSTEMS, **(CONTINUED_OFF if compare_continued else {})}
    records: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    clients: dict[str, dict[str, KestrelClient]] = {s: {} for s in systems}  # one process per system and package
    try:
        for k, task in enumerate(picked):
            names = list(systems)
            order = names[k % len(names):] + names[:k % len(names)]  # each goes first in turn
            for name in order:
                client = clients[name].get(task.package)
                if client is None:
                    client = await _start(llama.base_url, model.name, roots[task.package], systems[name], log)
                    clients[name][task.package] = client
                    await asyncio.sleep(2.0)  # let its workspace scan finish before measuring
                for rec in await _type_line(client, task, roots[task.package]):
                    records[name].append({**rec, "file": f"{task.package}/{task.path}"})
            print(f"context ttft: {k + 1}/{len(picked)} files", file=sys.stderr, flush=True)
    finally:
        for per_package in clients.values():
            for client in per_package.values():
                await stop_server(client, timeout=10.0)
        await llama.stop()
        log.close()
    summary = {}
    for name, recs in records.items():
        cold = [r["ms"] for r in recs if r["keystroke"] == 0]
        warm = [r["ms"] for r in recs if r["keystroke"] > 0 and r["new_generation"]]
        through = [r["ms"] for r in recs if r["keystroke"] > 0 and not r["new_generation"]]
        # The endpoint's own first-token time of each warm generation (what the layout decides), beside the
        # answer's time at the LSP boundary (which adds decoding and the cut: the texts differ with context).
        ttft = [r["ttft_ms"] for r in recs if r["keystroke"] > 0 and r["new_generation"] and r.get("ttft_ms") is not None]
        c, w, t, f = stats(cold, 1), stats(warm, 1), stats(through, 1), stats(ttft, 1)
        summary[name] = {"cold_p50": c["p50"], "cold_p95": c["p95"], "warm_p50": w["p50"], "warm_p95": w["p95"],
                         "warm_n": w["n"], "warm_ttft_p50": f["p50"], "warm_ttft_p95": f["p95"], "warm_ttft_n": f["n"],
                         "typed_through_n": t["n"], "typed_through_p50": t["p50"], "files": c["n"],
                         "keystrokes": len(recs), "shown": sum(1 for r in recs if r["shown"]),
                         "right": sum(1 for r in recs if r["right"])}
    on, off = summary["context on"], summary["context off"]

    def ratio(key: str) -> float | None:
        return round(on[key] / off[key], 2) if on[key] and off[key] else None

    paired = None
    if compare_continued:  # the same keystrokes, with and without the typed characters continued
        a, b = records["context on"], records["typed not continued"]
        paired = {"keystrokes": len(a), "same_text": sum(1 for x, y in zip(a, b) if x["shown"] == y["shown"]),
                  "right_only_continued": sum(1 for x, y in zip(a, b) if x["right"] and not y["right"]),
                  "right_only_not_continued": sum(1 for x, y in zip(a, b) if y["right"] and not x["right"])}
    return {"model": model.name, "files": [f"{t.package}/{t.path}" for t in picked], "summary": summary,
            "continued_vs_not": paired,
            "warm_p50_ratio_on_off": ratio("warm_p50"), "warm_ttft_p50_ratio_on_off": ratio("warm_ttft_p50"),
            "records": records}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.context_ttft", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=8)
    p.add_argument("--model-path", default=None)
    p.add_argument("--compare-continued", action="store_true",
                   help="add a third system: context on with completion.continueTyped off")
    args = p.parse_args(argv)
    doc = asyncio.run(run(args.files, args.model_path, args.compare_continued))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1))
    print(f"{'system':12s} {'cold p50/p95 ms':>18s} {'warm new-generation p50/p95 ms (n)':>38s}"
          f" {'warm TTFT p50/p95 ms (n)':>28s} {'typed-through n':>16s}")
    for name, s in doc["summary"].items():
        print(f"{name:12s} {s['cold_p50']!s:>8s} / {s['cold_p95']!s:<8s} {s['warm_p50']!s:>16s} / {s['warm_p95']!s:<8s}"
              f" ({s['warm_n']}) {s['warm_ttft_p50']!s:>12s} / {s['warm_ttft_p95']!s:<8s} ({s['warm_ttft_n']})"
              f" {s['typed_through_n']:>6d}   right {s['right']} of {s['keystrokes']} keystrokes (shown {s['shown']})")
    print(f"warm TTFT p50 ratio, context on / off: {doc['warm_ttft_p50_ratio_on_off']} (target <= 1.1); "
          f"warm answer p50 ratio: {doc['warm_p50_ratio_on_off']}")
    if doc["continued_vs_not"]:
        print(f"continued vs not (context on): {doc['continued_vs_not']}")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
