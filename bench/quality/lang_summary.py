"""The TypeScript / JavaScript / Go / Rust section: numbers per language and set from the per-task
records, paired margins between systems, and its own part of bench/QUALITY.md (between the Python
completion section and the edit section; see __main__.write_sections)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from bench.edit_quality.paired import paired_margin

from . import lang_scoring
from .lang_tasks import CURSORS, SETS
from .summary import PEERS, _code, _ms, _pct, percentile, spread_pick, text_table

MARKER = "<!-- completion-languages: written by python -m bench.quality -->"
LANGUAGE_NAMES = {"typescript": "TypeScript", "javascript": "JavaScript", "go": "Go", "rust": "Rust"}
BINARY = ("exact", "useful", "noise")


def systems_in(records: list[dict[str, Any]]) -> tuple[str, ...]:
    return ("raw", "kestrel") + tuple(p for p in PEERS if records and all(p in r for r in records))


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def system_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    shown = [r for r in rows if r["shown"]]
    lat = [r["latency_ms"] for r in rows]
    return {
        "tasks": n,
        "shown": len(shown),
        "shown_rate": _r(len(shown) / n if n else None),
        "exact": sum(r["exact"] for r in rows),
        "exact_rate": _r(sum(r["exact"] for r in rows) / n if n else None),
        "precision": _r(sum(r["exact"] for r in shown) / len(shown) if shown else None),
        "edit_sim": _r(_mean([r["edit_sim"] for r in rows])),
        "edit_sim_shown": _r(_mean([r["edit_sim"] for r in shown])),
        "ident_f1": _r(_mean([r["ident_f1"] for r in rows])),
        "useful": sum(r["useful"] for r in rows),
        "useful_rate": _r(sum(r["useful"] for r in rows) / n if n else None),
        "noise": sum(r["noise"] for r in rows),
        "noise_rate": _r(sum(r["noise"] for r in rows) / n if n else None),
        "breaks_syntax": sum(r["breaks_syntax"] for r in shown),
        "breaks_syntax_rate": _r(sum(r["breaks_syntax"] for r in shown) / len(shown) if shown else None),
        "latency_ms": {"p50": _r(percentile(lat, 0.5), 1), "p95": _r(percentile(lat, 0.95), 1)},
    }


def latency_by_order(rows: list[dict[str, Any]], system: str) -> dict[str, Any]:
    """`system`'s latency when it was asked first (it paid for the whole prompt) and when it was not
    (llama.cpp had most of the prompt cached from the system before it): one server serves every
    system, so the overall percentiles mix the two; compare systems within one order."""
    out = {}
    for order, keep in (("first", lambda r: r["first"] == system), ("later", lambda r: r["first"] != system)):
        lat = [r[system]["latency_ms"] for r in rows if keep(r)]
        out[order] = {"n": len(lat), "p50": _r(percentile(lat, 0.5), 1), "p95": _r(percentile(lat, 0.95), 1)}
    return out


def paired_mean(diffs: list[float]) -> dict[str, float | int]:
    """Mean of paired differences with a normal-approximation 95% interval (t for n < 30 is not
    worth a table here: the interval is marked approximate in the report)."""
    n = len(diffs)
    if n == 0:
        return {"n": 0, "margin": 0.0, "low": 0.0, "high": 0.0}
    m = sum(diffs) / n
    sd = math.sqrt(sum((d - m) ** 2 for d in diffs) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n)
    return {"n": n, "margin": m, "low": m - half, "high": m + half}


def margins(rows: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """`a` minus `b` on the same tasks: exact, useful, noise (McNemar, exact interval) and edit
    similarity (mean difference)."""
    out: dict[str, Any] = {}
    for metric in BINARY:
        only_a = sum(r[a][metric] and not r[b][metric] for r in rows)
        only_b = sum(r[b][metric] and not r[a][metric] for r in rows)
        out[metric] = {k: _r(v, 4) if isinstance(v, float) else v
                       for k, v in paired_margin(only_a, only_b, len(rows)).items()}
    out["edit_sim"] = {k: _r(v, 4) if isinstance(v, float) else v
                       for k, v in paired_mean([r[a]["edit_sim"] - r[b]["edit_sim"] for r in rows]).items()}
    return out


def comparisons(systems: tuple[str, ...]) -> list[tuple[str, str]]:
    pairs = [(s, "raw") for s in systems if s != "raw"]
    pairs += [("kestrel", p) for p in systems if p not in ("raw", "kestrel")]
    return pairs


def _example(rec: dict[str, Any], systems: tuple[str, ...]) -> dict[str, Any]:
    def short(t: str) -> str:
        return t if len(t) <= 160 else t[:159] + "…"

    return {"task_id": rec["task_id"], "expected": short(rec["expected"]),
            **{s: short(rec[s]["text"]) for s in systems},
            **{f"{s}_sim": rec[s]["edit_sim"] for s in systems}}


def pick_examples(recs: list[dict[str, Any]], systems: tuple[str, ...], n: int = 3,
                  spread: str = "language") -> list[dict[str, Any]]:
    """Up to n short examples from as many languages (or other `spread` keys) as possible (deterministic)."""
    ordered = sorted(recs, key=lambda r: (len(r["expected"]) + sum(len(r[s]["text"]) for s in systems), r["task_id"]))
    return [_example(r, systems) for r in spread_pick(ordered, spread, n)]


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    systems = systems_in(records)
    langs: dict[str, Any] = {}
    for language in dict.fromkeys(r["language"] for r in records):
        entry: dict[str, Any] = {}
        for set_name in SETS:
            rows = [r for r in records if r["language"] == language and r["set"] == set_name]
            if not rows:
                continue
            entry[set_name] = {
                **{s: system_stats([r[s] for r in rows]) for s in systems},
                "by_cursor": {c: {s: system_stats([r[s] for r in rows if r["cursor"] == c]) for s in systems}
                              for c in CURSORS[set_name] if any(r["cursor"] == c for r in rows)},
                "margins": {f"{a}-{b}": margins(rows, a, b) for a, b in comparisons(systems)},
                "latency_by_order": {s: latency_by_order(rows, s) for s in systems},
            }
        rows = [r for r in records if r["language"] == language]
        entry["all"] = {"margins": {f"{a}-{b}": margins(rows, a, b) for a, b in comparisons(systems)}}
        langs[language] = entry
    examples = {
        "kestrel_useful_raw_noise": pick_examples([r for r in records if r["kestrel"]["useful"] and not r["raw"]["useful"]],
                                          systems),
        "raw_useful_kestrel_not": pick_examples([r for r in records if r["raw"]["useful"] and not r["kestrel"]["useful"]],
                                        systems),
    }
    return {"systems": list(systems), "languages": langs,
            "totals": {f"{a}-{b}": margins(records, a, b) for a, b in comparisons(systems)}, "examples": examples}


# --- rendering ----------------------------------------------------------------------------------
HEADER = ["language", "set", "system", "tasks", "shown", "exact", "precision", "edit sim", "ident F1", "useful",
          "noise", "breaks syntax", "p50 ms", "p95 ms"]


def _rate(n: int, rate: float | None) -> str:
    return f"{_pct(rate)} ({n})"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def table_rows(lang: dict[str, Any]) -> list[list[str]]:
    rows = []
    for language, entry in lang["languages"].items():
        for set_name in SETS:
            e = entry.get(set_name)
            if not e:
                continue
            for s in lang["systems"]:
                st = e[s]
                rows.append([language, set_name, s, str(st["tasks"]), _pct(st["shown_rate"]),
                             _rate(st["exact"], st["exact_rate"]), _pct(st["precision"]), _num(st["edit_sim"]),
                             _num(st["ident_f1"]), _rate(st["useful"], st["useful_rate"]),
                             _rate(st["noise"], st["noise_rate"]),
                             "–" if st["breaks_syntax_rate"] is None else f"{_pct(st['breaks_syntax_rate'])} ({st['breaks_syntax']})",
                             _ms(st["latency_ms"]["p50"]), _ms(st["latency_ms"]["p95"])])
    return rows


def render_table(lang: dict[str, Any]) -> str:
    return "\n".join(text_table([HEADER] + table_rows(lang)))


def _pts(m: dict[str, Any], scale: float = 100.0, unit: str = " pts") -> str:
    return f"{scale * m['margin']:+.1f}{unit} [{scale * m['low']:+.1f}, {scale * m['high']:+.1f}]"


def _margin_cells(m: dict[str, Any]) -> list[str]:
    cells = []
    for metric in BINARY:
        x = m[metric]
        cells.append(f"{_pts(x)}, p={x['p']:.2g} (+{x['b']}/-{x['c']})")
    cells.append(f"{m['edit_sim']['margin']:+.3f} [{m['edit_sim']['low']:+.3f}, {m['edit_sim']['high']:+.3f}]")
    return cells


def _packages_table(lang: dict[str, Any]) -> list[str]:
    out = ["| language | package | version | from | licence | published | files used | line / block candidates |",
           "|---|---|---|---|---|---|---|---|"]
    per = {lg: c.get("per_package", {}) for lg, c in lang["counts"].items()}
    for p in lang["packages"]:
        c = per.get(p["language"], {}).get(p["name"], {})
        out.append(f"| {p['language']} | `{p['name']}` | {p['version']} | {p['source']} | {p['license']} | "
                   f"{p['published']} | {c.get('files', '–')} | {c.get('line', '–')} / {c.get('block', '–')} |")
    return out


def _measured(src: dict[str, Any] | None) -> str:
    if not src:
        return "not recorded"
    if "commit" not in src:
        snap = re.search(r"kestrel-([0-9a-f]{7,40})\b", src.get("source", ""))  # `git archive <commit> pyserver`
        return f"commit {snap.group(1)} (a snapshot)" if snap else f"the package in {src.get('source', '?')}"
    dirty = " with uncommitted changes in pyserver/" if src.get("uncommitted_changes_in_pyserver") else ""
    return f"{src.get('source', '?')} at commit {src['commit']}{dirty}"


def merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One run's document from runs that each measured some languages (a long eval split into runs,
    e.g. one per language): their language parts joined, re-summarized; the first run's header. Runs
    with a different model, sample or Kestrel server arrangement are refused."""
    base = {k: v for k, v in docs[0].items() if k != "languages"}
    parts = [d["languages"] for d in docs]
    for key in ("model",):
        if len({d[key] for d in docs}) > 1:
            raise ValueError(f"the runs differ in {key}")
    for key in ("sample", "seed", "full", "limit", "kestrel_server"):
        if len({json.dumps(p["config"].get(key), sort_keys=True) for p in parts}) > 1:
            raise ValueError(f"the runs differ in their {key}")
    records = [r for p in parts for r in p["records"]]
    lang = {**parts[0],
            "packages": [x for p in parts for x in p["packages"]],
            "counts": {k: v for p in parts for k, v in p["counts"].items()},
            "wall_seconds": sum(p.get("wall_seconds", 0) for p in parts),
            "kestrel": [{"languages": list(p["languages"]), "source": d["config"].get("kestrel")}
                        for d, p in zip(docs, parts)],
            "records": records}
    lang.update(summarize(records))
    base["languages"] = lang
    base["wall_seconds"] = sum(d.get("wall_seconds", 0) for d in docs)
    return base


