"""The TypeScript / JavaScript / Go / Rust tasks through every system, on the servers the Python
sets use (runner.evaluate starts them): raw (the model's FIM answer, see lang_tasks.raw_window),
Kestrel through LSP, and the peers. Each task is asked once per system; which system goes first
rotates task by task."""

from __future__ import annotations

import time
from pathlib import PurePosixPath
from typing import Any, Callable

from . import lang_scoring
from .lang_tasks import LangTask, raw_window


async def answer(task: LangTask, system: str, rawc: Any, sessions: dict[str, Any]) -> dict[str, Any]:
    """One system's answer to one task, scored."""
    prefix, truth, suffix = task.prefix, task.truth, task.suffix
    extra: dict[str, Any] = {}
    if system == "raw":
        p, s = raw_window(prefix, suffix)
        ans = await rawc.complete(p, s, single_line=task.set == "line")
        text, latency, document = ans.text, ans.latency_ms, prefix + ans.text + suffix
        extra = {"finish": ans.finish, "tokens": ans.tokens}
    else:
        name = PurePosixPath(task.path).name
        lsp = await sessions[system].complete(name, prefix, suffix, language=task.language, filename=name)
        text, latency, document = lsp.text, lsp.latency_ms, lsp.document
        extra = {"replaced": lsp.replaced, **({"error": lsp.error} if lsp.error else {})}
    scores = lang_scoring.score(task.language, prefix, truth, suffix, document, text)
    return {"text": text, "latency_ms": round(latency, 1), **scores, **extra}


async def evaluate(tasks: dict[str, dict[str, list[LangTask]]], systems: tuple[str, ...], rawc: Any,
                   sessions: dict[str, Any], progress: Callable[[str], None]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    total = sum(len(v) for sets in tasks.values() for v in sets.values())
    done = 0
    t0 = time.perf_counter()
    for language, sets in tasks.items():
        for set_name, set_tasks in sets.items():
            for k, task in enumerate(set_tasks):
                r = k % len(systems)
                order = systems[r:] + systems[:r]
                rec: dict[str, Any] = {"language": language, "set": set_name, "cursor": task.cursor,
                                       "task_id": task.task_id, "package": task.package, "path": task.path,
                                       "line": task.line, "expected": task.truth, "first": order[0]}
                for system in order:
                    rec[system] = await answer(task, system, rawc, sessions)
                records.append(rec)
                done += 1
                if done % 10 == 0 or done == total:
                    el = time.perf_counter() - t0
                    progress(f"quality: languages {done}/{total} ({language} {set_name}) {el:.0f}s elapsed, "
                             f"~{el / done * (total - done):.0f}s left")
    return records
