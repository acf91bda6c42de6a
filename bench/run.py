"""Kestrel benchmarks.

    python -m bench.run [--quick] [--only NAME,...] [--samples N] [--out DIR] [--kinds K,...]

Benchmarks (NAME): inline_added, cold_start, rss_mb, keystroke_storm, sdk_parse_cost, local_model,
next_suggestion, after_start, first_at_spot, edits_ms, relay, steer_ms, transports, codex, quality, peers.
Writes results.json and RESULTS.md to --out (default: bench/), server/mock logs to
<out>/out/ (bench/out/ by default). The mock model always runs as its own process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from . import common, lsp_client
from .report import checks, render_markdown

BENCHMARKS = ("inline_added", "cold_start", "rss_mb", "keystroke_storm", "sdk_parse_cost", "local_model",
              "next_suggestion", "after_start", "first_at_spot", "edits_ms", "relay", "steer_ms", "transports", "codex", "quality", "peers")
ALIASES = {"rss": "rss_mb", "storm": "keystroke_storm", "parse_cost": "sdk_parse_cost", "sdk_parse": "sdk_parse_cost",
           "inline": "inline_added", "cold": "cold_start", "steer": "steer_ms", "transport": "transports",
           "next": "next_suggestion", "spot": "first_at_spot", "after": "after_start"}
ALL_KINDS = ("chat", "fim", "responses", "responses-ws", "chat-h1")  # chat-h1: chat with http2=off (HTTP/1.1)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sample counts (a smoke run, ~1 min)")
    p.add_argument("--only", default="", help="comma-separated benchmark names: " + ", ".join(BENCHMARKS))
    p.add_argument("--samples", type=int, default=None, help="inline_added samples per kind (default 200, quick 10)")
    p.add_argument("--kinds", default=",".join(ALL_KINDS),
                   help="provider kinds for inline_added / keystroke_storm (chat-h1 = chat over HTTP/1.1)")
    p.add_argument("--out", default=None, help="output directory (default: bench/)")
    p.add_argument("--client", choices=("raw", "pygls"), default="raw",
                   help="LSP client in the benchmark process (raw: a minimal JSON-RPC client; pygls: lsp_client.KestrelClient)")
    return p.parse_args(argv)


def plan(args: argparse.Namespace) -> dict[str, Any]:
    q = args.quick
    return {
        "quick": q,
        "client": args.client,
        "inline_samples": args.samples or (10 if q else 200),
        "inline_warmup": 3 if q else 20,
        "cold_runs": 3 if q else 10,
        "rss_n": 50 if q else 500,
        "storm_seconds": 3.0 if q else 30.0,
        "storm_chars_per_s": 20.0,
        "parse_number": 200 if q else 2000,
        "local_samples": 3 if q else 20,
        "next_samples": 2 if q else 12,
        "spot_places": 2 if q else 12,
        "after_rounds": 1 if q else 4,  # sessions per arm
        "after_positions": 2 if q else 5,
        "edits_samples": 5 if q else 100,
        "kinds": [k.strip() for k in args.kinds.split(",") if k.strip()],
        "rss_kinds": ["chat", "responses-ws"] if q else ["chat", "fim", "responses", "responses-ws"],
        "relay_kinds": ["chat", "responses-ws"],
        "relay_rates": [1000, 5000, 10000, 20000, 40000, 0],  # tokens/s; 0 = unlimited
        "relay_seconds": 0.15 if q else 0.3,  # stream length per rate (twice that at 1,000 tok/s)
        "relay_unlimited_tokens": 3000 if q else 10000,
        "relay_reps": 1 if q else 3,
        "steer_samples": 10 if q else 120,  # x 3 modes; ~0.1 s each (keeps `make bench` < 10 min)
        "steer_warmup": 2 if q else 5,
        "transport_samples": 10 if q else 200,
        "transport_warmup": 2 if q else 5,
        "codex_samples": 2 if q else 20,
        "codex_warmup": 1,
        "mock": {"text": common.MOCK_TEXT, "inline_ttft_ms": 0, "inline_tps": 0, "storm_ttft_ms": 30, "storm_tps": 400},
    }


async def run_one(name: str, cfg: dict[str, Any], logs: Path) -> Any:
    if name == "peers":  # GitHub Copilot's language server vs Kestrel on the same mock behaviour
        from .peers import run_peers

        return await run_peers(logs, cfg["quick"])
    if name == "quality":  # a slice of `make eval`: completion pass@1, raw model vs Kestrel
        from . import quality

        return await quality.run_slice(logs, quick=cfg["quick"])
    if name == "inline_added":
        from . import inline_added

        return await inline_added.run(cfg["kinds"], cfg["inline_samples"], cfg["inline_warmup"], logs)
    if name == "cold_start":
        from . import cold_start

        return await cold_start.run(cfg["cold_runs"], logs)
    if name == "rss_mb":
        from . import rss

        return await rss.run(cfg["rss_kinds"], cfg["rss_n"], logs)
    if name == "keystroke_storm":
        from . import storm

        return await storm.run(cfg["kinds"], cfg["storm_seconds"], logs, cfg["storm_chars_per_s"])
    if name == "sdk_parse_cost":
        from . import parse_cost

        return await parse_cost.run(cfg["parse_number"], logs)
    if name == "edits_ms":
        from . import edits

        return await edits.run(cfg["edits_samples"], logs)
    if name == "local_model":
        from . import local_model

        return await local_model.run(cfg["local_samples"], logs)
    if name == "next_suggestion":
        from . import next_suggestion

        return await next_suggestion.run(cfg["next_samples"], logs)
    if name == "after_start":
        from . import after_start

        return await after_start.run(cfg["after_rounds"], cfg["after_positions"], logs)
    if name == "first_at_spot":
        from . import first_at_spot

        return await first_at_spot.run(cfg["spot_places"], logs)
    if name == "relay":
        from . import relay

        return await relay.run(cfg["relay_kinds"], cfg["relay_rates"], cfg["relay_seconds"],
                               cfg["relay_unlimited_tokens"], cfg["relay_reps"], logs)
    if name == "steer_ms":
        from . import steer_ms

        return await steer_ms.run(cfg["steer_samples"], cfg["steer_warmup"], logs)
    if name == "transports":
        from . import transports

        return await transports.run(cfg["transport_samples"], cfg["transport_warmup"], logs)
    if name == "codex":
        from . import codex

        return await codex.run(cfg["codex_samples"], cfg["codex_warmup"], logs)
    raise ValueError(name)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = list(BENCHMARKS)
    if args.only:
        names = []
        for raw in args.only.split(","):
            n = ALIASES.get(raw.strip(), raw.strip())
            if n not in BENCHMARKS:
                print(f"unknown benchmark {raw!r}: choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
                return 2
            names.append(n)
    out = Path(args.out) if args.out else Path(__file__).resolve().parent
    logs = out / "out"
    logs.mkdir(parents=True, exist_ok=True)
    for f in ("server.log", "mock.log", "proxy.log"):
        (logs / f).write_bytes(b"")
    lsp_client.CLIENT_KIND = args.client
    cfg = plan(args)
    results: dict[str, Any] = {}
    failed = False
    t_all = time.perf_counter()
    timings = {}
    for name in names:
        print(f"[{name}]", flush=True)
        t0 = time.perf_counter()
        try:
            results[name] = asyncio.run(run_one(name, cfg, logs))
        except Exception as exc:
            failed = True
            traceback.print_exc()
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
        timings[name] = round(time.perf_counter() - t0, 1)
    doc = {
        "machine": common.machine(),
        "config": cfg,
        "benchmarks_run": names,
        "wall_seconds": {**timings, "total": round(time.perf_counter() - t_all, 1)},
        "results": results,
    }
    doc["checks"] = checks(doc)
    (out / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "RESULTS.md").write_text(render_markdown(doc))
    print(f"wrote {out / 'results.json'} and {out / 'RESULTS.md'} ({doc['wall_seconds']['total']} s)")
    for c in doc["checks"]:
        print(f"  {'PASS' if c['pass'] else 'FAIL'}  {c['name']}: {c['value']} (target {c['target']})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
