"""BFCL's function-calling questions and its own AST checker, from the `bfcl-eval` wheel on PyPI.

The wheel (pinned, sha256-checked) is downloaded with `pip download --no-deps` into the eval cache
(bench.quality.lang_sources.cache_dir()) and unpacked there; nothing is installed. Its questions
(`data/BFCL_v4_<category>.json`), possible answers and `ast_checker` are used as BFCL uses them. The
checker's module imports BFCL's model registry (every vendor's SDK) only to know which models write
`a.b` as `a_b`; a stand-in registry says "none" (names here are mapped back before checking)."""

from __future__ import annotations

import json
import random
import sys
import types
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from bench.quality.lang_sources import cache_dir, pip_download, unpacked_once

WHEEL = "bfcl-eval==2026.3.23"
WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
CATEGORIES = ("simple_python", "multiple")  # one function offered / several, one call expected
SAMPLE = 100  # per category (seeded); --full: all (400 + 200)
SEED = 2026


@dataclass(frozen=True)
class Question:
    id: str
    category: str
    messages: list[dict[str, str]]
    functions: list[dict[str, Any]]
    answer: list[dict[str, Any]]  # BFCL's possible answers


def root() -> Path:
    """The unpacked wheel (downloaded and unpacked on first use)."""
    cache = cache_dir()
    wheel = pip_download(WHEEL, cache / "downloads" / "bfcl-eval-2026.3.23.whl", WHEEL_SHA256, binary=True,
                         program="bench.tool_calls")

    def unpack(out: Path) -> None:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                if info.filename.startswith("bfcl_eval/") and ".." not in info.filename.split("/") and not info.is_dir():
                    target = out / info.filename
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(zf.read(info))

    return unpacked_once(cache / "src" / "bfcl-eval-2026.3.23", WHEEL_SHA256, unpack)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def questions(categories: tuple[str, ...] = CATEGORIES, sample: int | None = SAMPLE, seed: int = SEED) -> list[Question]:
    data = root() / "bfcl_eval" / "data"
    out: list[Question] = []
    for cat in categories:
        answers = {a["id"]: a["ground_truth"] for a in _jsonl(data / "possible_answer" / f"BFCL_v4_{cat}.json")}
        rows = _jsonl(data / f"BFCL_v4_{cat}.json")
        if sample is not None and sample < len(rows):
            rows = sorted(random.Random(f"{seed}-{cat}").sample(rows, sample), key=lambda r: int(r["id"].rsplit("_", 1)[1]))
        out += [Question(r["id"], cat, r["question"][0], r["function"], answers[r["id"]]) for r in rows]
    return out


def checker() -> Callable[[Question, list[dict[str, Any]]], tuple[bool, str]]:
    """BFCL's AST checker for one question: (valid, why not)."""
    base = str(root())
    if base not in sys.path:
        sys.path.insert(0, base)
    registry = types.ModuleType("bfcl_eval.constants.model_config")
    registry.MODEL_CONFIG_MAPPING = {"kestrel-eval": types.SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
    sys.modules.setdefault("bfcl_eval.constants.model_config", registry)
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    def check(q: Question, calls: list[dict[str, Any]]) -> tuple[bool, str]:
        if not calls:
            return False, "no call"
        got = ast_checker(q.functions, calls, q.answer, Language.PYTHON, q.category, "kestrel-eval")
        return bool(got["valid"]), "; ".join(str(e) for e in got.get("error", []))[:300]

    return check
