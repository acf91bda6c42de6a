"""How well the model's own probability of a line it wrote separates right lines from noise: the
data behind `completion.minLineProbability` (docs/design-notes.md#pyserverkestrelcompletionconfidencepy).

    python -m bench.quality.confidence_study --out FILE [--languages go] [--dev 40] [--model-path GGUF]
    python -m bench.quality.confidence_study --report FILE [--floor 0.05]

For each line task of the languages sample (`eval`) and `--dev` line tasks drawn at random from the
candidates outside it (`dev`: where a floor is chosen), the raw model's FIM prompt (lang_tasks.raw_window)
is answered greedily in process (the launcher's model class), each step's logits read by a logits
processor; the first line is scored as the languages eval scores raw (lang_scoring). The report gives
AUCs and what a floor on the line's summed log probability would hide, per split."""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any


def tasks(languages: tuple[str, ...], n_dev: int) -> list[tuple[str, Any]]:
    from . import lang_sources, lang_tasks

    out: list[tuple[str, Any]] = []
    pkgs = lang_sources.packages(languages)
    for language in languages:
        cands = lang_tasks.candidates(language, pkgs, None, lang_tasks.SAMPLE_SEED)
        sample = lang_tasks.sample(cands, lang_tasks.DEFAULT_SAMPLE, lang_tasks.SAMPLE_SEED)["line"]
        seen = {t.task_id for t in sample}
        pool = [t for sets in cands.by_package.values() for t in sets.get("line", []) if t.task_id not in seen]
        out += [("eval", t) for t in sample] + [("dev", t) for t in random.Random(4242).sample(pool, min(n_dev, len(pool)))]
    return out


def study(languages: tuple[str, ...], n_dev: int, model_path: str | None, out: Path) -> None:
    import numpy as np
    from llama_cpp import LogitsProcessorList

    from kestrel.local.last_logits import LastTokenLogitsLlama

    from . import lang_scoring, lang_tasks, raw
    from .runner import N_CTX, resolve

    llm = LastTokenLogitsLlama(str(resolve(model_path).path), n_ctx=N_CTX, logits_all=True, verbose=False)
    steps: list[tuple[int, float]] = []

    def keep(_ids: Any, scores: Any) -> Any:  # each step: the most likely token and its log probability
        s = scores.astype(np.float64)
        peak = s.max()
        steps.append((int(s.argmax()), float(peak - (peak + np.log(np.exp(s - peak).sum())))))
        return scores

    records: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    todo = tasks(languages, n_dev)
    for i, (split, t) in enumerate(todo):
        steps.clear()
        p, s = lang_tasks.raw_window(t.prefix, t.suffix)
        choice = llm.create_completion(raw.fim_prompt(p, s), max_tokens=raw.SINGLE_LINE_CAP, temperature=0,
                                       repeat_penalty=1.0, stop=["\n", *raw.MODEL_STOPS],
                                       logits_processor=LogitsProcessorList([keep]))["choices"][0]
        answer = choice["text"] + ("\n" if choice["finish_reason"] == "stop" else "")
        scores = lang_scoring.score(t.language, t.prefix, t.truth, t.suffix, t.prefix + answer + t.suffix, answer)
        toks = [{"tok": llm.detokenize([tok]).decode("utf-8", "replace"), "lp": round(lp, 4)} for tok, lp in steps]
        records.append({"split": split, "language": t.language, "task_id": t.task_id, "expected": t.truth,
                        "text": choice["text"], "tokens": toks, **scores})
        if i % 10 == 9:
            print(f"confidence study: {i + 1}/{len(todo)} {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    out.write_text(json.dumps({"languages": list(languages), "records": records}, indent=1) + "\n")


def line_logprob(record: dict[str, Any]) -> float:
    """The first line's log probability as the server takes it (confidence.first_line_logprob)."""
    from kestrel.completion.confidence import first_line_logprob

    logprob = first_line_logprob([(t["tok"], {t["tok"]: t["lp"]}) for t in record["tokens"]])
    assert logprob is not None  # every recorded token carries its own figure
    return logprob


def auc(pos: list[float], neg: list[float]) -> float:
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / max(1, len(pos) * len(neg))


def report(path: Path, floor: float) -> None:
    records = json.loads(path.read_text())["records"]
    for key in sorted({(r["language"], r["split"]) for r in records}):
        rs = [r for r in records if (r["language"], r["split"]) == key and r["shown"]]
        lp = {id(r): line_logprob(r) for r in rs}
        hid = [r for r in rs if lp[id(r)] < math.log(floor)]
        kept = [r for r in rs if lp[id(r)] >= math.log(floor)]
        n = lambda xs, k: sum(bool(r[k]) for r in xs)  # noqa: E731
        print(f"{key[0]} {key[1]} ({len(rs)} lines): AUC exact {auc([lp[id(r)] for r in rs if r['exact']], [lp[id(r)] for r in rs if not r['exact']]):.2f}, "
              f"not noise {auc([lp[id(r)] for r in rs if not r['noise']], [lp[id(r)] for r in rs if r['noise']]):.2f}; "
              f"under {floor:g}: {len(hid)} hidden (exact {n(hid, 'exact')}, useful {n(hid, 'useful')}, noise {n(hid, 'noise')}); "
              f"precision {n(rs, 'exact') / max(1, len(rs)):.1%} -> {n(kept, 'exact') / max(1, len(kept)):.1%}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.quality.confidence_study", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path)
    p.add_argument("--report", type=Path)
    p.add_argument("--languages", default="go")
    p.add_argument("--dev", type=int, default=40)
    p.add_argument("--floor", type=float, default=0.05)
    p.add_argument("--model-path", default=None)
    a = p.parse_args(argv)
    if a.report:
        report(a.report, a.floor)
        return 0
    if not a.out:
        p.error("--out or --report")
    study(tuple(a.languages.split(",")), a.dev, a.model_path, a.out)
    report(a.out, a.floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
