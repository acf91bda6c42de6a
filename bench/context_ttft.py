"""python -m bench.context_ttft [--files N] [--model-path X.gguf] [--compare-continued] [--lines N]: what repository context costs while
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
the cursor, so the suffix is read again after each keystroke) and pairs its texts with context on's
(per keystroke and per file). `--lines N` types on past the hidden line: Enter (the next line's
indentation at once, as an editor's auto-indent gives it) and the N - 1 lines after it, each scored
against its own line; the summary counts the keystrokes after the first Enter apart.
Writes bench/out/context-ttft.json (context-ttft-N-lines.json with --lines N).
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
    result_text,
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


def keystrokes(task: Any, lines: int) -> tuple[list[str], list[str], str]:
    """What is typed at the task's cursor, one entry per keystroke: the hidden line a character at a
    time, then (`lines` > 1) Enter with the next line's indentation at once (as an editor's auto-indent
    gives it) and that line's characters; the lines typed, and the text after what is typed."""
    following = task.suffix.split("\n")[1:lines]  # the suffix begins with the hidden line's newline
    targets = [task.truth.split("\n")[0], *following]
    rest = task.suffix[sum(1 + len(t) for t in following):]
    typed, done = [], ""
    for j, target in enumerate(targets):
        indent = len(target) - len(target.lstrip()) if j else 0
        done += "\n" + target[:indent] if j else ""
        typed += [done + target[indent:i] for i in range(indent, len(target) + 1)]
        done += target[indent:]
    return typed, targets, rest


async def _type_lines(client: KestrelClient, task: Any, root: Path, lines: int) -> list[dict[str, Any]]:
    """Type the task's hidden line (and the `lines` - 1 after it) at its cursor; one record per keystroke."""
    uri = (root / task.path).as_uri()
    before = task.prefix
    typed_all, targets, after = keystrokes(task, lines)
    open_doc(client, uri, before + after)
    out = []
    for i, typed in enumerate(typed_all):
        text = before + typed + after
        if i:
            change_doc(client, uri, text, i + 1)
        started = as_dict(await client.request("kestrel/diagnostics"))["generationsStarted"]
        pos = position_of(text, len(before) + len(typed))
        t0 = time.perf_counter()
        shown = result_text(await client.inline_items(inline_params(uri, pos.line, pos.character))) or ""
        ms = (time.perf_counter() - t0) * 1000
        after_request = as_dict(await client.request("kestrel/diagnostics"))
        new = after_request["generationsStarted"] > started
        line = typed.count("\n")
        on_line = typed.rsplit("\n", 1)[-1]
        # Right: what was typed on the line and the suggestion's first line make the line that was there.
        out.append({"keystroke": i, "line": line, "ms": ms, "new_generation": new, "shown": shown,
                    "right": bool(shown) and (on_line + shown.split("\n")[0]).rstrip() == targets[line].rstrip(),
                    "ttft_ms": after_request.get("lastGenerationTtftMs") if new else None})
    client.close_doc(uri)
    return out


async def run(n_files: int, model_path: str | None, compare_continued: bool = False, lines: int = 1) -> dict[str, Any]:
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
                for rec in await _type_lines(client, task, roots[task.package], lines):
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
                         "right": sum(1 for r in recs if r["right"]),
                         # after the first Enter: the lines a user writes on from there
                         "later_lines_keystrokes": sum(1 for r in recs if r["line"] > 0),
                         "later_lines_right": sum(1 for r in recs if r["line"] > 0 and r["right"]),
                         "later_lines_ttft_p50": stats([r["ttft_ms"] for r in recs if r["line"] > 0
                                                        and r.get("ttft_ms") is not None], 1)["p50"]}
    on, off = summary["context on"], summary["context off"]

    def ratio(key: str) -> float | None:
        return round(on[key] / off[key], 2) if on[key] and off[key] else None

    paired = None
    if compare_continued:  # the same keystrokes, with and without the typed characters continued
        a, b = records["context on"], records["typed not continued"]
        paired = {"keystrokes": len(a), "same_text": sum(1 for x, y in zip(a, b) if x["shown"] == y["shown"]),
                  "right_only_continued": sum(1 for x, y in zip(a, b) if x["right"] and not y["right"]),
                  "right_only_not_continued": sum(1 for x, y in zip(a, b) if y["right"] and not x["right"]),
                  # per file (keystrokes of a file move together: a right answer is typed through to the line's end)
                  "files_more_right_continued": 0, "files_more_right_not_continued": 0, "files_same": 0}
        for f in dict.fromkeys(r["file"] for r in a):
            ra, rb = (sum(1 for r in recs if r["file"] == f and r["right"]) for recs in (a, b))
            key = ("files_more_right_continued" if ra > rb else "files_more_right_not_continued" if rb > ra
                   else "files_same")
            paired[key] += 1
    return {"model": model.name, "files": [f"{t.package}/{t.path}" for t in picked], "summary": summary,
            "continued_vs_not": paired,
            "warm_p50_ratio_on_off": ratio("warm_p50"), "warm_ttft_p50_ratio_on_off": ratio("warm_ttft_p50"),
            "records": records}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.context_ttft", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=8)
    p.add_argument("--model-path", default=None)
    p.add_argument("--lines", type=int, default=1,
                   help="type the hidden line and the lines after it, Enter auto-indenting (default 1)")
    p.add_argument("--compare-continued", action="store_true",
                   help="add a third system: context on with completion.continueTyped off")
    args = p.parse_args(argv)
    doc = asyncio.run(run(args.files, args.model_path, args.compare_continued, args.lines))
    out = OUT if args.lines == 1 else OUT.with_name(f"context-ttft-{args.lines}-lines.json")
    out.write_text(json.dumps(doc, indent=1))
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
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
