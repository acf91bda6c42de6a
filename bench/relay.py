"""`relay`: chat relay capacity through the server. A `kestrel/chat` turn streams
`kestrel/chatDelta` notifications (coalesced per server event-loop tick); the mock emits
token k at ttft + k/R. For each rate R we time, at the client, when each token's last
character arrives, and compare it with the mock's schedule.

The client cannot see the mock's clock, so the schedule is anchored at the stream's best
token: lag_k = arrival_k − k/R − min_j(arrival_j − j/R) (lag ≥ 0, the delay above the
least-delayed token; a constant per-token cost cancels out and is reported separately as
the JSON-RPC one-way hop, `kestrel/getStatus` RTT / 2). A relay that keeps up shows a flat
lag (jitter only); one that cannot shows lag growing along the stream (slope > 0). The same
stream read directly with the SDK, interleaved in the same process, is the reference: it
shows what the mock and the transport alone deliver."""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from .common import MockProcess, init_options, percentile, summary
from .lsp_client import kestrel_server
from .sdk import TERMINAL, SdkProbe

TOKEN_RE = re.compile(r"\s+|\w+|[^\w\s]")  # the mock's tokenizer
PROMPT = "relay benchmark: stream the configured text"
MODEL = "mock-model"


def make_text(n_tokens: int) -> str:
    words = [f"w{i % 97}" for i in range(n_tokens // 2 + 1)]
    text = " ".join(words)
    toks = TOKEN_RE.findall(text)
    return "".join(toks[:n_tokens])


def token_ends(text: str) -> list[int]:
    ends, pos = [], 0
    for tok in TOKEN_RE.findall(text):
        pos += len(tok)
        ends.append(pos)
    return ends


def token_times(arrivals: list[tuple[float, int]], ends: list[int]) -> list[float]:
    """arrivals: (time, cumulative chars received). Token k has arrived when its last char has."""
    out: list[float] = []
    j = 0
    for e in ends:
        while j < len(arrivals) and arrivals[j][1] < e:
            j += 1
        if j == len(arrivals):
            break
        out.append(arrivals[j][0])
    return out


def analyse(tt: list[float], t_send: float, rate: float, n_expected: int, n_chunks: int) -> dict[str, Any]:
    n = len(tt)
    res: dict[str, Any] = {"tokens": n, "complete": n == n_expected, "chunks": n_chunks,
                           "tokens_per_chunk": round(n / n_chunks, 2) if n_chunks else None}
    if n < 2:
        return res
    first = tt[0]
    span = tt[-1] - first
    res["ttft_ms"] = (first - t_send) * 1000
    res["delivered_tps"] = (n - 1) / span if span > 0 else None
    if rate > 0:
        base = min(t - k / rate for k, t in enumerate(tt))
        lags = [(t - base - k / rate) * 1000 for k, t in enumerate(tt)]
        xs = [k / rate for k in range(n)]
        mx, my = statistics.fmean(xs), statistics.fmean(lags)
        var = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, lags)) / var if var else 0.0  # ms of lag per s
        d = max(1, n // 10)
        res["lags_ms"] = lags
        res["slope"] = slope / 1000.0  # s of lag per s of stream (0 = keeps up; 1 = half speed)
        res["growth_ms"] = statistics.median(lags[-d:]) - statistics.median(lags[:d])
    return res


class Streams:
    """The stream sources compared side by side: Kestrel, and the SDK directly."""

    def __init__(self, kind: str, client: Any, base_url: str) -> None:
        self.kind = kind
        self.client = client
        self.probe = SdkProbe(kind, base_url, "on")
        self._turn = 0

    async def start(self) -> None:
        await self.probe.start()

    async def aclose(self) -> None:
        await self.probe.aclose()

    async def kestrel(self) -> tuple[float, list[tuple[float, int]], str]:
        self._turn += 1
        turn_id = f"relay-{self._turn}"
        arrivals: list[tuple[float, int]] = []
        cum = 0

        def on_note(method: str, params: Any, t: float) -> None:
            nonlocal cum
            if method == "kestrel/chatDelta" and params.get("id") == turn_id:
                cum += len(params["delta"])
                arrivals.append((t, cum))

        self.client.on_notification = on_note
        try:
            t0 = time.perf_counter()
            res = await self.client.request("kestrel/chat", {"id": turn_id, "prompt": PROMPT})
        finally:
            self.client.on_notification = None
        if res.get("error"):
            raise RuntimeError(f"kestrel/chat failed: {res['error']}")
        return t0, arrivals, res.get("text") or ""

    async def sdk_typed(self) -> tuple[float, list[tuple[float, int]], str]:
        """`client.chat.completions.create(stream=True)`, typed chunks (the SDK as documented)."""
        arrivals: list[tuple[float, int]] = []
        parts: list[str] = []
        cum = 0
        sdk = self.probe.client
        t0 = time.perf_counter()
        stream = await sdk.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": PROMPT}], stream=True)
        async for chunk in stream:
            for c in chunk.choices:
                d = c.delta.content
                if d:
                    cum += len(d)
                    arrivals.append((time.perf_counter(), cum))
                    parts.append(d)
        return t0, arrivals, "".join(parts)

    async def sdk_raw(self) -> tuple[float, list[tuple[float, int]], str]:
        """The SDK's transport with `iter_lines` + `json.loads` (what the server does), or the
        Responses WebSocket with `recv_bytes` + `json.loads`."""
        arrivals: list[tuple[float, int]] = []
        parts: list[str] = []
        cum = 0
        sdk, conn = self.probe.client, self.probe.conn
        t0 = time.perf_counter()
        if self.kind == "responses-ws":
            await conn.send_raw(json.dumps({"type": "response.create", "model": MODEL,
                                            "input": [{"role": "user", "content": PROMPT}]}))
            while True:
                ev = json.loads(await conn.recv_bytes())
                et = ev.get("type")
                if et == "response.output_text.delta":
                    d = ev.get("delta") or ""
                    cum += len(d)
                    arrivals.append((time.perf_counter(), cum))
                    parts.append(d)
                elif et in TERMINAL:
                    break
            return t0, arrivals, "".join(parts)
        async with sdk.chat.completions.with_streaming_response.create(
                model=MODEL, messages=[{"role": "user", "content": PROMPT}], stream=True) as response:
            async for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                for c in json.loads(data).get("choices") or ():
                    d = (c.get("delta") or {}).get("content")
                    if d:
                        cum += len(d)
                        arrivals.append((time.perf_counter(), cum))
                        parts.append(d)
        return t0, arrivals, "".join(parts)


def _agg(runs: list[dict[str, Any]], rate: float) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(runs), "complete": all(r.get("complete") for r in runs),
                           "tokens_per_chunk_p50": percentile([r["tokens_per_chunk"] for r in runs
                                                               if r.get("tokens_per_chunk")], 50)}
    tps = [r["delivered_tps"] for r in runs if r.get("delivered_tps")]
    out["delivered_tps"] = round(statistics.median(tps), 0) if tps else None
    out["ttft_ms"] = summary([r["ttft_ms"] for r in runs if "ttft_ms" in r])
    if rate > 0:
        lags = [x for r in runs for x in r.get("lags_ms", [])]
        out["lag_ms"] = summary(lags)
        out["slope"] = round(statistics.median([r["slope"] for r in runs]), 4)
        out["growth_ms"] = round(statistics.median([r["growth_ms"] for r in runs]), 3)
        out["keeps_up"] = keeps_up(out, rate)
    return out


