"""What the rewrite as a second reading of a line-scan slip would do, from two recorded runs
(docs/design-notes.md, line_scan.py: the rule written before the runs):

    python -m bench.edit_quality.second_reading_study TODAY.json NOSCAN.json [MORE_TODAY.json MORE_NOSCAN.json ...]

TODAY: `bench.edit_quality` with the server as it was (the slip offered alone when the scan finds one);
NOSCAN: the same tasks, Kestrel alone (`--systems kestrel`), from a copy whose `line_scan.reads_lines`
is false, so each task's rewrite is what the server would have asked after the slip. Per task where
the scan offered: P0 = the slip (today), P1 = the rewrite when it offers a change that is not the slip's
program, else the slip, P2 = nothing on such a disagreement.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _outcome(rec: dict[str, Any]) -> tuple[bool, bool]:
    return bool(rec["offered"]), bool(rec["fixed"])


def study(today: dict[str, Any], noscan: dict[str, Any]) -> dict[str, Any]:
    from kestrel.edits.repair_checks import same_code

    rewrites = {r["task_id"]: r["kestrel"] for r in noscan["records"]}
    tally = {p: {"offered": 0, "fixed": 0, "wrong": 0} for p in ("P0", "P1", "P2")}
    rows, seconds = [], []
    for r in today["records"]:
        k = r["kestrel"]
        outcomes = {"P0": _outcome(k)}
        if k["made_by"] == "model:line-scan" and r["task_id"] in rewrites:
            rw = rewrites[r["task_id"]]
            seconds.append(rw["latency_ms"] / 1000)
            disagree = rw["offered"] and not same_code(k.get("document", ""), rw.get("document", ""), "python")
            outcomes["P1"] = _outcome(rw) if disagree else outcomes["P0"]
            outcomes["P2"] = (False, False) if disagree else outcomes["P0"]
            rows.append({"task": r["task_id"], "kind": r["kind"], "slip_fixed": k["fixed"],
                         "rewrite_offered": rw["offered"], "rewrite_fixed": rw["fixed"], "disagree": disagree})
        else:
            outcomes["P1"] = outcomes["P2"] = outcomes["P0"]
        for p, (offered, fixed) in outcomes.items():
            tally[p]["offered"] += offered
            tally[p]["fixed"] += fixed
            tally[p]["wrong"] += offered and not fixed
    return {"model": today["model"], "tasks": len(today["records"]), "tally": tally, "slip_tasks": rows,
            "rewrite_seconds": sorted(seconds)}


def report(results: list[dict[str, Any]]) -> str:
    from bench.common import percentile

    lines = ["| model | tasks | policy | offered | fixed | wrong |", "|---|---|---|---|---|---|"]
    total = {p: {"offered": 0, "fixed": 0, "wrong": 0} for p in ("P0", "P1", "P2")}
    for res in results:
        for p, t in res["tally"].items():
            lines.append(f"| {res['model']} | {res['tasks']} | {p} | {t['offered']} | {t['fixed']} | {t['wrong']} |")
            for key in t:
                total[p][key] += t[key]
    for p, t in total.items():
        lines.append(f"| both | | {p} | {t['offered']} | {t['fixed']} | {t['wrong']} |")
    for res in results:
        rows = res["slip_tasks"]
        dis = [x for x in rows if x["disagree"]]
        secs = res["rewrite_seconds"]
        lines.append("")
        lines.append(f"{res['model']}: the scan offered a slip on {len(rows)} tasks ({sum(x['slip_fixed'] for x in rows)} fixed); "
                     f"the rewrite disagreed on {len(dis)} (slip right {sum(x['slip_fixed'] for x in dis)}, rewrite right "
                     f"{sum(x['rewrite_fixed'] for x in dis)}); the rewrite's time on those tasks p50 "
                     f"{percentile(secs, 50) or 0:.1f} s / p95 {percentile(secs, 95) or 0:.1f} s")
        for x in dis:
            lines.append(f"- {x['task']} ({x['kind']}): slip {'fixed' if x['slip_fixed'] else 'wrong'}, "
                         f"rewrite {'fixed' if x['rewrite_fixed'] else 'wrong'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.edit_quality.second_reading_study", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="pairs: TODAY.json NOSCAN.json")
    args = p.parse_args(argv)
    if len(args.runs) % 2:
        p.error("give the runs in pairs: today's, then the one with the scan off")
    pairs = zip(args.runs[::2], args.runs[1::2])
    print(report([study(json.loads(a.read_text()), json.loads(b.read_text())) for a, b in pairs]))


if __name__ == "__main__":
    main()
