"""`steer_ms`: redirect a running chat answer. While a `kestrel/chat` turn streams (mock ttft
20 ms, 200 tok/s), send `kestrel/steer {id, text}` and time steer sent → first delta of the
redirected continuation (a mock rule answers the steer text with `STEERED ...`, so it is
recognisable). Native: `responses-ws` with mock steering on (`response.steer`, the successor
response continues on the same lane). Emulated: `chat` over h2c, and `responses-ws` with mock
steering off (stop the stream, re-ask with [history, partial answer, steer]). Both pay the
mock's TTFT once; the reference is the mock's own TTFT measured with the SDK on the same
transport, one probe interleaved per steer sample."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from .common import MockProcess, init_options, summary
from .lsp_client import kestrel_server
from .sdk import TERMINAL, SdkProbe

STEER = "please switch to the steer topic"
STEERED = "STEERED continuation ok"
PROBE = "ttft-probe"
LONG = " ".join(f"word{i}" for i in range(400))
MODES = {  # mode label -> (provider kind, mock steering)
    "native (responses-ws)": ("responses-ws", True),
    "emulated (responses-ws, steering off)": ("responses-ws", False),
    "emulated (chat, h2c)": ("chat", True),
}
TTFT_MS, TPS = 20.0, 200.0


class Probe(SdkProbe):
    """The mock's own TTFT with the SDK, on the same transport as the provider."""

    async def ttft_ms(self) -> float:
        first = None
        t0 = time.perf_counter()
        if self.kind == "responses-ws":
            await self.conn.send_raw(json.dumps({"type": "response.create", "model": "mock-model",
                                                 "input": [{"role": "user", "content": PROBE}]}))
            while True:
                ev = json.loads(await self.conn.recv_bytes())
                if first is None and ev.get("type") == "response.output_text.delta":
                    first = time.perf_counter()
                if ev.get("type") in TERMINAL:
                    break
        else:
            async with self.client.chat.completions.with_streaming_response.create(
                    model="mock-model", messages=[{"role": "user", "content": PROBE}], stream=True) as response:
                async for line in response.iter_lines():
                    if first is None and line.startswith("data:") and line[5:].strip() != "[DONE]":
                        if any((c.get("delta") or {}).get("content") for c in json.loads(line[5:]).get("choices") or ()):
                            first = time.perf_counter()
        if first is None:
            raise RuntimeError("the TTFT probe got no delta")
        return (first - t0) * 1000


async def steer_once(client: Any, n: int, wait_after_first_ms: float) -> dict[str, Any]:
    turn_id = f"steer-{n}"
    loop = asyncio.get_running_loop()
    first_delta = loop.create_future()
    redirected = loop.create_future()
    steered_note: dict = {}
    t_steer: list[float] = []

    def on_note(method: str, params: Any, t: float) -> None:
        if params.get("id") != turn_id:
            return
        if method == "kestrel/chatDelta":
            if not first_delta.done():
                first_delta.set_result(t)
            if t_steer and "STEERED" in params["delta"] and not redirected.done():
                redirected.set_result(t)
        elif method == "kestrel/chatSteered":
            steered_note.update(params)

    client.on_notification = on_note
    try:
        _, turn = client.send_request("kestrel/chat", {"id": turn_id, "prompt": "write a long answer"})
        await asyncio.wait_for(first_delta, 10)
        await asyncio.sleep(wait_after_first_ms / 1000)
        t_steer.append(time.perf_counter())
        ack = await client.request("kestrel/steer", {"id": turn_id, "text": STEER})
        t_red = await asyncio.wait_for(redirected, 10)
        result = await asyncio.wait_for(turn, 30)
    finally:
        client.on_notification = None
    return {
        "steer_ms": (t_red - t_steer[0]) * 1000,
        "accepted": ack.get("accepted"),
        "mode": ack.get("mode"),
        "commit_ms": steered_note.get("commitMs"),
        "ok": STEERED in (result.get("text") or "") and bool(result.get("steers")) and not result.get("error"),
    }


async def run_mode(label: str, kind: str, steering: bool, samples: int, warmup: int, out: Path) -> dict[str, Any]:
    rules = [{"match": STEER, "text": STEERED}, {"match": PROBE, "text": "probe ok"}]
    with MockProcess(out / "mock.log", text=LONG, ttft_ms=TTFT_MS, tps=TPS, rules=rules, steering=steering) as mock:
        async with kestrel_server(init_options(kind, mock.base_url, "on"), out / "server.log", raw=True) as client:
            probe = Probe(kind, mock.base_url, "on")
            await probe.start()
            try:
                steer_ms: list[float] = []
                commit_ms: list[float] = []
                ttft_ms: list[float] = []
                modes: dict[str, int] = {}
                bad = 0
                for j in range(warmup + samples):
                    steps = ["steer", "probe"] if j % 2 == 0 else ["probe", "steer"]
                    r: dict[str, Any] = {}
                    ref = 0.0
                    for step in steps:
                        if step == "steer":
                            r = await steer_once(client, j, 5.0 + (j % 3) * 5)
                        else:
                            ref = await probe.ttft_ms()
                        await asyncio.sleep(0.005)
                    if j < warmup:
                        continue
                    modes[str(r["mode"])] = modes.get(str(r["mode"]), 0) + 1
                    bad += not (r["ok"] and r["accepted"])
                    steer_ms.append(r["steer_ms"])
                    ttft_ms.append(ref)
                    if r["commit_ms"] is not None:
                        commit_ms.append(r["commit_ms"])
                stats = mock.stats()
            finally:
                await probe.aclose()
    s, t = summary(steer_ms), summary(ttft_ms)
    return {
        "kind": kind,
        "mock_steering": steering,
        "samples": samples,
        "steer_ms": s,
        "mock_ttft_ms": t,
        "commit_ms": summary(commit_ms),
        "ratio_p50": round(s["p50"] / t["p50"], 3) if t["p50"] else None,
        "ratio_p95": round(s["p95"] / t["p95"], 3) if t["p95"] else None,
        "added_p50_ms": round(s["p50"] - t["p50"], 3),
        "modes": modes,
        "failed": bad,
        "mock_steers_accepted": stats.get("steers_accepted"),
        "mock_steers_failed": stats.get("steers_failed"),
    }


async def run(samples: int, warmup: int, out: Path) -> dict[str, Any]:
    results = {}
    for label, (kind, steering) in MODES.items():
        r = results[label] = await run_mode(label, kind, steering, samples, warmup, out)
        print(f"  {label:38s} steer→redirected p50 {r['steer_ms']['p50']:.2f} p95 {r['steer_ms']['p95']:.2f} ms  "
              f"mock ttft p50 {r['mock_ttft_ms']['p50']:.2f}  ×{r['ratio_p50']}  commit p50 {r['commit_ms']['p50']}  "
              f"modes {r['modes']} failed {r['failed']}", flush=True)
    return results
