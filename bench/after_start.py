"""`after_start`: on the embedded model, the first multi-line suggestions after a start, with what
completions learned about the endpoint remembered from an earlier start (`completion.rememberEndpoints`)
and without (every start learns the model's ending habit again, keeping its first multi-line streams
to their end before answering).

Sessions alternate between the arms: each is a new `kestrel-lsp` with its own embedded llama.cpp child,
one untimed single-line request while the model loads, then the same function bodies in the same order,
each a new document (the cursor on the empty first line of the body: a multi-line suggestion). The same
positions are compared across arms (paired by session round and position). Before the first timed
session one untimed session with the setting on makes sure the store knows this model, as after a
user's first day. Reported: p50/p95 per arm over the learning window (the first `MIN_SEEN` multi-line
suggestions) and over all, the per-position medians, and how many shown texts were the same.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from .common import summary
from .next_suggestion import _document, start_embedded

ARMS = (("remembered", True), ("learning", False))


async def _session(remember: bool, positions: int, log: Any) -> list[dict[str, Any]]:
    client = await start_embedded({"rememberEndpoints": remember}, log)
    try:
        rows = []
        for k in range(positions):
            uri = f"file:///bench/after_start_{k}.py"
            text, line, ch = _document(k)
            client.open(text, uri)
            t0 = time.perf_counter()
            shown = await client.inline(line, ch, uri)
            rows.append({"ms": (time.perf_counter() - t0) * 1000, "text": shown or ""})
            await asyncio.sleep(0.3)  # a user reads; a watched stream or a prepared one may run meanwhile
        return rows
    finally:
        await client.stop()


async def run(rounds: int, positions: int, logs: Path) -> dict[str, Any]:
    from kestrel.completion.ending import MIN_SEEN
    from kestrel.local.models import runtime_available

    if not runtime_available():
        return {"skipped": "llama-cpp-python is not installed"}
    runs: dict[str, list[list[dict[str, Any]]]] = {name: [] for name, _ in ARMS}
    with open(logs / "server.log", "ab") as log:
        await _session(True, positions, log)  # the store learns this model (untimed)
        for r in range(rounds):
            order = ARMS if r % 2 == 0 else ARMS[::-1]
            for name, remember in order:
                runs[name].append(await _session(remember, positions, log))
    window = min(MIN_SEEN, positions)
    out: dict[str, Any] = {"rounds": rounds, "positions": positions, "learning_window": window, "arms": {}}
    for name, sessions in runs.items():
        out["arms"][name] = {
            "first_window_ms": summary([row["ms"] for s in sessions for row in s[:window]]),
            "all_ms": summary([row["ms"] for s in sessions for row in s]),
            "per_position_p50_ms": [round(statistics.median(s[k]["ms"] for s in sessions), 1) for k in range(positions)],
            "shown": sum(bool(row["text"]) for s in sessions for row in s),
        }
    pairs = [(a["text"], b["text"]) for sa, sb in zip(runs["remembered"], runs["learning"]) for a, b in zip(sa, sb)]
    out["same_text"], out["pairs"] = sum(a == b for a, b in pairs), len(pairs)
    ratios = [a["ms"] / b["ms"] for sa, sb in zip(runs["remembered"], runs["learning"])
              for a, b in zip(sa[:window], sb[:window]) if b["ms"] > 0]
    out["first_window_median_ratio"] = round(statistics.median(ratios), 3) if ratios else None
    out["texts"] = {name: [[row["text"] for row in s] for s in sessions] for name, sessions in runs.items()}
    out["session_ms"] = {name: [[round(row["ms"], 1) for row in s] for s in sessions] for name, sessions in runs.items()}
    a, b = out["arms"]["remembered"]["first_window_ms"], out["arms"]["learning"]["first_window_ms"]
    print(f"  first {window} multi-line suggestions after a start p50: remembered {a['p50']} ms, "
          f"learning {b['p50']} ms (median paired ratio {out['first_window_median_ratio']}); "
          f"same text {out['same_text']}/{out['pairs']}", flush=True)
    return out
