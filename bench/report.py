"""Targets, pass/fail checks and the RESULTS.md rendering."""

from __future__ import annotations

from typing import Any

TARGETS = {
    "inline_added_p50_ms": 1.0,
    "inline_added_p95_ms": 3.0,
    "cold_start_ms": 300.0,
    "rss_mb": 120.0,
    "rss_growth_mb": 0.5,  # "no growth" 500 -> 1000, with half a MB of allocator slack
    "stale": 0,
}


def checks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    res = doc["results"]
    out: list[dict[str, Any]] = []

    def add(name: str, value: Any, target: str, ok: bool) -> None:
        out.append({"name": name, "value": value, "target": target, "pass": bool(ok)})

    for kind, r in (res.get("inline_added") or {}).items():
        if not isinstance(r, dict) or "added_ms" not in r:
            continue
        p50, p95 = r["added_ms"]["p50"], r["added_ms"]["p95"]
        add(f"inline_added[{kind}] p50 ms", p50, f"<= {TARGETS['inline_added_p50_ms']}", p50 <= TARGETS["inline_added_p50_ms"])
        add(f"inline_added[{kind}] p95 ms", p95, f"<= {TARGETS['inline_added_p95_ms']}", p95 <= TARGETS["inline_added_p95_ms"])
    cs = res.get("cold_start") or {}
    if "spawn_to_initialize_ms" in cs:
        v = cs["spawn_to_initialize_ms"]["p50"]
        add("cold_start p50 ms (spawn -> initialize)", v, f"<= {TARGETS['cold_start_ms']:g}", v <= TARGETS["cold_start_ms"])
    for kind, r in (res.get("rss_mb") or {}).items():
        if not isinstance(r, dict) or "after_2n_mb" not in r:
            continue
        add(f"rss_mb[{kind}] after {2 * r['n']}", r["after_2n_mb"], f"<= {TARGETS['rss_mb']:g}", r["after_2n_mb"] <= TARGETS["rss_mb"])
        g = r["growth_n_to_2n_mb"]
        add(f"rss_mb[{kind}] growth {r['n']}->{2 * r['n']}", g, f"<= {TARGETS['rss_growth_mb']} (none)",
            g is not None and g <= TARGETS["rss_growth_mb"])
    for kind, r in (res.get("keystroke_storm") or {}).items():
        if not isinstance(r, dict) or "client" not in r:
            continue
        # A client drops the answer to a request it has cancelled (LSP: the result is ignored), so
        # only answers to still-live requests can show a stale completion.
        add(f"keystroke_storm[{kind}] stale shown (answers to live requests)", r["client"]["stale_live"], "== 0",
            r["client"]["stale_live"] == 0)
    return out


def _f(x: Any, d: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{d}f}"
    return str(x)


def _mark(ok: bool) -> str:
    return "✅" if ok else "❌"


