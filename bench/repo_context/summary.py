"""The repository section: numbers per system (overall, per package, per kind of use), paired margins
between systems, latency by the order of asking, examples; and its own part of bench/QUALITY.md,
always the last one (from MARKER to the end; bench.quality and bench.edit_quality keep it there).

The TypeScript set (`--language typescript`) has its own section, right after the Python one
(TS_MARKER to the end: both stay last together, and each run replaces only its own).

*useful* and *noise* are thresholds on edit similarity given to summarize() (defaults USEFUL 0.7 and
NOISE 0.4, the issue's; bench.quality.lang_scoring uses 0.3 for noise).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bench.edit_quality.paired import paired_margin
from bench.quality.lang_summary import latency_by_order, pick_examples
from bench.quality.summary import _code, _ms, _pct, percentile, text_table

MARKER = "<!-- completion-repository: written by python -m bench.repo_context -->"
TS_MARKER = "<!-- completion-repository-typescript: written by python -m bench.repo_context --language typescript -->"
USEFUL = 0.7
NOISE = 0.4
BINARY = ("exact", "useful", "noise", "uses_name")
COMPARISONS = (("oracle", "raw"), ("kestrel", "raw"), ("kestrel", "kestrel-nocontext"), ("kestrel-tabs", "kestrel"),
               ("kestrel-tabs", "raw"), ("oracle", "kestrel"), ("kestrel-budget", "kestrel"), ("kestrel-budget", "raw"),
               ("kestrel", "copilot"), ("kestrel-tabs", "copilot-tabs"), ("copilot-tabs", "copilot"))


# Tasks one system made useful and the other did not, shown as examples:
# key -> (useful, not useful, the section's title).
EXAMPLES = {
    "oracle_useful_raw_not": ("oracle", "raw", "the oracle useful, raw not"),
    "kestrel_useful_tabs_not": ("kestrel", "kestrel-tabs", "Kestrel useful with the file alone, not with tabs"),
    "tabs_useful_kestrel_not": ("kestrel-tabs", "kestrel", "Kestrel useful with tabs, not with the file alone"),
    "copilot_tabs_useful_kestrel_tabs_not": ("copilot-tabs", "kestrel-tabs",
                                             "Copilot useful with tabs, Kestrel with the same tabs not"),
    "kestrel_tabs_useful_copilot_tabs_not": ("kestrel-tabs", "copilot-tabs",
                                             "Kestrel useful with tabs, Copilot with the same tabs not"),
}


def systems_in(records: list[dict[str, Any]]) -> tuple[str, ...]:
    from .runner import PEER_SYSTEMS, SYSTEMS

    return tuple(s for s in SYSTEMS + PEER_SYSTEMS if records and all(s in r for r in records))


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def flags(ans: dict[str, Any], useful: float, noise: float) -> dict[str, Any]:
    """One answer with useful / noise under the given thresholds."""
    return {**ans, "useful": ans["shown"] and ans["edit_sim"] >= useful, "noise": ans["shown"] and ans["edit_sim"] < noise}


def system_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    shown = [r for r in rows if r["shown"]]

    def rate(k: int) -> float | None:
        return _r(k / n) if n else None

    lat = [r["latency_ms"] for r in rows]
    out: dict[str, Any] = {"tasks": n, "shown": len(shown), "shown_rate": rate(len(shown))}
    for metric in BINARY:
        k = sum(bool(r[metric]) for r in rows)
        out[metric], out[f"{metric}_rate"] = k, rate(k)
    out["precision"] = _r(sum(r["exact"] for r in shown) / len(shown)) if shown else None
    out["edit_sim"] = _r(sum(r["edit_sim"] for r in rows) / n) if n else None
    out["ident_f1"] = _r(sum(r["ident_f1"] for r in rows) / n) if n else None
    out["latency_ms"] = {"p50": _r(percentile(lat, 0.5), 1), "p95": _r(percentile(lat, 0.95), 1)}
    return out


def paired_mean(diffs: list[float]) -> dict[str, Any]:
    """Mean of paired differences with a normal-approximation 95% interval."""
    n = len(diffs)
    if n == 0:
        return {"n": 0, "margin": 0.0, "low": 0.0, "high": 0.0}
    m = sum(diffs) / n
    half = 1.96 * math.sqrt(sum((d - m) ** 2 for d in diffs) / (n - 1)) / math.sqrt(n) if n > 1 else 0.0
    return {"n": n, "margin": _r(m, 4), "low": _r(m - half, 4), "high": _r(m + half, 4)}


def margins(rows: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """`a` minus `b` on the same tasks: McNemar margins for the yes/no scores, the mean difference
    of edit similarity."""
    out: dict[str, Any] = {}
    for metric in BINARY:
        only_a = sum(bool(r[a][metric]) and not r[b][metric] for r in rows)
        only_b = sum(bool(r[b][metric]) and not r[a][metric] for r in rows)
        out[metric] = {k: _r(v, 4) if isinstance(v, float) else v
                       for k, v in paired_margin(only_a, only_b, len(rows)).items()}
    out["edit_sim"] = paired_mean([r[a]["edit_sim"] - r[b]["edit_sim"] for r in rows])
    return out


def summarize(records: list[dict[str, Any]], useful: float = USEFUL, noise: float = NOISE) -> dict[str, Any]:
    systems = systems_in(records)
    rows = [{**r, **{s: flags(r[s], useful, noise) for s in systems}} for r in records]
    pairs = [(a, b) for a, b in COMPARISONS if a in systems and b in systems]

    def block(sub: list[dict[str, Any]]) -> dict[str, Any]:
        return {s: system_stats([r[s] for r in sub]) for s in systems}

    groups = {key: {v: [r for r in rows if r[key] == v] for v in dict.fromkeys(r[key] for r in rows)}
              for key in ("package", "kind")}
    return {
        "systems": list(systems),
        "thresholds": {"useful": useful, "noise": noise},
        "overall": block(rows),
        "by_package": {p: block(sub) for p, sub in groups["package"].items()},
        "by_kind": {k: block(sub) for k, sub in groups["kind"].items()},
        "margins": {f"{a}|{b}": margins(rows, a, b) for a, b in pairs},
        "latency_by_order": {s: latency_by_order(rows, s) for s in systems},
        "raw_exact_tasks": sum(r["raw"]["exact"] for r in rows) if "raw" in systems else None,
        "engine": engine_recall(rows),
        "examples": {key: pick_examples([r for r in rows if r[a]["useful"] and not r[b]["useful"]], systems,
                                        spread="package") if {a, b} <= set(systems) else []
                     for key, (a, b, _) in EXAMPLES.items()},
    }


# --- rendering ----------------------------------------------------------------------------------
HEADER = ["system", "tasks", "shown", "exact", "precision", "edit sim", "ident F1", "uses name", "useful", "noise",
          "p50 ms", "p95 ms"]


def _count(n: int, rate: float | None) -> str:
    return f"{_pct(rate)} ({n})"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def stats_row(system: str, st: dict[str, Any]) -> list[str]:
    return [system, str(st["tasks"]), _pct(st["shown_rate"]), _count(st["exact"], st["exact_rate"]),
            _pct(st["precision"]), _num(st["edit_sim"]), _num(st["ident_f1"]), _count(st["uses_name"], st["uses_name_rate"]),
            _count(st["useful"], st["useful_rate"]), _count(st["noise"], st["noise_rate"]),
            _ms(st["latency_ms"]["p50"]), _ms(st["latency_ms"]["p95"])]


def render_table(doc: dict[str, Any]) -> str:
    return "\n".join(text_table([HEADER] + [stats_row(s, st) for s, st in doc["overall"].items()]))


def _pts(m: dict[str, Any]) -> str:
    return f"{100 * m['margin']:+.1f} pts [{100 * m['low']:+.1f}, {100 * m['high']:+.1f}], p={m['p']:.2g} (+{m['b']}/-{m['c']})"


def margin_cells(m: dict[str, Any]) -> list[str]:
    e = m["edit_sim"]
    return [_pts(m[k]) for k in BINARY] + [f"{e['margin']:+.3f} [{e['low']:+.3f}, {e['high']:+.3f}]"]


def _measured(src: dict[str, Any] | None) -> str:
    if not src:
        return "not recorded"
    if src.get("source") != "working tree":
        return f"the `kestrel` package in `{src.get('source', '?')}`"
    dirty = " with uncommitted changes in pyserver/" if src.get("uncommitted_changes_in_pyserver") else ""
    return f"the working tree at commit {src.get('commit', '?')}{dirty}"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(r) + " |" for r in rows)]


def _language(doc: dict[str, Any]) -> str:
    return doc["config"].get("language", "python")


def _packages(doc: dict[str, Any]) -> list[str]:
    per = doc["counts"]["per_package"]
    asked = doc["config"]["asked"]
    ts = _language(doc) == "typescript"  # the languages eval's manifest: no `first`
    rows = [[f"`{p['name']}`", p["version"], p["published"], *([] if ts else [p["first"]]), p["license"], p["why"],
             str(per.get(p["name"], {}).get("files", "–")), str(per.get(p["name"], {}).get("tasks", "–")),
             str(asked.get(p["name"], 0))] for p in doc["packages"]]
    return _md_table(["package", "version", "published", *([] if ts else ["line started"]), "licence", "what it is",
                      "files", "candidates", "asked"], rows)


def _ts_tasks(cfg: dict[str, Any]) -> list[str]:
    return [
        "- **Tasks** (CrossCodeEval's construction in TypeScript, `bench/repo_context/ts_tasks.py`, tree-sitter, "
        "independent of Kestrel's resolver): the first use of a *cross-file name* in a `.ts` file, a name the file "
        "imports from a relative module specifier (`import { a, b as c } from \"./x.js\"`, `import type`, a default "
        "import, `import * as ns`; `./x.js` names `./x.ts`, `./dir` names `./dir/index.ts`) that resolves, through "
        "`export { x } from`, `export *` and `export * as ns` re-exports, to a top-level declaration (function, class, "
        "interface, type alias, enum, const / let / var, `export default`) or a module in another file of the package. "
        "The first identifier with that name in the file's code must be a reference (an expression, a type name, a "
        "shorthand property) after the import: a first appearance as a property name (`obj.name`), a declared name "
        "or in a local `export { name }` gives no task. The cursor sits right before it; the reference is the rest of "
        f"the line ({cfg['ref_tokens'][0]}–{cfg['ref_tokens'][1]} tree-sitter tokens, a string or template counting "
        "as one; no comment on the line, nothing running past it, at most 200 characters). Files as the languages "
        "section takes them (no `.d.ts`, tests, vendored or generated files, no parse error). *kind* says whether the "
        "name at the cursor is a type name (*type*) or elsewhere in code (*code*). CrossCodeEval's filter that drops "
        "what a small model completes from the file alone is **not** applied: `raw exact` below counts those tasks.",
    ]


def _ts_oracle(cfg: dict[str, Any]) -> str:
    return ("- **oracle** = raw's windows with the *definitions* of the cross-file names in the reference (for a "
            "namespace, of the `ns.attr` it reads), resolved through the imports and re-exports (rendered from the "
            "defining file by `ts_oracle.py`: JSDoc and signature for a function and each overload; for a class its "
            "public fields, constructor and method signatures; an interface, type alias or enum as written, comments "
            f"left out; at most {cfg['oracle_chars']:,} characters), in Qwen2.5-Coder's repository format: "
            "`<|repo_name|>{package}` then `<|file_sep|>{defining file's path}` and its definitions per file, then "
            "`<|file_sep|>{current path}` and the FIM prompt. The ceiling of what context can do for this model.")


def _method(doc: dict[str, Any]) -> list[str]:
    cfg = doc["config"]
    th = doc["thresholds"]
    ts = _language(doc) == "typescript"
    out = [
        "- **Tasks** (CrossCodeEval's construction, `bench/repo_context/tasks.py`): the first use of a *cross-file "
        "name* in a file, a name the file imports from another module of the same package (`from .x import y`, "
        "found with `ast`, re-exports followed to the defining module) that does not occur as a code token between "
        "its import and the cursor. The cursor sits right before it; the reference is the rest of the line "
        f"({cfg['ref_tokens'][0]}–{cfg['ref_tokens'][1]} Python tokens, no comment on the line); the document is the "
        "whole real file and the package's folder is the workspace. *kind* says whether the name at the cursor is in a "
        "type annotation or elsewhere in code. CrossCodeEval's filter that drops what a small model completes from "
        "the file alone is **not** applied: `raw exact` below counts those tasks.",
        "- **raw** = the model's FIM answer on the file alone: the tail of the prefix and the head of the suffix within "
        f"{cfg['raw_window']['prefix_tokens']} / {cfg['raw_window']['suffix_tokens']} tokens (as the languages section's "
        f"raw), single-line treatment (cut after the first newline, cap {cfg['raw_cap']} tokens), greedy.",
        "- **oracle** = raw's windows with the *definitions* of the cross-file names in the reference, resolved through "
        "the imports (signature and docstring; for a class its fields, `__init__` and public method signatures; at "
        f"most {cfg['oracle_chars']:,} characters), in Qwen2.5-Coder's repository format: `<|repo_name|>{{package}}` "
        "then `<|file_sep|>{defining module's path}` and its definitions per module, then `<|file_sep|>{current path}` "
        "and the FIM prompt. The ceiling of what context can do for this model.",
        "- **kestrel** = `kestrel-lsp` through LSP (`fim` provider on the same endpoint, its own windows and cuts), "
        "the file open at its real path in a workspace whose folders are the packages; **kestrel-tabs** = the same "
        "with the defining modules (whole files) opened first, as tabs; Kestrel picks its own snippets from open "
        "tabs (`context/neighbors.py`); **kestrel-nocontext** = kestrel with `completion.repositoryContext` off "
        "(no imported definitions: what the context engine adds); **kestrel-budget** = kestrel with "
        "`completion.latencyBudgetMs` 1000 (the prompt cut to what the endpoint reads in a second: context first, "
        "then the suffix, then the prefix, never under 512 tokens). One server process each (Kestrel caches an answer "
        "per document and cursor).",
        *(["- **copilot** / **copilot-tabs** = GitHub Copilot's language server on the same model (the stand-in for "
           "GitHub forwards its FIM prompt to the same endpoint; its prompt budget is raw's windows plus its 500 "
           "completion tokens, as in the languages section), the file open at the same relative path, alone or after "
           "the same tabs; Copilot picks its own snippets from them. One process each, inside a loopback-only network "
           "namespace."] if {"copilot", "copilot-tabs"} & set(doc["systems"]) else []),
        "- **Scores** (what the editor holds after accepting the first item vs the real line, trailing whitespace "
        "ignored): **exact**; **edit sim** = 1 − Levenshtein / longer length (nothing shown = 0), mean; **ident F1** "
        "(identifiers as multisets; nothing shown = 0); **uses name** = shown and the cross-file name at the cursor is "
        f"one of its identifiers; **useful** = shown and edit sim ≥ {th['useful']}; **noise** = shown and edit sim < "
        f"{th['noise']}; **precision** = exact among shown. Latency = request to answer. Systems are asked in an order "
        "that rotates task by task on one model server (see the latency table).",
    ]
    if ts:
        out[0] = _ts_tasks(cfg)[0]
        out[2] = _ts_oracle(cfg)
        out[3] = out[3].replace("the defining modules (whole files)", "the defining files (whole files)")
    return out


def engine_recall(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How often Kestrel's context engine (file only) sent the definition of the name at the cursor."""
    reports = [(r, r["kestrel"].get("context")) for r in rows if "kestrel" in r]
    known = [(r, c) for r, c in reports if c is not None]
    if not known:
        return None
    hit = [r for r, c in known if any(d.rsplit(":", 1)[1] == r["name"] for d in c["definitions"])]
    misses = [f"{r['task_id']} ({r['name']})" for r, c in known if r not in hit]
    chars = sorted(c["chars"] for _, c in known)
    return {"tasks": len(known), "sent_the_name": len(hit), "misses": misses,
            "chars_p50": chars[len(chars) // 2], "chars_max": chars[-1]}


def _engine(doc: dict[str, Any]) -> list[str]:
    e = doc.get("engine")
    if not e:
        return []
    return ["", f"What Kestrel's context engine sent (file only, `kestrel/completionContext` after each task): the "
            f"definition of the cross-file name at the cursor in {e['sent_the_name']} of {e['tasks']} tasks; "
            f"{e['chars_p50']} characters of definitions at the median ({e['chars_max']} at most). Misses: "
            f"{', '.join(e['misses']) or 'none'}."]


def _results(doc: dict[str, Any]) -> list[str]:
    systems = doc["systems"]
    out = ["### Results", "", *_md_table(HEADER, [stats_row(s, st) for s, st in doc["overall"].items()]), "",
           f"Tasks the file-only raw model already completes exactly: {doc['raw_exact_tasks']} of "
           f"{doc['overall']['raw']['tasks']} (CrossCodeEval would drop them).", "",
           "By package and by kind of use (" + ("*type*: the name at the cursor is a type name" if _language(doc) ==
                                                "typescript" else "*annotation*: the name at the cursor is in a type "
                                                "annotation") + "; *code*: elsewhere), exact / useful / mean edit sim "
           "per system:", ""]
    groups = [(p, b) for p, b in doc["by_package"].items()] + [(f"*{k}*", b) for k, b in doc["by_kind"].items()]
    rows = [[g, str(next(iter(b.values()))["tasks"])] + [
        f"{_pct(b[s]['exact_rate'])} / {_pct(b[s]['useful_rate'])} / {_num(b[s]['edit_sim'])}" for s in systems]
        for g, b in groups]
    out += _md_table(["package or kind", "tasks", *systems], rows)
    out += ["", "Latency by the order of asking (the system asked first paid for its whole prompt; a later one may "
            "find part of it cached from the system before it):", ""]
    out += _md_table(["system", "asked first: p50 / p95 ms (tasks)", "asked later: p50 / p95 ms (tasks)"],
                     [[s, f"{_ms(v['first']['p50'])} / {_ms(v['first']['p95'])} ({v['first']['n']})",
                       f"{_ms(v['later']['p50'])} / {_ms(v['later']['p95'])} ({v['later']['n']})"]
                      for s, v in doc["latency_by_order"].items()])
    return out + _engine(doc)


def render_markdown(doc: dict[str, Any], command: str) -> str:
    """The repository section of QUALITY.md (starting with MARKER)."""
    cfg = doc["config"]
    ts = _language(doc) == "typescript"
    sampled = "every candidate" if cfg["full"] else f"a sample of {cfg['sample']} spread over the packages"
    code = [
        "Pinned in `bench/repo_context/packages.toml` (name, version, sha256 of the wheel), downloaded at eval time with "
        "`pip download --no-deps` into `.tools/eval-data/` and checked; nothing is vendored or installed. Pure-Python "
        "packages whose code line started or was rewritten in 2025–2026, after Qwen2.5-Coder was trained (code they "
        "carry over from older versions may still be known to it).",
    ] if not ts else [
        "The TypeScript packages of the languages section, pinned in `bench/quality/languages.toml` (name, version, "
        "sha256 of the tarball `npm pack` writes), fetched by `bench/quality/lang_sources.py` into `.tools/eval-data/` "
        "and checked; the package's `src/` (its `.ts` sources) is the workspace. Versions published in 2025–2026, after "
        "Qwen2.5-Coder was trained (code they carry over from older versions may still be known to it).",
    ]
    out = [
        TS_MARKER if ts else MARKER,
        "## Repository context: cross-file completions in real " + ("TypeScript" if ts else "Python")
        + " packages (CrossCodeEval-style)",
        "",
        f"Generated by `{command}` from `{cfg['out']}`; do not edit by hand. Model: "
        f"{doc['model']} ({doc['endpoint']}); systems: {', '.join(doc['systems'])}; wall time {doc['wall_seconds']:.0f} s. "
        f"Kestrel measured: {_measured(cfg.get('kestrel'))}.",
        "",
        f"- Tasks: {len(doc['records'])} ({sampled}, "
        f"seed {cfg['seed']}{', at most ' + str(cfg['limit']) + ' (a smoke run)' if cfg.get('limit') else ''}) of "
        f"{doc['counts']['tasks']:,} candidates.",
        "",
        "### The code",
        "",
        *code,
        "",
        *_packages(doc),
        "",
        "### How it is measured",
        "",
        *_method(doc),
        "",
        *_results(doc),
        "",
        "### Paired margins",
        "",
        "The first system minus the second on the same tasks: points for exact, useful, noise (lower is better) and "
        "uses name (95% exact interval conditional on the discordant tasks, McNemar's exact p; +only the first / "
        "-only the second), and the mean difference in edit similarity (95% normal interval).",
        "",
        *_md_table(["comparison", "exact", "useful", "noise", "uses name", "edit sim"],
                   [[pair.replace("|", " − "), *margin_cells(m)] for pair, m in doc["margins"].items()]),
    ]
    for key, (a, b, title) in EXAMPLES.items():
        if not {a, b} <= set(doc["systems"]):
            continue  # the run did not ask one of the two
        out += ["", f"### Examples: {title}", ""]
        examples = doc["examples"].get(key) or []
        if not examples:
            out.append("(none in this run)")
        for ex in examples:
            out.append(f"- `{ex['task_id']}`: expected {_code(ex['expected'])}")
            out += [f"  - {s}: {_code(ex[s])} (edit sim {ex[s + '_sim']:.2f})" for s in doc["systems"] if s in ex]
    out += ["", "(`⏎` marks a newline.)", ""]
    return "\n".join(out)


def write_section(md: Path, section: str) -> None:
    """Replace the repository section of QUALITY.md (from MARKER to the end), or append it; keep the rest.
    The TypeScript section (`section` starting with TS_MARKER) is the last: from TS_MARKER to the end;
    the Python section goes before it, and keeps it."""
    text = md.read_text(encoding="utf-8") if md.exists() else "# Quality\n"
    ts_part = ""
    if not section.startswith(TS_MARKER) and TS_MARKER in text:
        ts_part = "\n" + text[text.index(TS_MARKER):].rstrip("\n") + "\n"
    if TS_MARKER in text:
        text = text[: text.index(TS_MARKER)]
    if not section.startswith(TS_MARKER) and MARKER in text:
        text = text[: text.index(MARKER)]
    md.write_text(text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n" + ts_part, encoding="utf-8")


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
