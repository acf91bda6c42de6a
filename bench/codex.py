"""`codex`: the OpenAI Codex CLI (npm `@openai/codex`, a native binary behind a node shim,
installed into the gitignored-by-convention `.tools/codex`) against the same mock as
Kestrel: a custom provider (`model_providers.mock`: `base_url` = the mock, `wire_api =
"responses"`, with and without `supports_websockets = true`). One trivial turn per
`codex exec --json` process; stdout JSONL lines are timestamped as they arrive, so the turn
(`turn.started` → `turn.completed`) is separated from process start-up. Compared with a
`kestrel/chat` turn (provider `responses-ws`) and the raw SDK (Responses over HTTP SSE and
over the WebSocket), interleaved, same mock, same answer text."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import REPO, MockProcess, init_options, summary
from .lsp_client import clean_env, kestrel_server
from .sdk import make_client

TOOLS = REPO / ".tools" / "codex"
CODEX = TOOLS / "node_modules" / ".bin" / "codex"
TEXT = "hi from mock"
PROMPT = "say hi"


PINNED = REPO / "node_modules" / ".bin" / "codex"  # the version package-lock.json pins (`npm ci`)


def ensure_codex() -> tuple[Path | None, str]:
    for found in (PINNED, CODEX):
        if found.exists():
            return found, ""
    if shutil.which("npm") is None:
        return None, "npm is not installed"
    TOOLS.mkdir(parents=True, exist_ok=True)
    # Without a package.json of its own, npm installs into the nearest one above: the project's
    # (it rewrote the root package.json and lock, and left no binary here).
    if not (TOOLS / "package.json").exists():
        (TOOLS / "package.json").write_text('{"private": true}\n')
    try:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "@openai/codex"], cwd=TOOLS, check=True,
                       capture_output=True, timeout=240)
    except Exception as exc:  # offline registry, no native binary for this platform, ...
        return None, f"npm install @openai/codex failed: {type(exc).__name__}"
    return (CODEX, "") if CODEX.exists() else (None, "npm installed no codex binary")


def write_config(home: Path, base_url: str, websockets: bool) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "mock-model"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\n'
        f'base_url = "{base_url}"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n'
        f"supports_websockets = {'true' if websockets else 'false'}\n"
        "request_max_retries = 0\nstream_max_retries = 0\n")


async def codex_turn(codex: Path, home: Path, cwd: Path) -> dict[str, Any]:
    env = clean_env(CODEX_HOME=str(home), MOCK_API_KEY="x", NO_COLOR="1")
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        str(codex), "exec", "--json", "--ephemeral", "--skip-git-repo-check", "-s", "read-only", PROMPT,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env=env, cwd=str(cwd))
    assert proc.stdout is not None
    marks: dict[str, float] = {}
    text = ""
    async for raw in proc.stdout:
        t = time.perf_counter()
        try:
            ev = json.loads(raw)
        except ValueError:
            continue
        et = str(ev.get("type"))
        marks.setdefault(et, t)
        item = ev.get("item") or {}
        if et == "item.completed" and item.get("type") == "agent_message":
            text = item.get("text") or ""
            marks.setdefault("agent_message", t)
    rc = await proc.wait()
    t_exit = time.perf_counter()
    started = marks.get("turn.started", t0)
    done = marks.get("turn.completed") or marks.get("agent_message") or t_exit
    return {"rc": rc, "text": text, "process_ms": (t_exit - t0) * 1000, "turn_ms": (done - started) * 1000,
            "startup_ms": (started - t0) * 1000}


async def version_ms(codex: Path) -> float:
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(str(codex), "--version", stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL, env=clean_env())
    await proc.wait()
    return (time.perf_counter() - t0) * 1000


async def kestrel_turn(client: Any, n: int) -> tuple[float, str]:
    t0 = time.perf_counter()
    res = await client.request("kestrel/chat", {"id": f"cx-{n}", "prompt": PROMPT})
    return (time.perf_counter() - t0) * 1000, res.get("text") or ""


async def run(samples: int, warmup: int, out: Path) -> dict[str, Any]:
    codex, why = ensure_codex()
    if codex is None:
        return {"skipped": why}
    version = subprocess.run([str(codex), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="kestrel-codex-"))
    try:
        with MockProcess(out / "mock.log", text=TEXT, ttft_ms=0, tps=0) as mock:
            homes = {"codex_http": work / "home-http", "codex_ws": work / "home-ws"}
            write_config(homes["codex_http"], mock.base_url, False)
            write_config(homes["codex_ws"], mock.base_url, True)
            (work / "cwd").mkdir()
            async with kestrel_server(init_options("responses-ws", mock.base_url, "on"), out / "server.log",
                                      raw=True) as client:
                sdk = make_client(mock.base_url, "on")
                conn = await sdk.responses.connect(max_retries=0).enter()

                async def sdk_http(n: int) -> tuple[float, str]:
                    t0 = time.perf_counter()
                    parts = []
                    async with sdk.responses.with_streaming_response.create(
                            model="mock-model", input=[{"role": "user", "content": PROMPT}], stream=True) as r:
                        async for line in r.iter_lines():
                            if line.startswith("data:"):
                                ev = json.loads(line[5:])
                                if ev.get("type") == "response.output_text.delta":
                                    parts.append(ev["delta"])
                    return (time.perf_counter() - t0) * 1000, "".join(parts)

                async def sdk_ws(n: int) -> tuple[float, str]:
                    t0 = time.perf_counter()
                    parts = []
                    await conn.send_raw(json.dumps({"type": "response.create", "model": "mock-model",
                                                    "input": [{"role": "user", "content": PROMPT}]}))
                    while True:
                        ev = json.loads(await conn.recv_bytes())
                        if ev.get("type") == "response.output_text.delta":
                            parts.append(ev["delta"])
                        if ev.get("type") in ("response.completed", "response.incomplete", "response.failed", "error"):
                            return (time.perf_counter() - t0) * 1000, "".join(parts)

                series: dict[str, dict[str, list[float]]] = {
                    k: {"process_ms": [], "turn_ms": [], "startup_ms": []} for k in homes}
                series.update({k: {"turn_ms": []} for k in ("kestrel_chat", "sdk_http", "sdk_ws")})
                series["codex_version"] = {"process_ms": []}
                wrong = {k: 0 for k in series}
                names = list(series)
                try:
                    for j in range(warmup + samples):
                        r = j % len(names)
                        for name in names[r:] + names[:r]:
                            if name in homes:
                                res = await codex_turn(codex, homes[name], work / "cwd")
                                if res["rc"] != 0:
                                    raise RuntimeError(f"codex exec failed (rc={res['rc']})")
                                got = res["text"]
                                vals = {k: res[k] for k in ("process_ms", "turn_ms", "startup_ms")}
                            elif name == "codex_version":
                                got, vals = TEXT, {"process_ms": await version_ms(codex)}
                            else:
                                fn = {"kestrel_chat": lambda n: kestrel_turn(client, n), "sdk_http": sdk_http,
                                      "sdk_ws": sdk_ws}[name]
                                ms, got = await fn(j)
                                vals = {"turn_ms": ms}
                            if j >= warmup:
                                wrong[name] += got.strip() != TEXT
                                for k, v in vals.items():
                                    series[name][k].append(v)
                finally:
                    await conn.close()
                    await sdk.close()
            stats = mock.stats()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res: dict[str, Any] = {"codex_version": version, "samples": samples,
                           "modes": {k: {m: summary(v) for m, v in s.items()} for k, s in series.items()},
                           "wrong": wrong, "mock_requests": stats.get("requests"),
                           "mock_ws_connections": stats.get("ws_connections")}
    M = res["modes"]
    k50 = M["kestrel_chat"]["turn_ms"]["p50"]
    res["ratios_p50"] = {
        "codex_http_turn / kestrel_turn": round(M["codex_http"]["turn_ms"]["p50"] / k50, 2),
        "codex_ws_turn / kestrel_turn": round(M["codex_ws"]["turn_ms"]["p50"] / k50, 2),
        "codex_http_process / kestrel_turn": round(M["codex_http"]["process_ms"]["p50"] / k50, 1),
        "kestrel_turn / sdk_ws": round(k50 / M["sdk_ws"]["turn_ms"]["p50"], 2),
        "codex_ws_turn / sdk_ws": round(M["codex_ws"]["turn_ms"]["p50"] / M["sdk_ws"]["turn_ms"]["p50"], 2),
        "codex_http_turn / sdk_http": round(M["codex_http"]["turn_ms"]["p50"] / M["sdk_http"]["turn_ms"]["p50"], 2),
    }
    for k, v in M.items():
        print(f"  {k:14s} " + "  ".join(f"{m} p50 {s['p50']:.1f} p95 {s['p95']:.1f}" for m, s in v.items()), flush=True)
    print(f"  ratios p50: {res['ratios_p50']}", flush=True)
    return res
