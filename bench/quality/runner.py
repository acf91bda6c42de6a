"""One evaluation run: one llama.cpp server, raw and Kestrel side by side on the same tasks."""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

from . import data, raw, scoring
from .data import Task
from .lsp import KestrelSession
from .summary import summarize

N_CTX = 4096  # the whole HumanEval prompt + solution fits; Kestrel windows its own prompt anyway
# With the Copilot peer on real files (the language sets): Copilot budgets its own prompt for a larger
# window (up to ~8k of its tokens, most of it suffix) and llama.cpp refuses a longer prompt than
# n_ctx, so the server gets room for it. A prompt that fits is answered the same either way.
N_CTX_COPILOT_LANGUAGES = 16384


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def resolve(model_path: str | None) -> Any:
    from kestrel.local.models import resolve_model

    return resolve_model(model_path, allow_download=False)


def plan_tasks(sizes: dict[str, int] | None, sets: tuple[str, ...] = data.SETS, limit: int | None = None,
               seed: int = data.SAMPLE_SEED) -> tuple[dict[str, list[Task]], dict[str, int]]:
    everything = data.all_sets()
    counts = {name: len(tasks) for name, tasks in everything.items()}
    chosen = data.sample({k: v for k, v in everything.items() if k in sets}, sizes, seed)
    if limit is not None:
        chosen = {k: v[:limit] for k, v in chosen.items()}
    return chosen, counts


async def _one(task: Task, placement: str, system: str, rawc: raw.RawFim, kest: KestrelSession,
               scorer: scoring.Scorer, peers: dict[str, Any] | None = None) -> dict[str, Any]:
    t = task.placed(placement)
    if system == "raw":
        ans = await rawc.complete(t.prefix, t.suffix, single_line=task.set == "single-line")
        document = scoring.editor_text(t, ans.text)
        extra = {"finish": ans.finish, "tokens": ans.tokens}
        text, latency = ans.text, ans.latency_ms
    else:
        session = kest if system == "kestrel" else (peers or {})[system]
        lsp_ans = await session.complete(task.problem.entry_point, t.prefix, t.suffix)
        document = lsp_ans.document
        extra = {"replaced": lsp_ans.replaced}
        if lsp_ans.error:
            extra["error"] = lsp_ans.error
        text, latency = lsp_ans.text, lsp_ans.latency_ms
    outcome = await scorer.document(t, document)
    return {"text": text, "shown": text != "", "passed": outcome.passed, "result": outcome.result,
            "latency_ms": round(latency, 1), **extra}