def render_markdown(doc: dict[str, Any]) -> str:
    m, cfg, res = doc["machine"], doc["config"], doc["results"]
    L: list[str] = []
    L.append("# Kestrel benchmark results\n")
    L.append(f"Run: {m['date']}, commit `{m.get('git_commit')}`, mode **{'quick' if cfg['quick'] else 'full'}**, "
             f"LSP client in the benchmark: `{cfg['client']}`, total wall time {doc['wall_seconds']['total']} s.\n")
    L.append(f"Machine: {m['cpu_model']} × {m['cpu_count']} CPUs (affinity {m.get('affinity_cpus')}), "
             f"{m['ram_gb']} GB RAM, Linux {m['kernel']}; Python {m['python']}, openai {m['openai']}, httpx2 "
             f"{m['httpx2']}, pygls {m['pygls']}, lsprotocol {m['lsprotocol']}, hypercorn {m['hypercorn']}, h2 {m['h2']}.\n")
    L.append("The mock model (`python -m kestrel.testing.mock_model`) runs as its own process; the server is "
             "`python -m kestrel` over stdio; HTTP kinds use h2c (`http2: on`) except `chat-h1` (`http2: off`).\n")

    ia = res.get("inline_added")
    if ia:
        L.append("## inline_added_ms — LSP end-to-end vs the same request straight through the SDK\n")
        if "error" in ia:
            L.append(f"**failed:** {ia['error']}\n")
        else:
            L.append("Mock ttft 0, tps 0, text `compute(x)\\n`; each sample is a new document line (no cache, no "
                     "reuse). LSP = inline request sent → result received. SDK = same body, warm `AsyncOpenAI` in "
                     "the benchmark process, until the answer's line is complete (stream then read to the end). "
                     "Pairs interleaved in one process, order rotated. *added* = LSP − SDK per pair. "
                     "*A/A noise* = SDK − SDK per pair (the noise floor of a paired difference). "
                     "*RTT* = `kestrel/getStatus` round trip (JSON-RPC alone). Target: added p50 ≤ 1 ms, p95 ≤ 3 ms.\n")
            L.append("| kind | n | LSP p50 / p95 ms | SDK p50 / p95 ms | **added p50 / p95 ms** | ratio p50 / p95 | A/A noise p50 / p95 ms | RTT p50 ms | upstream conns (20 server reqs) | target |")
            L.append("|---|---|---|---|---|---|---|---|---|---|")
            for kind, r in ia.items():
                if "error" in r:
                    L.append(f"| {kind} | failed: {r['error']} |||||||||")
                    continue
                a = r["added_ms"]
                ok = a["p50"] <= 1.0 and a["p95"] <= 3.0
                conns = r["server_only_20_requests"]["connections_opened"]
                L.append(f"| {kind} | {r['lsp_ms']['n']} | {_f(r['lsp_ms']['p50'])} / {_f(r['lsp_ms']['p95'])} | "
                         f"{_f(r['sdk_ms']['p50'])} / {_f(r['sdk_ms']['p95'])} | **{_f(a['p50'])} / {_f(a['p95'])}** | "
                         f"{_f(r['ratio_p50'])} / {_f(r['ratio_p95'])} | {_f(r['noise_ms']['p50'])} / {_f(r['noise_ms']['p95'])} | "
                         f"{_f(r['lsp_rtt_ms']['p50'])} | {conns if kind != 'responses-ws' else 'ws'} | {_mark(ok)} |")
            wrong = {k: (r.get("wrong_results_lsp"), r.get("wrong_results_sdk")) for k, r in ia.items() if "error" not in r}
            L.append(f"\nWrong answers (LSP, SDK): {wrong}.\n")

    cs = res.get("cold_start")
    if cs:
        L.append("## cold_start_ms\n")
        if "error" in cs:
            L.append(f"**failed:** {cs['error']}\n")
        else:
            a, b, c = cs["spawn_to_initialize_ms"], cs["spawn_to_first_completion_ms"], cs["python_interpreter_start_ms"]
            L.append("| measure | n | p50 ms | p95 ms | target |")
            L.append("|---|---|---|---|---|")
            L.append(f"| spawn → `initialize` result | {a['n']} | {_f(a['p50'], 1)} | {_f(a['p95'], 1)} | ≤ 300 {_mark(a['p50'] <= 300)} |")
            L.append(f"| spawn → first inline completion (chat, h2c) | {b['n']} | {_f(b['p50'], 1)} | {_f(b['p95'], 1)} | – |")
            L.append(f"| bare `python -c pass` (for scale) | {c['n']} | {_f(c['p50'], 1)} | {_f(c['p95'], 1)} | – |")
            L.append("")

    rs = res.get("rss_mb")
    if rs:
        L.append("## rss_mb (server VmRSS)\n")
        if "error" in rs:
            L.append(f"**failed:** {rs['error']}\n")
        else:
            n = next(iter(rs.values())).get("n")
            L.append(f"| kind | after initialize | idle, provider ready | after {n} | after {2 * n} | growth {n}→{2 * n} | per completion | then {n} didChange only | target (≤ 120 MB, no growth) |")
            L.append("|---|---|---|---|---|---|---|---|---|")
            for kind, r in rs.items():
                if "error" in r:
                    L.append(f"| {kind} | failed: {r['error']} ||||||||")
                    continue
                ok = r["after_2n_mb"] <= 120 and r["growth_n_to_2n_mb"] <= 0.5
                L.append(f"| {kind} | {_f(r['after_initialize_mb'], 1)} | {_f(r['idle_ready_mb'], 1)} | {_f(r['after_n_mb'], 1)} | "
                         f"{_f(r['after_2n_mb'], 1)} | {_f(r['growth_n_to_2n_mb'])} MB | {_f(r['growth_kb_per_completion'])} KB | +{_f(r.get('growth_n_didchange_only_mb'))} MB | {_mark(ok)} |")
            L.append("")

    ks = res.get("keystroke_storm")
    if ks:
        L.append("## keystroke_storm\n")
        if "error" in ks:
            L.append(f"**failed:** {ks['error']}\n")
        else:
            any_r = next(iter(ks.values()))
            L.append(f"{any_r.get('chars_per_s')} chars/s for {any_r.get('seconds')} s; per keystroke: didChange, "
                     "`$/cancelRequest` for the pending inline request, new inline request. Mock ttft 30 ms, 400 tok/s. "
                     "Stale = a result whose text does not continue the document as it is when it arrives "
                     "(split: for a request still live / already cancelled by the client). Only the first kind can "
                     "be shown: an LSP client ignores the answer to a request it cancelled, so the target is 0 live; "
                     "the cancelled ones are answers that crossed the `$/cancelRequest` in the pipe. "
                     "Connections are counted after the server's prewarm.\n")
            L.append("| kind | keys | upstream reqs (per key) | streams cancelled | tokens sent / after cancel | new conns | results / cancelled errs | **stale** (live / cancelled) | late result after cancel p50 / max ms | visible latency p50 / p95 ms |")
            L.append("|---|---|---|---|---|---|---|---|---|---|")
            for kind, r in ks.items():
                if "error" in r:
                    L.append(f"| {kind} | failed: {r['error']} |||||||||")
                    continue
                c = r["client"]
                conns = f"{r['connections_opened']}" + (f" (+{r['ws_connections']} ws)" if r.get("ws_connections") else "")
                late = r["late_result_after_cancel_ms"]
                L.append(f"| {kind} | {c['keystrokes']} | {r['upstream_requests']} ({r['upstream_per_keystroke']}) | "
                         f"{r['streams_cancelled']} | {r['tokens_sent']} / {r['tokens_after_cancel']} | {conns} | {c['results']} / {c['cancelled_errors']} | "
                         f"**{c['stale']}** ({c['stale_live']} / {c['stale_cancelled']}) {_mark(c['stale_live'] == 0)} | "
                         f"{_f(late['p50'])} / {_f(late['max'])} | {_f(r['visible_latency_ms']['p50'], 1)} / {_f(r['visible_latency_ms']['p95'], 1)} |")
            L.append("")

    pc = res.get("sdk_parse_cost")
    if pc:
        L.append("## sdk_parse_cost (µs per event, best of 5 timeit repeats)\n")
        if "error" in pc:
            L.append(f"**failed:** {pc['error']}\n")
        else:
            L.append("| event | bytes | `json.loads` µs | typed parse | typed µs | extra µs | × |")
            L.append("|---|---|---|---|---|---|---|")
            for kind, e in pc["events"].items():
                for label, t in e["typed"].items():
                    L.append(f"| `{kind}` | {e['bytes']} | {_f(e['json_loads_us'])} | {label} | {_f(t['us'])} | {_f(t['extra_us'])} | {_f(t['ratio_vs_json'], 1)} |")
            L.append("")

    lm = res.get("local_model")
    if lm:
        L.append("## local_model (embedded llama.cpp on this CPU)\n")
        if "error" in lm or "skipped" in lm:
            L.append(f"**not run:** {lm.get('error') or lm.get('skipped')}\n")
        else:
            a = lm["server_alone"]
            L.append(f"Model: `{lm['model']}` ({lm['source']}).\n")
            L.append("| measure | p50 ms | p95 ms | n |")
            L.append("|---|---|---|---|")
            for label, key in (("llama.cpp alone: TTFT, cold prompt", "ttft_cold_ms"),
                               ("llama.cpp alone: TTFT, warm prefix (one typed char)", "ttft_warm_ms")):
                L.append(f"| {label} | {_f(a[key]['p50'], 1)} | {_f(a[key]['p95'], 1)} | {a[key]['n']} |")
            L.append(f"| inline completion through kestrel-lsp (warm) | {_f(lm['lsp_inline_ms']['p50'], 1)} | {_f(lm['lsp_inline_ms']['p95'], 1)} | {lm['lsp_inline_ms']['n']} |")
            L.append(f"| same child, SDK direct, to first line (warm) | {_f(lm['sdk_same_child_ms']['p50'], 1)} | {_f(lm['sdk_same_child_ms']['p95'], 1)} | {lm['sdk_same_child_ms']['n']} |")
            L.append("")
            L.append(f"Tokens/s (decode, llama.cpp alone): p50 {_f(a['tokens_per_s']['p50'], 1)}. "
                     f"Kestrel added (p50 difference): {_f(lm['added_p50_ms'])} ms. "
                     f"First completion after start (includes loading the model): {_f(lm['lsp_first_completion_ms'], 0)} ms.\n")

    cks = doc.get("checks") or []
    if cks:
        L.append("## Targets\n")
        L.append("| check | value | target | |")
        L.append("|---|---|---|---|")
        for c in cks:
            L.append(f"| {c['name']} | {_f(c['value'])} | {c['target']} | {_mark(c['pass'])} |")
        L.append("")
    L.append(f"Wall time per benchmark (s): {doc['wall_seconds']}\n")
    return "\n".join(L)