def render_markdown(doc: dict[str, Any], command: str = "make eval") -> str:
    """The languages section of QUALITY.md (starting with MARKER)."""
    lang = doc["languages"]
    cfg = lang["config"]
    systems = tuple(lang["systems"])
    names = ", ".join(LANGUAGE_NAMES.get(x, x) for x in lang["languages"])
    counts = lang["counts"]
    out = [
        MARKER,
        f"## Completion quality in {names}: real package code",
        "",
        (f"Generated by `python -m bench.quality --report-only --merge ...` from {len(lang['kestrel'])} runs of "
         "`python -m bench.quality --sets none --languages <one language>` (each with its own llama.cpp server, "
         "the same GGUF and settings; not the run of the Python section above); do not edit by hand. "
         if lang.get("kestrel") else
         f"Generated by `{command}` (`python -m bench.quality`, the same run and llama.cpp server as the Python "
         f"section above) from `bench/out/quality.json`; do not edit by hand. ")
        + f"Systems: {', '.join(systems)}; wall time of this part {lang.get('wall_seconds', 0):.0f} s.",
        "",
        "- Kestrel measured: " + ("; ".join(
            ", ".join(LANGUAGE_NAMES.get(x, x) for x in run["languages"]) + ": " + _measured(run["source"])
            for run in lang["kestrel"]) if lang.get("kestrel") else _measured(doc.get("config", {}).get("kestrel"))) + ".",
        f"- Tasks per language: {cfg['sample']['line']} line + {cfg['sample']['block']} block "
        f"({'ten times the default sample' if cfg.get('full') else 'the default sample'}, seed {cfg['seed']}"
        f"{', at most ' + str(cfg['limit']) + ' per set (a smoke run)' if cfg.get('limit') else ''}); candidates: "
        + "; ".join(f"{LANGUAGE_NAMES.get(k, k)} {c['line']:,} line / {c['block']:,} block in {c['files']} files"
                    for k, c in counts.items()) + ".",
        "- Files left out: " + "; ".join(
            f"{LANGUAGE_NAMES.get(k, k)} " + (", ".join(f"{why} {n}" for why, n in c["files_skipped"].items()) or "none")
            for k, c in counts.items()) + ".",
        "",
        "### The code",
        "",
        "Pinned in `bench/quality/languages.toml` (name, version, source, licence, sha256 of the downloaded file), "
        "downloaded at eval time with the registry's own client (`npm pack`, `apt-get download`) into "
        "`.tools/eval-data/` and checked; nothing is vendored. TypeScript and JavaScript: npm versions published "
        "in 2025–2026, after the model was trained (code they carry over from older versions may still be known "
        "to it). Go and Rust: Debian 12's newest packages of these projects, upstream 2022–early 2023: the model may "
        "have seen this code, which raises every system's absolute scores alike.",
        "",
        *_packages_table(lang),
        "",
        "### How it is measured",
        "",
        "- **Document**: the whole real file. **line** tasks: a qualifying line (code, not a comment, import, "
        "closer-only or one-word line such as `break;`; no comment on it; at most 200 characters), the cursor "
        "*after indent* (its text after the indentation hidden) or *mid-line* (after an identifier or operator "
        "inside it, the point drawn with the seed; the rest of the line hidden); the newline and the lines below "
        "stay. **block** tasks: a line ending in `{` whose body (2–10 lines, at most 600 characters) is indented "
        "deeper and closed by `}` at the opener's indentation; the cursor after `{`, the newline and the first "
        "body line's indentation, the body hidden up to the end of its last line; the newline and `}` stay, as "
        "after Enter between braces. Tests, vendored, generated, data-table files and files the grammar does not "
        "parse are skipped. The sample spreads evenly over each language's packages.",
        "- **raw** = the model's FIM answer, as in the Python section (single-line treatment for line tasks: cut "
        f"after the first newline, cap {cfg['raw_caps']['line']} tokens; block tasks: the model's own stop, cap "
        f"{cfg['raw_caps']['block']} tokens), given the tail of the prefix and the head of the suffix within "
        f"Kestrel's default budgets ({cfg['raw_window']['prefix_tokens']} / {cfg['raw_window']['suffix_tokens']} "
        "tokens at 3.5 characters per token; the prefix starts on a line at a 1,024-character anchor): whole real "
        "files do not fit n_ctx.",
        "- **kestrel** = `kestrel-lsp` as in the Python section; the file opens as `tasks/<its real name>` with "
        "languageId `typescript`, `javascript`, `go` or `rust`." + (
            " **copilot** = Copilot's language server as in the Python section, with the same languageId; it builds "
            "its own prompt for a larger window (up to ~8k tokens, most of it suffix), so with it the llama.cpp server "
            f"runs with n_ctx {(doc.get('config') or {}).get('n_ctx', '?')} (a prompt that fits is answered the same)."
            if "copilot" in systems else ""),
        "- **Scores** (what the editor holds after accepting the first item, trailing whitespace ignored): "
        "**exact** = the completion equals the hidden text; **edit sim** = 1 − Levenshtein / longer length "
        "(nothing shown = 0), mean over tasks; **ident F1** = identifiers of the completion vs the hidden text "
        "(multisets; nothing shown = 0); **shown** = a suggestion with non-blank text; **precision** = exact among "
        f"shown; **useful** = shown and edit sim ≥ {lang_scoring.USEFUL}; **noise** = shown and edit sim < "
        f"{lang_scoring.NOISE} (between the two: neither); **breaks syntax** = share of *shown* suggestions that "
        "Kestrel's tree-sitter guard (`kestrel.completion.guards.treesitter`) refuses: the code around the cursor "
        "gets a parse error the unfinished code did not have. Kestrel applies that guard itself before showing, so "
        "its rate is ~0 by design; the column says how often the others show syntax-breaking text. Latency = "
        "request to answer (raw: to the first newline for line tasks).",
        "",
        "### Results",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join("---" for _ in HEADER) + "|",
    ]
    out += ["| " + " | ".join(r) + " |" for r in table_rows(lang)]
    out += ["", "Line tasks by cursor placement:", "",
            "| language | cursor | system | tasks | shown | exact | edit sim | useful | noise |",
            "|---|---|---|---|---|---|---|---|---|"]
    for language, entry in lang["languages"].items():
        for cursor, per in (entry.get("line") or {}).get("by_cursor", {}).items():
            for s in systems:
                st = per[s]
                out.append(f"| {language} | {cursor} | {s} | {st['tasks']} | {_pct(st['shown_rate'])} | "
                           f"{_rate(st['exact'], st['exact_rate'])} | {_num(st['edit_sim'])} | "
                           f"{_rate(st['useful'], st['useful_rate'])} | {_rate(st['noise'], st['noise_rate'])} |")
    out += ["", "Latency by the order of asking: one llama.cpp server serves every system and which one goes first "
            "alternates task by task; the first pays for the whole prompt, the later ones find most of it cached, "
            "so the overall p50 mixes the two. Compare systems within a column.", "",
            "| language | set | system | asked first: p50 / p95 ms (tasks) | asked later: p50 / p95 ms (tasks) |",
            "|---|---|---|---|---|"]
    for language, entry in lang["languages"].items():
        for set_name in SETS:
            by = (entry.get(set_name) or {}).get("latency_by_order")
            for s in systems if by else ():
                f, later = by[s]["first"], by[s]["later"]
                out.append(f"| {language} | {set_name} | {s} | {_ms(f['p50'])} / {_ms(f['p95'])} ({f['n']}) | "
                           f"{_ms(later['p50'])} / {_ms(later['p95'])} ({later['n']}) |")
    out += ["", "### Paired margins", "",
            "The first system minus the second on the same tasks: points for exact, useful and noise (95% exact "
            "interval conditional on the discordant tasks, McNemar's exact p; +only the first / -only the second; "
            "for noise lower is better), and the mean difference in edit similarity (95% normal interval).", "",
            "| language | set | comparison | exact | useful | noise | edit sim |", "|---|---|---|---|---|---|---|"]
    for language, entry in lang["languages"].items():
        for set_name in (*SETS, "all"):
            e = entry.get(set_name)
            if not e:
                continue
            for pair, m in e["margins"].items():
                a, b = pair.split("-")
                out.append(f"| {language} | {set_name} | {a} − {b} | " + " | ".join(_margin_cells(m)) + " |")
    for pair, m in lang["totals"].items():
        a, b = pair.split("-")
        out.append(f"| all | all | {a} − {b} | " + " | ".join(_margin_cells(m)) + " |")
    for key, title in (("kestrel_useful_raw_noise", "Kestrel useful, raw not"),
                       ("raw_useful_kestrel_not", "Raw useful, Kestrel not")):
        out += ["", f"### Examples: {title}", ""]
        examples = lang["examples"][key]
        if not examples:
            out.append("(none in this run)")
        for ex in examples:
            out.append(f"- `{ex['task_id']}`: expected {_code(ex['expected'])}")
            out += [f"  - {s}: {_code(ex[s])} (edit sim {ex[s + '_sim']:.2f})" for s in systems if s in ex]
    out += ["", "(`⏎` marks a newline.)", ""]
    return "\n".join(out)
