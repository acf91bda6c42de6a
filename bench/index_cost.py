"""python -m bench.index_cost: what the workspace index costs (issue 23), on real code.

The workspace is the repository set's pinned packages (bench/repo_context/packages.toml, 2025-26 PyPI
releases; downloaded once). Measured in this process, one after the other:
- the background scan (every Python file outlined) of a ~100k-line workspace (the packages taken in
  manifest order until 100k lines) and of all of them: seconds, files, lines, the memory the outlines
  hold (tracemalloc, after the scan) and the process RSS growth;
- resolving one file's imports after the scan (what a completion may wait for when a file opens),
  over the repository set's files: p50/p95 in milliseconds;
- selecting the context for a request from resolved imports (on the keystroke path): p50/p95.
Writes bench/out/index-cost.json and prints a table.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "pyserver"))

from kestrel.context.python_outline import import_statements, imported_names  # noqa: E402
from kestrel.context.repository import RepositoryContext, _resolve  # noqa: E402
from kestrel.context.window import prefix_window  # noqa: E402
from kestrel.context.workspace_index import WorkspaceIndex  # noqa: E402

from bench.common import rss_mb, summary  # noqa: E402
from bench.repo_context import sources, tasks  # noqa: E402


def scan_cost(roots: list[Path]) -> dict:
    gc.collect()
    rss0 = rss_mb(os.getpid())
    tracemalloc.start()
    index = WorkspaceIndex()
    index.set_roots([str(r) for r in roots])
    cost = index.scan()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    cost.update(held_mb=round(held / 1e6, 1), rss_growth_mb=round(rss_mb(os.getpid()) - rss0, 1),
                seconds=round(cost["seconds"], 2))
    return cost


def main() -> None:
    roots = sources.ensure_all()
    counted = {name: sum(p.read_text(errors="replace").count("\n") for p in root.rglob("*.py"))
               for name, root in roots.items()}
    subset, lines = [], 0
    for name in sorted(roots, key=counted.__getitem__):  # smallest first, until ~100k lines
        if lines >= 100_000:
            break
        subset.append(name)
        lines += counted[name]
    results = {"packages": counted, "subset": subset,
               "scan_100k": scan_cost([roots[n] for n in subset]),
               "scan_all": scan_cost(list(roots.values()))}
    index = WorkspaceIndex()
    index.set_roots([str(r) for r in roots.values()])
    index.scan()
    ctx = RepositoryContext(index)
    resolve_ms, select_ms = [], []
    for task in tasks.sample(tasks.candidates(roots), 48):
        path = (roots[task.package] / task.path).resolve()
        t0 = time.perf_counter()
        resolved = _resolve(index, path, imported_names(task.prefix + task.suffix))
        resolve_ms.append((time.perf_counter() - t0) * 1000)
        window = prefix_window(task.prefix, 1500)
        t0 = time.perf_counter()
        ctx._select(resolved, import_statements, window, 2100)
        select_ms.append((time.perf_counter() - t0) * 1000)
    for key, values in (("resolve_ms", resolve_ms), ("select_ms", select_ms)):
        results[key] = summary(values, 2)
    out = BENCH / "out" / "index-cost.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    for key in ("scan_100k", "scan_all"):
        c = results[key]
        print(f"{key:10s} {c['files']:5d} files {c['lines']:7d} lines  {c['seconds']:6.2f} s  "
              f"outlines held {c['held_mb']} MB  RSS +{c['rss_growth_mb']} MB")
    for key in ("resolve_ms", "select_ms"):
        print(f"{key:10s} p50 {results[key]['p50']} ms  p95 {results[key]['p95']} ms  (n={results[key]['n']})")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
