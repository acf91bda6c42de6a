"""`transports`: a short completion over a simulated real network — TLS on loopback behind
`bench.latency_proxy` (10 ms each way = 20 ms RTT; the first chunk of a connection also
pays one RTT for the TCP handshake). The mock serves TLS with a throwaway self-signed
certificate. Transports, interleaved per sample in one process (order rotated):

* `new_conn_h1`: the raw SDK with no keep-alive: a new TCP + TLS connection per request
* `pool_h1` / `pool_h2`: the raw SDK with a warm keep-alive pool, HTTP/1.1 / HTTP/2 (ALPN)
* `ws`: the raw SDK's persistent Responses WebSocket (`responses.connect()`)
* `kestrel_chat` / `kestrel_responses_ws`: a `kestrel/chat` turn through the server (TTFT =
  first `kestrel/chatDelta`), providers `chat` (HTTP/2 over TLS) and `responses-ws`

Per-request overhead = total − one RTT − model time (model time = mock ttft + tokens/tps,
here 0: the mock answers at once, so everything measured is transport)."""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .common import REPO, MockProcess, init_options, summary
from .lsp_client import clean_env, kestrel_server

TEXT = "compute(x)\n"
PROMPT = "complete: result = "
DELAY_MS = 10.0
RTT_MS = 2 * DELAY_MS
MODES = ("new_conn_h1", "pool_h1", "pool_h2", "ws", "kestrel_chat", "kestrel_responses_ws")


def make_cert(directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    if not (cert.exists() and key.exists()):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True, timeout=30)
    return cert, key


class ProxyProcess:
    def __init__(self, target_port: int, delay_ms: float, log_path: Path) -> None:
        self.cmd = [sys.executable, "-m", "bench.latency_proxy", "--target", f"127.0.0.1:{target_port}",
                    "--delay-ms", str(delay_ms)]
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def __enter__(self) -> "ProxyProcess":
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=self._log, env=clean_env(), cwd=REPO)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("PROXY_READY "):
            raise RuntimeError(f"latency proxy did not start (rc={self.proc.poll()})")
        self.port = int(line.split()[1])
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def sdk_client(base_url: str, cert: Path, http2: bool, keepalive: bool) -> Any:
    import httpx2
    from openai import AsyncOpenAI, DefaultAsyncHttpx2Client

    # one SSLContext per client: httpx2 sets ALPN on the context it is given
    ctx = ssl.create_default_context(cafile=str(cert))
    timeout = httpx2.Timeout(30.0, connect=5.0)
    limits = httpx2.Limits(max_connections=64, max_keepalive_connections=16 if keepalive else 0, keepalive_expiry=120)
    http_client = DefaultAsyncHttpx2Client(http1=not http2, http2=http2, verify=ctx, timeout=timeout, limits=limits)
    return AsyncOpenAI(api_key="x", base_url=base_url, max_retries=0, timeout=timeout, http_client=http_client)


