"""The benchmark suite runs end to end and writes well-formed results (no timing thresholds)."""

from __future__ import annotations

import json
import numbers
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _num(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def test_bench_quick_smoke(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--only", "cold_start,inline_added", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    assert (tmp_path / "RESULTS.md").read_text().startswith("# Kestrel benchmark results")

    assert {"machine", "config", "results", "checks", "wall_seconds"} <= doc.keys()
    for key in ("cpu_model", "cpu_count", "ram_gb", "python", "openai", "pygls", "date"):
        assert key in doc["machine"]
    assert set(doc["results"]) == {"cold_start", "inline_added"}

    inline = doc["results"]["inline_added"]
    assert {"chat", "fim", "responses", "responses-ws"} <= inline.keys()
    for kind, r in inline.items():
        assert "error" not in r, (kind, r)
        for series in ("lsp_ms", "sdk_ms", "added_ms", "noise_ms", "lsp_rtt_ms"):
            assert r[series]["n"] == doc["config"]["inline_samples"], (kind, series)
            assert _num(r[series]["p50"]) and _num(r[series]["p95"]), (kind, series, r[series])
        assert _num(r["ratio_p50"]) and _num(r["ratio_p95"])
        assert r["wrong_results_lsp"] == 0 and r["wrong_results_sdk"] == 0, (kind, r)

    cold = doc["results"]["cold_start"]
    for series in ("spawn_to_initialize_ms", "spawn_to_first_completion_ms"):
        assert cold[series]["n"] == doc["config"]["cold_runs"]
        assert _num(cold[series]["p50"]) and _num(cold[series]["p95"])

    assert all(isinstance(c["pass"], bool) and c["name"] and "target" in c for c in doc["checks"])


def test_bench_transports_quick_smoke(tmp_path: Path) -> None:
    """TLS mock behind the latency proxy: every transport answers (a few seconds in --quick)."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--only", "transports", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    tr = doc["results"]["transports"]
    assert "error" not in tr, tr
    for mode in ("new_conn_h1", "pool_h1", "pool_h2", "ws", "kestrel_chat", "kestrel_responses_ws"):
        m = tr["modes"][mode]
        assert m["wrong"] == 0, (mode, m)
        assert m["total_ms"]["n"] == doc["config"]["transport_samples"]
        assert _num(m["ttft_ms"]["p50"]) and _num(m["overhead_ms"]["p95"])
    assert tr["http_versions"] == {"new_conn_h1": "HTTP/1.1", "pool_h1": "HTTP/1.1", "pool_h2": "HTTP/2"}
    assert "## transports" in (tmp_path / "RESULTS.md").read_text()
    assert any(c["name"].startswith("transports:") for c in doc["checks"])


def test_the_next_suggestion_section_and_check_render() -> None:
    """`next_suggestion` needs the embedded model (minutes on 2 cores): its report and check are
    rendered here from a result of the shape it writes."""
    from bench.report import _next_suggestion_section, checks

    def case(p50: float) -> dict:
        return {"ms": {"n": 12, "p50": p50, "p95": p50 * 2}, "first_shown": 12, "next_shown": 11}

    result = {"read_s": 1.0, "samples": 12, "arms": {
        "prepared": {"accepted": case(40.0), "typed instead": case(900.0), "prepared_started": 24, "prepared_used": 11},
        "not prepared": {"accepted": case(800.0), "typed instead": case(850.0), "prepared_started": 0, "prepared_used": 0}}}
    doc = {"machine": {}, "config": {}, "benchmarks_run": ["next_suggestion"], "wall_seconds": {},
           "results": {"next_suggestion": result}}
    doc["checks"] = checks(doc)
    (check,) = [c for c in doc["checks"] if c["name"].startswith("next_suggestion")]
    assert check["value"] == 40.0 and check["pass"]
    md = "\n".join(_next_suggestion_section(doc))
    assert "| prepared | accepted | 12 | 40.0 | 80.0 | 11 |" in md and "24 prepared generations, 11 used (13 not needed)" in md
    result["arms"]["prepared"]["accepted"] = case(250.0)
    assert not [c for c in checks(doc) if c["name"].startswith("next_suggestion")][0]["pass"]
    result["arms"]["prepared"]["accepted"] = {**case(2.0), "next_shown": 0}  # fast because empty: not a pass
    assert not [c for c in checks(doc) if c["name"].startswith("next_suggestion")][0]["pass"]


def test_the_after_start_section_and_check_render() -> None:
    """`after_start` needs the embedded model: its report and check are rendered here from a result of
    the shape it writes; remembered slower than learning fails the check."""
    from bench.report import _after_start_section, checks

    def arm(first: float) -> dict:
        return {"first_window_ms": {"n": 12, "p50": first, "p95": first * 1.5},
                "all_ms": {"n": 20, "p50": first, "p95": first * 2},
                "per_position_p50_ms": [first, first, first, 900.0, 800.0], "shown": 20}

    result = {"rounds": 4, "positions": 5, "learning_window": 3, "same_text": 19, "pairs": 20,
              "first_window_median_ratio": 0.5, "arms": {"remembered": arm(1000.0), "learning": arm(2500.0)}}
    doc = {"machine": {}, "config": {}, "benchmarks_run": ["after_start"], "wall_seconds": {},
           "results": {"after_start": result}}
    (check,) = [c for c in checks(doc) if c["name"].startswith("after_start")]
    assert check["value"] == 0.4 and check["pass"]
    md = "\n".join(_after_start_section(doc))
    assert "| remembered | 1000 / 1500 | 1000 / 2000 | 1000, 1000, 1000, 900, 800 | 20 |" in md
    assert "Same text in 19 of 20 pairs" in md
    result["arms"]["remembered"] = arm(2600.0)
    assert not [c for c in checks(doc) if c["name"].startswith("after_start")][0]["pass"]


def test_the_first_at_spot_section_and_checks_render() -> None:
    """`first_at_spot` needs the embedded model: its places are found here, and its report and checks
    rendered from a result of the shape it writes."""
    from bench.first_at_spot import MOVED_LINES, places
    from bench.report import _first_at_spot_section, checks

    spots = places(3)
    assert len(spots) == 3 and len({p for p, _, _ in spots}) == 3
    for path, line, indent in spots:
        lines = path.read_text(encoding="utf-8").split("\n")
        assert lines[line][indent:].strip() and lines[line + MOVED_LINES].strip()

    def case(read: float, not_read: float, same: int = 12) -> dict:
        return {"read_ms": {"n": 12, "p50": read, "p95": read * 2}, "not_read_ms": {"n": 12, "p50": not_read, "p95": not_read * 2},
                "median_ratio": read / not_read, "same_text": same, "pairs": 12, "trials": {}}

    result = {"places": ["h2/x.py:41"] * 12, "read_aheads": 48, "read_aheads_used": 36, "wall_s": 290.0, "cases": {
        "pause 0.3 s": case(880, 1000), "pause 1.0 s": case(560, 1000), "pause 2.0 s": case(540, 950),
        "moved away": case(1450, 1500)}}
    doc = {"machine": {}, "config": {}, "benchmarks_run": ["first_at_spot"], "wall_seconds": {},
           "results": {"first_at_spot": result}}
    spot_checks = {c["name"]: c for c in checks(doc) if c["name"].startswith("first_at_spot")}
    assert [c["pass"] for c in spot_checks.values()] == [True, True, True]
    md = "\n".join(_first_at_spot_section(doc))
    assert "| pause 2.0 s | 540 / 1080 | 950 / 1900 |" in md and "Reads started 48" in md
    result["cases"]["moved away"] = case(1800, 1500)  # the read at the wrong place held the model up
    result["cases"]["pause 2.0 s"] = case(540, 950, same=3)
    assert [c["pass"] for c in checks(doc) if c["name"].startswith("first_at_spot")] == [True, False, False]


def test_a_partial_run_is_merged_into_the_results_and_marked(tmp_path: Path) -> None:
    """bench.merge: the sections of a partial run replace those of bench/results.json, each marked
    with the date and commit it was re-run at; the checks are recomputed over the whole."""
    from bench.merge import main as merge_main

    (tmp_path / "results.json").write_text((REPO / "bench" / "results.json").read_text())
    full = json.loads((tmp_path / "results.json").read_text())
    partial = {"benchmarks_run": ["cold_start"], "machine": {"date": "2026-11-27 23:00:00 UTC", "git_commit": "abc1234"},
               "results": {"cold_start": {**full["results"]["cold_start"],
                                          "spawn_to_initialize_ms": {"n": 10, "p50": 250.0, "p95": 270.0}}}}
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    assert merge_main([str(tmp_path / "partial.json"), "--into", str(tmp_path)]) == 0
    merged = json.loads((tmp_path / "results.json").read_text())
    assert merged["results"]["cold_start"]["spawn_to_initialize_ms"]["p50"] == 250.0
    assert merged["results"]["inline_added"] == full["results"]["inline_added"]  # the rest untouched
    (check,) = [c for c in merged["checks"] if c["name"].startswith("cold_start")]
    assert check["value"] == 250.0 and check["pass"]
    assert "**`cold_start` re-run 2026-11-27 23:00:00 UTC, commit `abc1234`**" in (tmp_path / "RESULTS.md").read_text()