def keeps_up(a: dict[str, Any], rate: float) -> bool:
    """No lag growth: the lag at the end of the stream is within 2 ms of the lag at its start
    and the delivered rate is at least 97% of the mock's."""
    return bool(a["complete"] and a["growth_ms"] <= 2.0 and (a["delivered_tps"] or 0) >= 0.97 * rate)


async def run_kind(kind: str, rates: list[float], seconds: float, unlimited_tokens: int, reps: int,
                   out: Path) -> dict[str, Any]:
    with MockProcess(out / "mock.log", text="warm up", ttft_ms=0, tps=0) as mock:
        async with kestrel_server(init_options(kind, mock.base_url, "on"), out / "server.log", raw=True) as client:
            s = Streams(kind, client, mock.base_url)
            await s.start()
            try:
                sources = {"kestrel": s.kestrel, "sdk_raw": s.sdk_raw}
                if kind == "chat":
                    sources["sdk"] = s.sdk_typed
                ref = "sdk_raw"  # capacity reference: what the mock + transport deliver
                tok_ref = "sdk" if kind == "chat" else "sdk_raw"  # per-token reference at 1,000 tok/s
                for src in sources.values():  # warm up every path (imports, pools, pydantic)
                    await src()
                per_rate: dict[str, Any] = {}
                for rate in rates:
                    n = unlimited_tokens if rate <= 0 else max(400, int(rate * seconds * (2 if rate <= 1000 else 1)))
                    text = make_text(n)
                    ends = token_ends(text)
                    mock.configure(text=text, tps=rate, ttft_ms=0)
                    names = list(sources) + (["sdk_aa"] if rate == 1000 else [])  # A/A: the reference twice
                    runs: dict[str, list[dict]] = {k: [] for k in names}
                    wrong: dict[str, int] = {k: 0 for k in names}
                    for rep in range(reps):
                        order = names[rep % len(names):] + names[: rep % len(names)]
                        for name in order:
                            fn = sources[tok_ref] if name == "sdk_aa" else sources[name]
                            t0, arrivals, got = await fn()
                            wrong[name] += got != text
                            tt = token_times(arrivals, ends)
                            runs[name].append(analyse(tt, t0, rate, len(ends), len(arrivals)))
                            await asyncio.sleep(0.02)
                    res = {name: _agg(rs, rate) for name, rs in runs.items()}
                    res["tokens"] = len(ends)
                    res["wrong_text"] = wrong
                    if rate > 0:
                        k, r = res["kestrel"]["lag_ms"], res[ref]["lag_ms"]
                        res["added_lag_ms"] = {"p50": round(k["p50"] - r["p50"], 3), "p95": round(k["p95"] - r["p95"], 3)}
                        t = res[tok_ref]["lag_ms"]
                        res["added_lag_vs_tok_ref_ms"] = {"p50": round(k["p50"] - t["p50"], 3), "p95": round(k["p95"] - t["p95"], 3)}
                        if "sdk_aa" in res:
                            aa = res["sdk_aa"]["lag_ms"]
                            res["aa_noise_ms"] = {"p50": round(aa["p50"] - t["p50"], 3), "p95": round(aa["p95"] - t["p95"], 3)}
                    res["added_ttft_ms_p50"] = round(res["kestrel"]["ttft_ms"]["p50"] - res[ref]["ttft_ms"]["p50"], 3)
                    per_rate[str(int(rate)) if rate > 0 else "unlimited"] = res
                    kr = res["kestrel"]
                    print(f"  {kind:13s} R={rate or 'max':>6}  kestrel {kr['delivered_tps']} tok/s "
                          f"lag p50/p95 {kr.get('lag_ms', {}).get('p50')}/{kr.get('lag_ms', {}).get('p95')} ms "
                          f"growth {kr.get('growth_ms')} ms  | {ref} {res[ref]['delivered_tps']} tok/s "
                          f"growth {res[ref].get('growth_ms')} ms", flush=True)
                rtt = []
                for _ in range(50):
                    t0 = time.perf_counter()
                    await client.get_status()
                    rtt.append((time.perf_counter() - t0) * 1000)
            finally:
                await s.aclose()
    kept = [float(r) for r, v in per_rate.items() if r != "unlimited" and v["kestrel"]["keeps_up"]]
    ref_kept = [float(r) for r, v in per_rate.items() if r != "unlimited" and v[ref]["keeps_up"]]
    at_1000 = per_rate.get("1000") or {}
    return {
        "kind": kind,
        "reference": ref,
        "per_token_reference": tok_ref,
        "rates": per_rate,
        "relay_max_tps": _max_contiguous(rates, kept),
        "reference_max_tps": _max_contiguous(rates, ref_kept),
        "unlimited_tps": {k: v["delivered_tps"] for k, v in per_rate.get("unlimited", {}).items() if isinstance(v, dict) and "delivered_tps" in v},
        "per_token_added_ms_at_1000": at_1000.get("added_lag_vs_tok_ref_ms"),
        "aa_noise_ms_at_1000": at_1000.get("aa_noise_ms"),
        "jsonrpc_one_way_ms_p50": round(percentile(rtt, 50) / 2, 3),
    }


def _max_contiguous(rates: list[float], kept: list[float]) -> float | None:
    """The highest rate such that it and every lower tested rate kept up."""
    best = None
    for r in sorted(x for x in rates if x > 0):
        if r not in kept:
            break
        best = r
    return best


async def run(kinds: list[str], rates: list[float], seconds: float, unlimited_tokens: int, reps: int,
              out: Path) -> dict[str, Any]:
    return {kind: await run_kind(kind, rates, seconds, unlimited_tokens, reps, out) for kind in kinds}
