"""Per set and family: fixed, wrong offers, precision, harm, who made the fixes (a rule or the
model), latency, and the paired margins with their intervals; the stdout table and the markdown
section of bench/QUALITY.md, from the per-task records. Real bugs (QuixBugs, HumanEvalFix) come
first, then the instructed edits (CanItEdit); the synthetic set is reported beside, never as the
headline."""

from __future__ import annotations

import statistics
from typing import Any

from bench.quality.summary import percentile, text_table

from .paired import paired_margin

SYSTEMS = ("raw", "kestrel")
SET_ORDER = ("quixbugs", "humanevalfix", "canitedit", "eslint", "synthetic")
FAMILY_ORDER = ("quick-fix", "inline-edit")
SMALL = 30  # a per-kind figure from fewer tasks is flagged


def _r(x: float | None, d: int = 3) -> float | None:
    return None if x is None else round(x, d)


def _rate(k: int, n: int) -> float | None:
    return _r(k / n) if n else None


def stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    lat = [r["latency_ms"] for r in rows]
    offered = sum(r["offered"] for r in rows)
    fixed = sum(r["fixed"] for r in rows)
    wrong = sum(r["offered"] and not r["fixed"] for r in rows)
    changed = [r["lines_changed"] for r in rows if r["offered"] and r["lines_changed"]]
    made: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["offered"]:
            m = made.setdefault(r.get("made_by") or "?", {"offered": 0, "fixed": 0})
            m["offered"] += 1
            m["fixed"] += bool(r["fixed"])
    return {
        "tasks": n, "fixed": fixed, "fixed_rate": _rate(fixed, n),
        "offered": offered, "offered_rate": _rate(offered, n),
        "wrong_offers": wrong, "wrong_offer_rate": _rate(wrong, n), "precision": _rate(fixed, offered),
        "harm": sum(r["harm"] for r in rows), "harm_rate": _rate(sum(r["harm"] for r in rows), n),
        "broke_tests": sum(bool(r.get("broke")) for r in rows), "outside": sum(r["outside"] for r in rows),
        "new_lint": sum(bool(r["new_findings"]) for r in rows),
        "lines_changed_median": statistics.median(changed) if changed else None,
        "latency_ms": {"p50": _r(percentile(lat, 0.5), 1), "p95": _r(percentile(lat, 0.95), 1)},
        "made_by": made,
    }


def _paired(rows: list[dict[str, Any]], what) -> dict[str, Any]:
    b = sum(what(r["kestrel"]) and not what(r["raw"]) for r in rows)
    c = sum(what(r["raw"]) and not what(r["kestrel"]) for r in rows)
    return {k: _r(v, 4) if isinstance(v, float) else v for k, v in paired_margin(b, c, len(rows)).items()}


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    sets: dict[str, Any] = {}
    names = [s for s in SET_ORDER if any(r.get("set", "synthetic") == s for r in records)]
    for set_name in names:
        for fam in FAMILY_ORDER:
            rows = [r for r in records if r.get("set", "synthetic") == set_name and r["family"] == fam]
            if not rows:
                continue
            kinds = list(dict.fromkeys(r["kind"] for r in rows))
            sets.setdefault(set_name, {})[fam] = {
                **{s: stats([r[s] for r in rows]) for s in SYSTEMS},
                "paired": {"fixed": _paired(rows, lambda x: x["fixed"]),
                           "wrong_offer": _paired(rows, lambda x: x["offered"] and not x["fixed"]),
                           "harm": _paired(rows, lambda x: x["harm"])},
                "kinds": {k: {s: stats([r[s] for r in rows if r["kind"] == k]) for s in SYSTEMS} for k in kinds}
                if len(kinds) > 1 else {},
            }
    return {"sets": sets}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _margin(p: dict[str, Any]) -> str:
    return (f"{100 * p['margin']:+.1f} pts [{100 * p['low']:+.1f}, {100 * p['high']:+.1f}], "
            f"p={p['p']:.3g} (+{p['b']}/-{p['c']})")


def _made(st: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v['fixed']}/{v['offered']}" for k, v in sorted(st["made_by"].items())) or "–"


HEADER = ["set", "family", "system", "tasks", "fixed", "wrong offers", "precision", "harm", "made by (fixed/offered)",
          "new lint", "p50 ms", "p95 ms"]


