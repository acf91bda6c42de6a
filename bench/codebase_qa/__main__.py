"""python -m bench.codebase_qa [--projects requests,flask] [--no-scale] [--kestrel-src DIR] [--report-only]

Codebase-Q&A retrieval (issue 28): Kestrel's workspace index asked SWE-QA's questions about three
Python projects and the subjects of their commits, at the released versions nearest SWE-QA's
pinned commits (packages.toml). For each question three rankings of the workspace's files (files
in the order their best chunk ranks): lexical (BM25 over syntax-bounded chunks), symbols (the
definitions of the names the question spells) and the fusion Kestrel's chat uses. Scores: cited-file
recall@5 / @10 and MRR (the reference files: those the reference answer names, or the commit changed),
paired fusion − lexical margins; the cost of indexing each project; the time to the sources a chat
turn shows (search + budget, p50/p95). --scale adds a large workspace (the eval's own environment:
the venv's site-packages and node_modules, ~12k files): index time, memory, database size, the time to
sources and to re-index one saved file. Writes bench/out/codebase-qa.json and bench/CODEBASE.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
SYSTEMS = ("lexical", "symbols", "fusion")
TOP = 50  # chunks asked of each ranking (the files they hold are ranked)
CHAT_BUDGET_TOKENS = (1200, 6000)  # the embedded model's and a remote model's (config.py)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.codebase_qa", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--projects", default="", help="comma-separated names from packages.toml (default all)")
    p.add_argument("--no-scale", action="store_true", help="skip the large-workspace measurement")
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--out", default=str(BENCH / "out" / "codebase-qa.json"))
    p.add_argument("--md", default=str(BENCH / "CODEBASE.md"))
    p.add_argument("--report-only", action="store_true", help="re-render the markdown from the JSON")
    return p.parse_args(argv)


def _kestrel(src: str | None):
    if src:
        sys.path.insert(0, str(Path(src).resolve()))
    for name in [m for m in sys.modules if m == "kestrel" or m.startswith("kestrel.")]:
        del sys.modules[name]
    index_mod = importlib.import_module("kestrel.context.codebase_index")
    workspace_mod = importlib.import_module("kestrel.context.workspace_index")
    codebase_mod = importlib.import_module("kestrel.chat.codebase")
    return index_mod, workspace_mod, codebase_mod


def rss_mb() -> float:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def ranked_files(hits) -> list[str]:
    return list(dict.fromkeys(h.path for h in hits))


def score(files: list[str], refs: tuple[str, ...]) -> dict[str, float]:
    refs_set = set(refs)
    first = next((i + 1 for i, f in enumerate(files) if f in refs_set), None)
    return {"recall5": len(refs_set & set(files[:5])) / len(refs_set),
            "recall10": len(refs_set & set(files[:10])) / len(refs_set),
            "mrr": 1.0 / first if first else 0.0}


def open_index(index_mod, workspace_mod, roots: list[Path], cache: Path | None):
    workspace = workspace_mod.WorkspaceIndex()
    workspace.set_roots([str(r) for r in roots])
    return index_mod.CodebaseIndex(workspace, cache)


def reindex_ms(index, path: Path, times: int = 5) -> float:
    original = path.read_bytes()
    took = []
    try:
        for n in range(times):
            path.write_bytes(original + f"\n# edit {n}\n".encode())
            started = time.perf_counter()
            index.file_changed(path)
            took.append((time.perf_counter() - started) * 1000)
    finally:
        path.write_bytes(original)
        index.file_changed(path)
    return statistics.median(took)


def measure_project(mods, project, root: Path, questions: list) -> dict:
    index_mod, workspace_mod, codebase_mod = mods
    with tempfile.TemporaryDirectory() as cache:
        before = rss_mb()
        index = open_index(index_mod, workspace_mod, [root], Path(cache))
        cost = index.refresh()
        cost["rssMb"] = round(rss_mb() - before, 1)
        cost["dbMb"] = round(sum(f.stat().st_size for f in Path(cache).iterdir()) / 2**20, 2)
        largest = max((root / "src").rglob("*.py") if (root / "src").is_dir() else root.rglob("*.py"),
                      key=lambda p: p.stat().st_size)
        cost["reindexMs"] = round(reindex_ms(index, largest), 1)
        cost["reindexFile"] = largest.relative_to(root).as_posix()
        records, timings = [], {"search": [], "sources": [], "sourcesRemote": []}
        for q in questions:
            rec = {"id": q.id, "kind": q.kind, "question": q.question, "files": list(q.files), "systems": {}}
            for system in SYSTEMS:
                started = time.perf_counter()
                hits = {"lexical": index.lexical, "symbols": index.symbols, "fusion": index.search}[system](q.question, TOP)
                if system == "fusion":
                    timings["search"].append((time.perf_counter() - started) * 1000)
                files = ranked_files(hits)
                rec["systems"][system] = {**score(files, q.files), "top": files[:10]}
            for key, budget in zip(("sources", "sourcesRemote"), CHAT_BUDGET_TOKENS):
                started = time.perf_counter()
                picked = codebase_mod.gather(index, q.question, budget)
                timings[key].append((time.perf_counter() - started) * 1000)
                if key == "sources":
                    rec["sources"] = [f"{s.path}:{s.start + 1}-{s.end + 1}" for s in picked]
                    rec["sourcesHit"] = any(s.path in q.files for s in picked)
            records.append(rec)
        index.close()
    return {"project": project.name, "version": project.version, "index": cost, "records": records,
            "timings": {k: {"p50": round(pct(v, 0.5), 1), "p95": round(pct(v, 0.95), 1)} for k, v in timings.items()}}


def measure_scale(mods, questions: list) -> dict | None:
    index_mod, workspace_mod, codebase_mod = mods
    roots = [r for r in (Path(sys.prefix) / "lib").glob("python3*/site-packages")] + [REPO / "node_modules"]
    roots = [r for r in roots if r.is_dir()]
    if not roots:
        return None
    # The saved file re-indexed is a copy in a scratch folder of the workspace: the environment's own
    # files are never edited.
    source = max((p for p in roots[0].rglob("*.py") if p.stat().st_size < 200_000), key=lambda p: p.stat().st_size)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as scratch:
        edited = Path(scratch) / source.name
        edited.write_bytes(source.read_bytes())
        before = rss_mb()
        index = open_index(index_mod, workspace_mod, [*roots, Path(scratch)], Path(cache))
        cost = index.refresh()
        cost["rssMb"] = round(rss_mb() - before, 1)
        cost["dbMb"] = round(sum(f.stat().st_size for f in Path(cache).iterdir()) / 2**20, 1)
        again = time.perf_counter()
        index.refresh()
        cost["refreshUnchangedS"] = round(time.perf_counter() - again, 2)
        cost["reindexMs"] = round(reindex_ms(index, edited), 1)
        cost["reindexFile"] = f"{source.name} ({source.stat().st_size // 1024} KB)"
        took = []
        for q in questions:
            started = time.perf_counter()
            codebase_mod.gather(index, q.question, CHAT_BUDGET_TOKENS[1])
            took.append((time.perf_counter() - started) * 1000)
        index.close()
    return {"roots": [str(r.relative_to(REPO)) if REPO in r.parents else str(r) for r in roots], "index": cost,
            "sources": {"p50": round(pct(took, 0.5), 1), "p95": round(pct(took, 0.95), 1), "n": len(took)}}


def paired(a: list[float], b: list[float]) -> tuple[float, float, float]:
    diffs = [x - y for x, y in zip(a, b)]
    mean = statistics.fmean(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
    return mean, mean - half, mean + half


def render(result: dict) -> str:
    from .report import markdown

    return markdown(result)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out = Path(args.out)
    if args.report_only:
        result = json.loads(out.read_text())
    else:
        from . import sources, tasks

        mods = _kestrel(args.kestrel_src)
        wanted = {p for p in args.projects.split(",") if p}
        projects = [p for p in sources.load_manifest() if not wanted or p.name in wanted]
        started = time.perf_counter()
        runs, everything = [], []
        for project in projects:
            root = sources.workspace(project)
            questions = tasks.swe_qa(project.name, root) + tasks.commits(project.name, root)
            everything.extend(questions)
            print(f"codebase qa: {project.name} {project.version}: {len(questions)} questions", file=sys.stderr, flush=True)
            runs.append(measure_project(mods, project, root, questions))
        scale = None if args.no_scale else measure_scale(mods, everything)
        result = {"projects": runs, "scale": scale, "wallSeconds": round(time.perf_counter() - started, 1),
                  "kestrel": args.kestrel_src or "installed", "cpus": os.cpu_count(),
                  "command": "python -m bench.codebase_qa " + " ".join(sys.argv[1:] if argv is None else argv)}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1))
    text = render(result)
    if args.md:
        from .report import answer_sections, with_answers

        Path(args.md).write_text(with_answers(text, answer_sections(Path(args.md))))
    print(text.split("\n## Per question")[0])


if __name__ == "__main__":
    main()