class Sdk:
    def __init__(self, base_url: str, cert: Path) -> None:
        self.clients = {"new_conn_h1": sdk_client(base_url, cert, False, False),
                        "pool_h1": sdk_client(base_url, cert, False, True),
                        "pool_h2": sdk_client(base_url, cert, True, True)}
        self.ws_client = sdk_client(base_url, cert, False, True)
        self.ws_ctx = ssl.create_default_context(cafile=str(cert))  # its own context (see above)
        self.conn: Any = None
        self.http_versions: dict[str, str] = {}

    async def start(self) -> None:
        self.conn = await self.ws_client.responses.connect(
            max_retries=0, websocket_connection_options={"ssl": self.ws_ctx}).enter()

    async def aclose(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.close()
            except Exception:
                pass
        for c in [*self.clients.values(), self.ws_client]:
            await c.close()

    async def http(self, mode: str) -> tuple[float, float, str]:
        client = self.clients[mode]
        first = None
        parts = []
        t0 = time.perf_counter()
        async with client.chat.completions.with_streaming_response.create(
                model="mock-model", messages=[{"role": "user", "content": PROMPT}], stream=True) as response:
            self.http_versions[mode] = response.http_response.http_version
            async for line in response.iter_lines():  # read to the end: only then is an
                if not line.startswith("data:"):      # HTTP/1.1 connection back in the pool
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    continue
                for c in json.loads(data).get("choices") or ():
                    d = (c.get("delta") or {}).get("content")
                    if d:
                        first = first or time.perf_counter()
                        parts.append(d)
        t1 = time.perf_counter()
        return (first - t0) * 1000, (t1 - t0) * 1000, "".join(parts)

    async def ws(self) -> tuple[float, float, str]:
        first = None
        parts = []
        t0 = time.perf_counter()
        await self.conn.send_raw(json.dumps({"type": "response.create", "model": "mock-model",
                                             "input": [{"role": "user", "content": PROMPT}]}))
        while True:
            ev = json.loads(await self.conn.recv_bytes())
            et = ev.get("type")
            if et == "response.output_text.delta":
                first = first or time.perf_counter()
                parts.append(ev.get("delta") or "")
            elif et in ("response.completed", "response.incomplete", "response.failed", "error"):
                break
        return (first - t0) * 1000, (time.perf_counter() - t0) * 1000, "".join(parts)


async def kestrel_turn(client: Any, n: int) -> tuple[float, float, str]:
    turn_id = f"t-{n}"
    first: list[float] = []

    def on_note(method: str, params: Any, t: float) -> None:
        if method == "kestrel/chatDelta" and params.get("id") == turn_id and not first:
            first.append(t)

    client.on_notification = on_note
    try:
        t0 = time.perf_counter()
        res = await client.request("kestrel/chat", {"id": turn_id, "prompt": PROMPT})
        t1 = time.perf_counter()
    finally:
        client.on_notification = None
    if res.get("error") or not first:
        raise RuntimeError(f"kestrel/chat failed: {res.get('error')}")
    return (first[0] - t0) * 1000, (t1 - t0) * 1000, res.get("text") or ""


async def run(samples: int, warmup: int, out: Path) -> dict[str, Any]:
    cert, key = make_cert(out / "tls")
    model_ms = 0.0  # mock ttft 0, tps 0
    with MockProcess(out / "mock.log", args=["--certfile", str(cert), "--keyfile", str(key)],
                     text=TEXT, ttft_ms=0, tps=0) as mock, \
            ProxyProcess(mock.port, DELAY_MS, out / "proxy.log") as proxy:
        base = f"https://127.0.0.1:{proxy.port}/v1"
        env = {"SSL_CERT_FILE": str(cert)}
        async with kestrel_server(init_options("chat", base, "on"), out / "server.log", raw=True, env=env) as k_chat, \
                kestrel_server(init_options("responses-ws", base, "on"), out / "server.log", raw=True, env=env) as k_ws:
            sdk = Sdk(base, cert)
            await sdk.start()
            try:
                fns = {"new_conn_h1": lambda n: sdk.http("new_conn_h1"), "pool_h1": lambda n: sdk.http("pool_h1"),
                       "pool_h2": lambda n: sdk.http("pool_h2"), "ws": lambda n: sdk.ws(),
                       "kestrel_chat": lambda n: kestrel_turn(k_chat, n),
                       "kestrel_responses_ws": lambda n: kestrel_turn(k_ws, n)}
                ttft: dict[str, list[float]] = {m: [] for m in MODES}
                total: dict[str, list[float]] = {m: [] for m in MODES}
                wrong = {m: 0 for m in MODES}
                for j in range(warmup + samples):
                    r = j % len(MODES)
                    for mode in MODES[r:] + MODES[:r]:
                        a, b, text = await fns[mode](j)
                        if j >= warmup:
                            ttft[mode].append(a)
                            total[mode].append(b)
                            wrong[mode] += text != TEXT
                        await asyncio.sleep(0.002)
                stats = mock.stats()
            finally:
                await sdk.aclose()
    res: dict[str, Any] = {"rtt_ms": RTT_MS, "model_ms": model_ms, "samples": samples, "modes": {}}
    for m in MODES:
        t = summary(total[m])
        res["modes"][m] = {"ttft_ms": summary(ttft[m]), "total_ms": t,
                           "overhead_ms": summary([x - RTT_MS - model_ms for x in total[m]]),
                           "wrong": wrong[m]}
    res["http_versions"] = sdk.http_versions
    res["mock_connections_opened"] = stats.get("connections_opened")
    res["mock_http_versions"] = stats.get("http_versions")
    M = res["modes"]
    nc_o, ws_o = M["new_conn_h1"]["overhead_ms"]["p50"], M["ws"]["overhead_ms"]["p50"]
    nc_t, ws_t = M["new_conn_h1"]["ttft_ms"]["p50"], M["ws"]["ttft_ms"]["p50"]
    best_pool = min(M["pool_h1"]["total_ms"]["p50"], M["pool_h2"]["total_ms"]["p50"])
    res["ws_overhead_cut_vs_new_conn"] = round(1 - ws_o / nc_o, 3) if nc_o else None
    res["ws_ttft_cut_vs_new_conn"] = round(1 - ws_t / nc_t, 3) if nc_t else None
    res["ws_minus_best_pool_total_ms_p50"] = round(M["ws"]["total_ms"]["p50"] - best_pool, 3)
    for m in MODES:
        x = M[m]
        print(f"  {m:22s} ttft p50 {x['ttft_ms']['p50']:.2f} p95 {x['ttft_ms']['p95']:.2f}  total p50 "
              f"{x['total_ms']['p50']:.2f}  overhead p50 {x['overhead_ms']['p50']:.2f} ms  wrong {x['wrong']}", flush=True)
    return res