def rows_of(doc: dict[str, Any]) -> list[list[str]]:
    out = []
    for set_name, fams in doc["sets"].items():
        for fam, f in fams.items():
            for s in SYSTEMS:
                st = f[s]
                out.append([set_name, fam, s, str(st["tasks"]), f"{_pct(st['fixed_rate'])} ({st['fixed']})",
                            f"{_pct(st['wrong_offer_rate'])} ({st['wrong_offers']})",
                            f"{_pct(st['precision'])} ({st['fixed']}/{st['offered']})",
                            f"{_pct(st['harm_rate'])} ({st['harm']})", _made(st), str(st["new_lint"]),
                            f"{st['latency_ms']['p50']:.0f}", f"{st['latency_ms']['p95']:.0f}"])
    return out


def margin_lines(doc: dict[str, Any]) -> list[str]:
    out = []
    for set_name, fams in doc["sets"].items():
        for fam, f in fams.items():
            p = f["paired"]
            small = f" (only {f['raw']['tasks']} tasks: < {SMALL})" if f["raw"]["tasks"] < SMALL else ""
            out.append(f"{set_name} / {fam}{small}: fixed {_margin(p['fixed'])}; wrong offers "
                       f"{_margin(p['wrong_offer'])}; harm {_margin(p['harm'])}")
    return out


def render_table(doc: dict[str, Any]) -> str:
    lines = text_table([HEADER] + rows_of(doc))
    return "\n".join(lines + ["", "Kestrel minus raw (95% interval, McNemar exact p; +only Kestrel / -only raw):"]
                     + margin_lines(doc))


def _short(model: str) -> str:
    return model.replace("qwen2.5-coder-", "").replace("-instruct-q4_k_m", "")


def _grouped(skipped: dict[str, str]) -> str:
    """{task: why} as "why (task, task); why (task)", the most common reason first."""
    by: dict[str, list[str]] = {}
    for name, why in skipped.items():
        by.setdefault(why, []).append(name)
    return "; ".join(f"{why} ({', '.join(names)})" for why, names in sorted(by.items(), key=lambda kv: -len(kv[1]))) \
        or "none"


