"""`inline_added_ms`: an inline completion through the LSP server vs the same request made
directly with the SDK, interleaved in one process, against one mock in its own process."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from .common import MOCK_TEXT, SUGGESTION, MockProcess, init_options, summary
from .lsp_client import kestrel_server
from .sdk import Baseline, request_params

ENDPOINT = {"chat": "/v1/chat/completions", "fim": "/v1/completions", "responses": "/v1/responses",
            "responses-ws": "ws_create"}

# A small but realistic Python file; the completion is asked for at the end of its last line.
HEADER = '''"""Order totals."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 1


def subtotal(items: list[Item]) -> float:
    return sum(i.price * i.quantity for i in items)


def tax(amount: float, rate: float = 0.2) -> float:
    return math.floor(amount * rate * 100) / 100


def compute(x: float) -> float:
    return subtotal([Item("a", x)]) + tax(x)


'''
TEMPLATE_MARK = 999_999


def document(i: int) -> tuple[str, int, int]:
    """A unique document for sample i: (text, line, character) with the cursor at the end
    of a non-empty last line, so the answer is single-line."""
    line = f"value_{i:06d} = "
    text = HEADER + line + "\n"
    return text, HEADER.count("\n"), len(line)


async def lsp_once(client: Any, i: int) -> tuple[float, str | None]:
    text, line, ch = document(i)
    client.change(text)
    await asyncio.sleep(0.002)  # let the server apply didChange before the clock starts
    t0 = time.perf_counter()
    result = await client.inline(line, ch)
    dt = (time.perf_counter() - t0) * 1000
    return dt, result


def capture_template(mock: MockProcess, kind: str) -> dict:
    """The body the server sent for the template sample."""
    mark = f"value_{TEMPLATE_MARK:06d}"
    for entry in reversed(mock.stats()["request_log"]):
        if entry["endpoint"] == ENDPOINT[kind] and mark in json.dumps(entry["body"]):
            if kind == "responses-ws" and entry["body"].get("generate") is False:
                continue
            return request_params(kind, entry["body"])
    raise RuntimeError(f"no {kind} request with the template marker reached the mock")


def params_for(template_json: str, i: int) -> dict:
    return json.loads(template_json.replace(f"value_{TEMPLATE_MARK:06d}", f"value_{i:06d}"))


async def run_kind(kind: str, http2: str, samples: int, warmup: int, out: Path) -> dict[str, Any]:
    with MockProcess(out / "mock.log", text=MOCK_TEXT) as mock:
        async with kestrel_server(init_options(kind, mock.base_url, http2), out / "server.log") as client:
            text0, _, _ = document(0)
            client.open(text0)
            # one LSP request at the template position: learn exactly what the server sends
            _, got = await lsp_once(client, TEMPLATE_MARK)
            template = json.dumps(capture_template(mock, kind))
            base = Baseline(kind, mock.base_url, http2)
            await base.start()
            try:
                wrong_lsp = wrong_sdk = 0
                lsp_ms: list[float] = []
                sdk_ms: list[float] = []
                diff_ms: list[float] = []
                noise_ms: list[float] = []
                rtt_ms: list[float] = []
                for j in range(warmup + samples):
                    i = 1 + j
                    params = params_for(template, i)
                    res: dict[str, tuple[float, str | None]] = {}

                    async def lsp() -> None:
                        res["lsp"] = await lsp_once(client, i)

                    async def sdk(name: str) -> None:
                        t0 = time.perf_counter()
                        text, answered = await base.run(params)
                        res[name] = ((answered - t0) * 1000, text)

                    # A (LSP), B (SDK) and B' (SDK again, an A/A pair that measures the noise
                    # floor of a paired difference), rotated so order effects cancel out.
                    steps = [lsp, lambda: sdk("sdk"), lambda: sdk("sdk2")]
                    r = j % 3
                    for step in steps[r:] + steps[:r]:
                        await step()
                        await asyncio.sleep(0.003)  # let the server finish the stream's tail
                    # a JSON-RPC round trip with no model work: the LSP transport's own cost
                    t0 = time.perf_counter()
                    await client.get_status()
                    rtt = (time.perf_counter() - t0) * 1000
                    if j < warmup:
                        continue
                    (la, ta), (lb, tb), (lb2, _) = res["lsp"], res["sdk"], res["sdk2"]
                    wrong_lsp += ta != SUGGESTION
                    wrong_sdk += (tb or "").rstrip("\n") != SUGGESTION
                    lsp_ms.append(la)
                    sdk_ms.append(lb)
                    diff_ms.append(la - lb)
                    noise_ms.append(lb2 - lb)
                    rtt_ms.append(rtt)
                await asyncio.sleep(0.1)
                ttfts = [e["ttftMs"] for e in client.status_events if e.get("ttftMs") is not None]
                stats = mock.stats()
                # the server alone: how many upstream connections do 20 completions open?
                mock.reset()
                for k in range(20):
                    await lsp_once(client, 900_000 + k)
                    await asyncio.sleep(0.003)
                await asyncio.sleep(0.05)
                server_stats = mock.stats()
            finally:
                await base.aclose()
    lsp, sdk, diff = summary(lsp_ms), summary(sdk_ms), summary(diff_ms)
    return {
        "kind": kind,
        "http2": http2,
        "samples": samples,
        "warmup": warmup,
        "lsp_ms": lsp,
        "sdk_ms": sdk,
        "added_ms": diff,
        "noise_ms": summary(noise_ms),
        "ratio_p50": round(lsp["p50"] / sdk["p50"], 3) if sdk["p50"] else None,
        "ratio_p95": round(lsp["p95"] / sdk["p95"], 3) if sdk["p95"] else None,
        "lsp_rtt_ms": summary(rtt_ms),
        "server_ttft_ms_p50": summary(ttfts[-samples:])["p50"] if ttfts else None,
        "wrong_results_lsp": wrong_lsp,
        "wrong_results_sdk": wrong_sdk,
        "template_result": got,
        "sdk_http_version": base.http_version,
        "mock_http_versions": stats.get("http_versions"),
        "mock_connections_opened": stats.get("connections_opened"),
        "server_only_20_requests": {"connections_opened": server_stats.get("connections_opened"),
                                    "streams_completed": server_stats.get("streams_completed"),
                                    "streams_cancelled": server_stats.get("streams_cancelled")},
        "mock_requests": stats.get("requests"),
    }


async def run(kinds: list[str], samples: int, warmup: int, out: Path) -> dict[str, Any]:
    results = {}
    for kind in kinds:
        name, http2 = (kind[:-3], "off") if kind.endswith("-h1") else (kind, "on")
        results[kind] = await run_kind(name, http2, samples, warmup, out)
        r = results[kind]
        print(f"  {kind:14s} lsp p50 {r['lsp_ms']['p50']:.3f} ms  sdk p50 {r['sdk_ms']['p50']:.3f} ms  "
              f"added p50 {r['added_ms']['p50']:.3f} p95 {r['added_ms']['p95']:.3f} ms", flush=True)
    return results