async def evaluate(
    tasks: dict[str, list[Task]],
    *,
    model_path: str | None,
    logs: Path,
    placements: tuple[str, ...] = data.PLACEMENTS,
    timeout: float = scoring.TIMEOUT_S,
    kestrel_src: str | None = None,
    peers: tuple[str, ...] = (),
    progress: Callable[[str], None] = _say,
    lang: dict[str, dict[str, list[Any]]] | None = None,
    speculative: bool = True,
) -> dict[str, Any]:
    """Run every task at every placement through raw, Kestrel and the `peers` ("copilot"), then
    the TypeScript / JavaScript / Go / Rust tasks in `lang` (lang_runner); return the records."""
    from kestrel.local.runtime import LocalModelServer

    model = resolve(model_path)
    name = model.name
    fim_template = None if "qwen" in name.lower() else "qwen"  # raw uses Qwen's FIM tokens: keep both equal
    n_ctx = N_CTX_COPILOT_LANGUAGES if lang and "copilot" in peers else N_CTX
    server = LocalModelServer(model, n_ctx=n_ctx, require_key=False, speculative=speculative)  # raw clients and other commits' Kestrel connect keyless
    t_start = time.perf_counter()
    progress(f"quality: starting llama.cpp with {model.path} ...")
    await server.start()
    rawc = raw.RawFim(server.base_url, name)
    kest = KestrelSession(server.base_url, name, logs / "quality-server.log", fim_template, kestrel_src)
    scorer = scoring.Scorer(timeout)
    records: list[dict[str, Any]] = []
    sessions: dict[str, Any] = {}
    systems = ("raw", "kestrel", *peers)
    try:
        await kest.start()
        if "copilot" in peers:
            from .copilot import CopilotSession

            progress("quality: starting Copilot's language server against the stand-in ...")
            sessions["copilot"] = CopilotSession(server.base_url, name, logs)
            await sessions["copilot"].start()
        # Warm-up (not measured): the first request of each path pays one-time costs.
        warm = data.single_line(data.load_problems()[:1])[0]
        await rawc.complete(warm.prefix, warm.suffix, single_line=True)
        await kest.complete("warmup", warm.prefix, warm.suffix)
        for session in sessions.values():
            await session.complete("warmup", warm.prefix, warm.suffix)
        total = sum(len(v) for v in tasks.values()) * len(placements)
        done = 0
        t_loop = time.perf_counter()
        for set_name, set_tasks in tasks.items():
            for k, task in enumerate(set_tasks):
                # llama.cpp reuses the longest common prefix with the previous prompt. Each system
                # asks for both placements of a task back to back (the second reuses the first's
                # prefix up to the cursor); which placement and which system go first alternate
                # task by task, so neither system nor placement is favoured.
                order_p = placements if k % 2 == 0 else tuple(reversed(placements))
                r = (k // 2) % len(systems)  # two systems: raw first, then kestrel first, ...
                order_s = systems[r:] + systems[:r]
                recs = {pl: {"set": set_name, "task_id": task.task_id, "placement": pl,
                             "expected": task.placed(pl).middle, "first": f"{order_s[0]}/{order_p[0]}"}
                        for pl in placements}
                # A random span that starts mid-line has no indentation to move: the two placements
                # are the same document, asked once (greedy: the same answer); latency counts it once.
                docs = {pl: (task.placed(pl).prefix, task.placed(pl).suffix) for pl in placements}
                same = {pl: next(q for q in order_p if docs[q] == docs[pl]) for pl in placements}
                for system in order_s:
                    for placement in order_p:
                        if same[placement] != placement:
                            continue
                        recs[placement][system] = await _one(task, placement, system, rawc, kest, scorer,
                                                             sessions)
                for placement in placements:
                    if same[placement] != placement:
                        recs[placement].update(reused_from=same[placement],
                                               **{s: recs[same[placement]][s] for s in systems})
                for placement in placements:
                    records.append(recs[placement])
                    done += 1
                    if done % 20 == 0 or done == total:
                        el = time.perf_counter() - t_loop
                        progress(f"quality: {done}/{total} ({set_name}) {el:.0f}s elapsed, "
                                 f"~{el / done * (total - done):.0f}s left")
        lang_records: list[dict[str, Any]] = []
        lang_seconds = 0.0
        if lang:
            from . import lang_runner

            t_lang = time.perf_counter()
            lang_records = await lang_runner.evaluate(lang, systems, rawc, {"kestrel": kest, **sessions}, progress)
            lang_seconds = time.perf_counter() - t_lang
        upstream = {n: s.upstream_stats() for n, s in sessions.items()}
    finally:
        for session in sessions.values():
            try:
                await session.stop()
            except Exception as exc:
                progress(f"quality: stopping a peer failed: {type(exc).__name__}: {exc}")
        await kest.stop()
        await rawc.close()
        await server.stop()
    return {
        "model": name,
        "model_path": str(model.path),
        "model_source": model.source,
        "records": records,
        "lang_records": lang_records,
        "n_ctx": n_ctx,
        "lang_seconds": round(lang_seconds, 1),
        "score_runs": scorer.runs,
        "wall_seconds": round(time.perf_counter() - t_start, 1),
        **({"peers_upstream": upstream} if sessions else {}),
    }


def kestrel_source(kestrel_src: str | None) -> dict[str, Any]:
    """Which Kestrel was measured: the working tree (its commit, and whether it had local
    changes) or another source directory."""
    import subprocess

    if kestrel_src:
        return {"source": str(kestrel_src)}
    repo = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    dirty = git("status", "--porcelain", "--", "pyserver")
    return {"source": "working tree", "commit": git("rev-parse", "--short", "HEAD"),
            "uncommitted_changes_in_pyserver": bool(dirty) if dirty is not None else None}


def peers_info(peers: tuple[str, ...], out: dict[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] = {}
    if "copilot" in peers:
        from bench.peers import copilot

        info["copilot"] = {"package": f"{copilot.PACKAGE}@{copilot.VERSION}",
                           "network": os.environ.get("KESTREL_QUALITY_NETNS") or "not isolated",
                           "upstream": (out.get("peers_upstream") or {}).get("copilot")}
    return info


def machine() -> dict[str, Any]:
    cpu = None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(), "platform": platform.platform()}


async def run(
    *,
    sizes: dict[str, int] | None,
    model_path: str | None = None,
    logs: Path,
    sets: tuple[str, ...] = data.SETS,
    placements: tuple[str, ...] = data.PLACEMENTS,
    limit: int | None = None,
    seed: int = data.SAMPLE_SEED,
    timeout: float = scoring.TIMEOUT_S,
    label: str = "sample",
    kestrel_src: str | None = None,
    peers: tuple[str, ...] = (),
    languages: tuple[str, ...] = (),
    lang_full: bool = False,
    lang_sets: tuple[str, ...] = ("line", "block"),
    speculative: bool = True,
) -> dict[str, Any]:
    """Plan, evaluate, summarize. The result has `records` (per task) next to the summary, and
    with `languages` a `languages` part (its own summary and records)."""
    tasks, counts = plan_tasks(sizes, sets, limit, seed)
    lang, lang_counts = {}, {}
    if languages:
        from . import lang_sources, lang_tasks

        lang, lang_counts = lang_tasks.plan(languages, lang_tasks.FULL_SAMPLE if lang_full else lang_tasks.DEFAULT_SAMPLE,
                                            lang_sources.packages(languages), limit)
        lang = {lg: {k: v for k, v in sets_.items() if k in lang_sets} for lg, sets_ in lang.items()}
    source = kestrel_source(kestrel_src)  # before the run: the code the server process loads
    out = await evaluate(tasks, model_path=model_path, logs=logs, placements=placements, timeout=timeout,
                         kestrel_src=kestrel_src, peers=peers, lang=lang, speculative=speculative)
    doc = {
        "run": label,
        "model": out["model"],
        "model_path": out["model_path"],
        "config": {
            "sample": {k: len(v) for k, v in tasks.items()},
            "full": sizes is None and limit is None,
            "sample_seed": seed,
            "speculative": speculative,
            "random_span_seed": data.RANDOM_SPAN_SEED,
            "placements": list(placements),
            "raw_caps": {"single-line": raw.SINGLE_LINE_CAP, "multi-line": raw.MULTI_LINE_CAP,
                         "random-span": raw.MULTI_LINE_CAP},
            "raw_stop": raw.MODEL_STOPS,
            "timeout_s": timeout,
            "n_ctx": out["n_ctx"],
            "temperature": 0,
            "kestrel": source,
            **({"peers": list(peers)} if peers else {}),
        },
        "counts": counts,
        "counts_expected": data.EXPECTED_COUNTS,
        "machine": machine(),
        "wall_seconds": out["wall_seconds"],
        **({"peers": peers_info(peers, out)} if peers else {}),
        **summarize(out["records"], placements),
        "records": out["records"],
    }
    if languages:
        doc["languages"] = languages_doc(languages, lang, lang_counts, out["lang_records"], lang_full, limit)
        doc["languages"]["wall_seconds"] = out["lang_seconds"]
    return doc


def languages_doc(languages: tuple[str, ...], lang: dict[str, Any], counts: dict[str, Any],
                  records: list[dict[str, Any]], full: bool, limit: int | None) -> dict[str, Any]:
    from dataclasses import asdict

    from . import lang_sources, lang_summary, lang_tasks

    sizes = lang_tasks.FULL_SAMPLE if full else lang_tasks.DEFAULT_SAMPLE
    return {
        "languages": list(languages),
        "config": {"sample": sizes, "full": full, "limit": limit, "seed": lang_tasks.SAMPLE_SEED,
                   "asked": {lg: {k: len(v) for k, v in sets.items()} for lg, sets in lang.items()},
                   "raw_caps": {"line": raw.SINGLE_LINE_CAP, "block": raw.MULTI_LINE_CAP},
                   "raw_window": {"prefix_tokens": lang_tasks.RAW_PREFIX_TOKENS,
                                  "suffix_tokens": lang_tasks.RAW_SUFFIX_TOKENS},
                   "useful": lang_summary.lang_scoring.USEFUL, "noise": lang_summary.lang_scoring.NOISE},
        "packages": [{k: v for k, v in asdict(p).items() if k not in ("notes", "include", "exclude")}
                     for p in lang_sources.packages(languages)],
        "counts": counts,
        **lang_summary.summarize(records),
        "records": records,
    }