def render_markdown(doc: dict[str, Any], command: str, beside: list[dict[str, Any]] | None = None) -> str:
    """The edit section of QUALITY.md: `doc`'s run, and other models' runs (`beside`) in the same tables."""
    docs = [doc] + list(beside or [])
    qb = doc.get("counts", {}).get("quixbugs", {})
    hef = doc.get("counts", {}).get("humanevalfix", {})
    cie = doc.get("counts", {}).get("canitedit", {})
    esl = doc.get("counts", {}).get("eslint", {})
    runs = "; ".join(f"{d['model']}: {d['wall_seconds']:.0f} s, tasks {d['config']['sizes']}" for d in docs)
    md = [MARKER, "## Edit quality: real bugs first (QuixBugs, HumanEvalFix), then instructed edits (CanItEdit), synthetic beside", "",
          f"`{command}`" + (" and `--model-path` for the larger model" if beside else "") + f": {runs}; "
          f"Kestrel {doc['kestrel'].get('commit') or doc['kestrel'].get('source')} "
          f"({doc['config']['label']}). Raw = the same model in a chat with the same facts as Kestrel's prompt "
          "(bench/edit_quality/PROMPTS.md), its answer applied as a user applies it (the function and its imports, "
          "not echoed test lines).", ""]
    if qb:
        md += [f"QuixBugs: {qb.get('programs')} programs, {qb.get('inline-edit', 0)} inline-edit tasks, "
               f"{qb.get('quick-fix', 0)} quick-fix tasks (ruff reports nothing on a buggy file that its correct "
               f"version lacks, so there is no diagnostic to fix); skipped: {qb.get('skipped') or 'none'}.", ""]
    if hef:
        md += [f"HumanEvalFix (OctoPack's HumanEvalPack: a bug written by hand into each of the 164 HumanEval "
               f"solutions): {hef.get('inline-edit', 0)} inline-edit tasks exist, "
               f"{doc['config']['sizes'].get('humanevalfix', {}).get('inline-edit', 0)} in this run (seeded, even over "
               f"the bug types; FULL=1 runs all), and {hef.get('quick-fix', 0)} quick-fix tasks "
               f"(ruff {', '.join(hef.get('quick_fix_codes') or []) or '–'} on the buggy file only); skipped: "
               f"{hef.get('skipped') or 'none'}. Same problems as the synthetic set, so a model may recall the "
               "canonical solutions: that helps both systems alike.", ""]
    if cie.get("missing"):
        md += [f"CanItEdit (instructed edits): not run, {cie['missing']}.", ""]
    elif cie:
        md += [f"CanItEdit (instructed edits that are not repairs: {cie.get('programs')} hand-written programs the "
               f"benchmark classes as adaptive or perfective, each with a person's instruction and hidden tests): "
               f"{cie.get('inline-edit', 0)} inline-edit tasks ("
               + ("lazy and descriptive instructions" if "descriptive" in (cie.get("variants") or [])
                  else "the lazy instructions; FULL=1 adds the descriptive ones")
               + "), the selection = every definition the reference "
               f"edit changes; skipped: {_grouped(cie.get('skipped') or {})}. Here \"fixed\" = the tests pass: the "
               "change asked for is made.", ""]
    if esl:
        md += [f"ESLint (TypeScript quick fixes, bench/edit_quality/eslint_set.py): ESLint's findings of "
               f"{', '.join(f'`{k}`' for k in esl.get('fixable', {}))} on {esl.get('files')} real files of the languages "
               f"set's TypeScript packages (fixable findings: "
               f"{', '.join(f'{k} {v}' for k, v in esl.get('fixable', {}).items())}); "
               f"{doc['config']['sizes'].get('eslint', {}).get('quick-fix', 0)} in this run (seeded, per rule, one per "
               "file). Here \"fixed\" = the same program as ESLint's own fix (tree-sitter tokens, layout aside) and "
               "no new ESLint finding; harm = lines outside the finding changed. Raw is shown the same 40 lines "
               "either side as Kestrel's prompt and asked for the finding's lines.", ""]
    header = (["model"] if beside else []) + HEADER
    md += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for d in docs:
        md += ["| " + " | ".join(([_short(d["model"])] if beside else []) + r) + " |" for r in rows_of(d)]
    md += ["", "Kestrel minus raw, paired on the same tasks (95% interval, McNemar's exact p; +only Kestrel / "
           "-only raw). For wrong offers and harm, lower is better:", ""]
    for d in docs:
        md += [f"- {_short(d['model']) + ': ' if beside else ''}{ln}" for ln in margin_lines(d)]
    for d in docs:
        kinds = [(s, fam, k, v) for s, fams in d["sets"].items() for fam, f in fams.items() for k, v in f["kinds"].items()]
        if kinds:
            md += ["", f"Fixed rate per kind{' (' + _short(d['model']) + ')' if beside else ''} (raw / kestrel; "
                   f"a kind with fewer than {SMALL} tasks is marked: indicative only):", ""]
            md += [f"- {s} / {fam} / {k}: {_pct(v['raw']['fixed_rate'])} / {_pct(v['kestrel']['fixed_rate'])} of "
                   f"{v['raw']['tasks']}" + (f" (< {SMALL} tasks)" if v["raw"]["tasks"] < SMALL else "")
                   for s, fam, k, v in kinds]
    md += ["", "fixed = the task's tests pass after the edit (QuixBugs: every test that passes with the correct "
           "function; HumanEvalFix and synthetic: the HumanEval check; CanItEdit: the program's tests). wrong offer = an edit was offered and the "
           "tests still fail (rate of all tasks); precision = fixed among offered. harm = a test that passed on the "
           "buggy file fails after the edit, or the edit changed code outside the function (CanItEdit: the selection; "
           "new import lines and "
           "new helper definitions excepted). made by = what the server reports in the resolved code action / the "
           "edit answer (`madeBy`): `rule:import`, `rule:token`, `rule:similar-name` (no model), `model` (quick-fix "
           "answer), `model:line-scan` (a line re-read by the completion model, see line_scan.py), `model:rewrite`; "
           "raw is always `model`. new lint = edits after which ruff (F, E9) finds something neither file had "
           "(reported, not counted as harm: Kestrel filters on it). Time = request to edit (quick fix: codeAction + "
           "resolve; raw: the chat request).", "",
           "Before/after of each change to the edit path: bench/QUALITY-history.md.", "",
           "Examples (one fixed, the other not):", ""]
    shown = 0
    for r in doc["records"]:
        if r["kestrel"]["fixed"] != r["raw"]["fixed"] and shown < 6:
            who = "kestrel" if r["kestrel"]["fixed"] else "raw"
            other = "raw" if who == "kestrel" else "kestrel"
            md.append(f"- `{r['task_id']}` ({r['note']}): only {who} fixed it; {other}: "
                      f"{(r[other].get('error') or r[other]['result'])[:110]}")
            shown += 1
    return "\n".join(md) + "\n"


MARKER = "<!-- edit-quality: written by python -m bench.edit_quality -->"
# What follows this line, up to the repository section, is written by hand and kept by a re-run.
END_MARKER = "<!-- /edit-quality: the subsections below are written by hand; a re-run keeps them -->"
