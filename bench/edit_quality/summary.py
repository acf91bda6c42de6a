"""Per-family numbers, per-kind fixed rates, paired flips, the stdout table and the markdown
section of bench/QUALITY.md, from the per-task records."""

from __future__ import annotations

import statistics
from typing import Any

from bench.quality.summary import percentile

from .data import FAMILIES
from .runner import SYSTEMS


def _r(x: float | None, d: int = 3) -> float | None:
    return None if x is None else round(x, d)


def stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    lat = [r["latency_ms"] for r in rows]
    changed = [r["lines_changed"] for r in rows if r["offered"] and r["lines_changed"]]
    return {
        "tasks": n,
        "fixed": sum(r["fixed"] for r in rows), "fixed_rate": _r(sum(r["fixed"] for r in rows) / n if n else None),
        "harm": sum(r["harm"] for r in rows), "harm_rate": _r(sum(r["harm"] for r in rows) / n if n else None),
        "offered_rate": _r(sum(r["offered"] for r in rows) / n if n else None),
        "lines_changed_median": statistics.median(changed) if changed else None,
        "latency_ms": {"p50": _r(percentile(lat, 0.5), 1), "p95": _r(percentile(lat, 0.95), 1)},
    }


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    families: dict[str, Any] = {}
    for fam, kinds in FAMILIES.items():
        rows = [r for r in records if r["family"] == fam]
        if not rows:
            continue
        families[fam] = {
            **{s: stats([r[s] for r in rows]) for s in SYSTEMS},
            "kinds": {k: {s: stats([r[s] for r in rows if r["kind"] == k]) for s in SYSTEMS}
                      for k in kinds if any(r["kind"] == k for r in rows)},
            "flips": {"kestrel_only": sum(r["kestrel"]["fixed"] and not r["raw"]["fixed"] for r in rows),
                      "raw_only": sum(r["raw"]["fixed"] and not r["kestrel"]["fixed"] for r in rows)},
        }
    return {"families": families}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def rows_of(doc: dict[str, Any]) -> list[list[str]]:
    out = []
    for fam, f in doc["families"].items():
        for s in SYSTEMS:
            st = f[s]
            flips = "" if s == "raw" else f"+{f['flips']['kestrel_only']} / -{f['flips']['raw_only']}"
            out.append([fam, s, str(st["tasks"]), f"{_pct(st['fixed_rate'])} ({st['fixed']})",
                        f"{_pct(st['harm_rate'])} ({st['harm']})", _pct(st["offered_rate"]),
                        "–" if st["lines_changed_median"] is None else f"{st['lines_changed_median']:g}",
                        f"{st['latency_ms']['p50']:.0f}", f"{st['latency_ms']['p95']:.0f}", flips])
    return out


HEADER = ["family", "system", "tasks", "fixed", "harm", "offered", "lines changed (median)", "p50 ms", "p95 ms",
          "flips vs raw (+kestrel only / -raw only)"]


def render_table(doc: dict[str, Any]) -> str:
    rows = [HEADER] + rows_of(doc)
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_markdown(doc: dict[str, Any], command: str) -> str:
    md = [MARKER, "## Edit quality: quick fixes and inline edits", "",
          f"`{command}`: {doc['model']}, {doc['config']['label']} {doc['config']['sizes']} (seeded, even over the kinds), "
          f"Kestrel {doc['kestrel'].get('commit') or doc['kestrel'].get('source')}, {doc['wall_seconds']:.0f} s. "
          f"Tasks that exist per kind (mutants ruff flags / whose tests fail): {doc['counts']}.", "",
          "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    md += ["| " + " | ".join(r) + " |" for r in rows_of(doc)]
    md += ["", "Fixed rate per kind (raw / kestrel):", ""]
    for fam, f in doc["families"].items():
        for kind, k in f["kinds"].items():
            md.append(f"- {fam} / {kind}: {_pct(k['raw']['fixed_rate'])} / {_pct(k['kestrel']['fixed_rate'])} "
                      f"of {k['raw']['tasks']}")
    md += ["", "fixed = the problem's tests pass after the edit is applied; harm = the edit changed text outside "
           "its target (the function; a quick fix may also change import lines) or ruff (F, E9) finds something "
           "neither the working nor the broken file has; lines changed = changed lines of the applied edit (offered "
           "edits); time = request to the edit (quick fix: codeAction + codeAction/resolve; raw: the chat request).",
           "", "Before/after of each change to the edit path: bench/QUALITY-history.md.",
           "", "Examples (kestrel vs raw differ):", ""]
    shown = 0
    for r in doc["records"]:
        if r["kestrel"]["fixed"] != r["raw"]["fixed"] and shown < 6:
            who = "kestrel" if r["kestrel"]["fixed"] else "raw"
            other = "raw" if who == "kestrel" else "kestrel"
            md.append(f"- `{r['task_id']}` ({r['note']}; {r['problem'][:90]}): only {who} fixed it; {other}: "
                      f"{r[other].get('error') or r[other]['result'][:90]}")
            shown += 1
    return "\n".join(md) + "\n"


MARKER = "<!-- edit-quality: written by python -m bench.edit_quality -->"
