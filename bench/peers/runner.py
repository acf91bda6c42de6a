"""The measurement itself (run inside a loopback-only network namespace by `run_peers`):
Copilot's language server against the stand-in, Kestrel (provider `fim`) against its mock, both
scripted alike (text `compute(x)\\n`, TTFT 30 ms, 400 tokens/s, as bench/storm.py).

* cold start: spawn -> `initialize` answered, and spawn -> first non-empty inline completion
  (the client asks again every 50 ms while the answer is empty); runs alternate between the two.
* keystroke storm: type bench/storm.py's program at 20 chars/s, per keystroke didChange,
  `$/cancelRequest` for the previous unanswered request, a new inlineCompletion; latency is
  request -> answer for requests that were not cancelled before their answer arrived. Both
  servers are up at once; the typing alternates between them in rounds (order flips per round).

`python -m bench.peers.runner --out DIR [--quick]` writes DIR/peers-raw.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

from ..common import MOCK_TEXT, MockProcess, init_options, summary
from ..lsp_client import SERVER_CMD, KestrelClient, clean_env, result_text, stop_server, wait_ready
from ..constants import REPO
from ..inline_added import HEADER
from ..storm import TYPED
from . import certs, copilot

TTFT_MS, TPS, CPS = 30, 400, 20.0
SCRIPT = {"text": MOCK_TEXT, "ttft_ms": TTFT_MS, "tps": TPS}
# Copilot holds every completion until `completionsDelay` (default 200 ms) has passed since the
# request was issued; this experiment variable (served by the stand-in) sets it to 0.
NO_DELAY = "copilotcompletionsdelay"
PEERS = ("copilot", "copilot_nodelay", "kestrel")


# --- the stand-in in its own process (like the mock: no GIL shared with the client) -----------
class StandInProcess:
    def __init__(self, certfile: str, keyfile: str, log_path: Path, **extra: Any) -> None:
        self.args = ["--certfile", certfile, "--keyfile", keyfile, "--config", json.dumps({**SCRIPT, **extra})]
        self.log_path = log_path
        self.url = ""
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "StandInProcess":
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.peers.standin", "--port", "0", *self.args],
                                     stdout=subprocess.PIPE, stderr=self._log, env=clean_env(), cwd=REPO)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("STANDIN_READY "):
            raise RuntimeError(f"stand-in did not start (rc={self.proc.poll()})")
        self.url = line.split()[1]
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

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        req = urllib.request.Request(self.url.rstrip("/") + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
        with urllib.request.urlopen(req, timeout=10, context=ssl._create_unverified_context()) as r:
            return json.loads(r.read() or b"null")

    def stats(self) -> dict:
        return self._call("GET", "/_standin/stats")

    def reset(self) -> None:
        self._call("POST", "/_standin/reset", {})


# --- one editor session per server, behind the same small interface -----------------------
SCRIPT_TEXT = "\n".join(TYPED) + "\n"  # what each editor types, character by character


class Editor:
    """A document being typed into one server: `change(text)`, `send(line, ch)`, `cancel(id)`."""

    def __init__(self, name: str, change: Callable[[str], None], send: Callable[[int, int], tuple[Any, Any]],
                 cancel: Callable[[Any], None], text_of: Callable[[Any], str | None]) -> None:
        self.name, self.change, self.send, self.cancel, self.text_of = name, change, send, cancel, text_of
        self.lines: list[str] = [""]
        self.k = 0  # keystrokes typed so far (position in the script)
        self.latency: list[float] = []  # answered, not cancelled, non-empty
        self.latency_any: list[float] = []  # answered, not cancelled (empty answers too)
        self.c = {"keystrokes": 0, "requests": 0, "cancels_sent": 0, "results": 0, "empty_results": 0,
                  "cancelled_errors": 0, "other_errors": 0, "late_results_for_cancelled": 0}
        self.errors: list[str] = []

    def type_next(self) -> tuple[int, int]:
        """Type the script's next character (didChange) and return the cursor (line, character)."""
        ch = SCRIPT_TEXT[self.k % len(SCRIPT_TEXT)]
        self.k += 1
        if ch == "\n":
            self.lines.append("")
        else:
            self.lines[-1] += ch
        self.change(HEADER + "\n".join(self.lines) + "\n")
        return HEADER.count("\n") + len(self.lines) - 1, len(self.lines[-1])


async def serial_segment(ed: Editor, keys: int, lat: list[float], empty: list[int]) -> None:
    """Per keystroke: didChange, one inlineCompletion, wait for its answer (no cancellation),
    then the next keystroke (at most 20/s): each server's own keystroke -> answer latency."""
    for _ in range(keys):
        t_key = time.perf_counter()
        _, fut = ed.send(*ed.type_next())
        try:
            got = ed.text_of(await asyncio.wait_for(fut, 5))
        except Exception:
            got = None
        if got:
            lat.append((time.perf_counter() - t_key) * 1000)
        else:
            empty[0] += 1
        delay = t_key + 1 / CPS - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)


async def storm_segment(ed: Editor, keys: int) -> None:
    cancelled: dict[Any, float] = {}
    pending: Any = None

    def on_done(msg_id: Any, t_sent: float, fut: asyncio.Future) -> None:
        t = time.perf_counter()
        if fut.cancelled():
            return
        exc = fut.exception()
        if exc is not None:
            if getattr(exc, "code", None) == -32800 or "cancel" in str(exc).lower():
                ed.c["cancelled_errors"] += 1
            else:
                ed.c["other_errors"] += 1
                if len(ed.errors) < 5:
                    ed.errors.append(f"{type(exc).__name__}: {exc}")
            return
        if msg_id in cancelled and cancelled[msg_id] < t:
            ed.c["late_results_for_cancelled"] += 1
            return
        ms = (t - t_sent) * 1000
        ed.latency_any.append(ms)
        if ed.text_of(fut.result()):
            ed.c["results"] += 1
            ed.latency.append(ms)
        else:
            ed.c["empty_results"] += 1

    t0 = time.perf_counter()
    for i in range(keys):
        delay = t0 + i / CPS - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        ed.c["keystrokes"] += 1
        cursor = ed.type_next()
        if pending is not None and not pending[1].done():
            ed.cancel(pending[0])
            cancelled[pending[0]] = time.perf_counter()
            ed.c["cancels_sent"] += 1
        msg_id, fut = ed.send(*cursor)
        ed.c["requests"] += 1
        fut.add_done_callback(lambda f, a=(msg_id, time.perf_counter()): on_done(*a, f))
        pending = (msg_id, fut)
    if pending is not None:
        try:
            await asyncio.wait_for(asyncio.shield(pending[1]), 5)
        except Exception:
            pass
    await asyncio.sleep(0.5)


# --- starting each server -------------------------------------------------------------------
async def start_kestrel(mock: MockProcess, log: Any) -> KestrelClient:
    client = KestrelClient()
    await client.spawn(SERVER_CMD, clean_env(), log)
    await client.initialize(init_options("fim", mock.base_url))
    return client


def cold_document() -> tuple[str, int, int]:
    line = "total = "
    return HEADER + line + "\n", HEADER.count("\n"), len(line)


async def _first_completion(ask: Callable[[], Any], text_of: Callable[[Any], str | None],
                            timeout: float = 60) -> str | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            got = text_of(await asyncio.wait_for(ask(), 30))
        except Exception:
            got = None
        if got:
            return got
        await asyncio.sleep(0.05)
    return None


async def cold_copilot(url: str, cert: str, out: Path) -> dict[str, Any]:
    srv = copilot.CopilotServer(url, cert, out / "copilot.log")
    t0 = time.perf_counter()
    try:
        await srv.spawn()
        await srv.client.start_editor(srv.workspace)
        t_init = (time.perf_counter() - t0) * 1000
        text, line, ch = cold_document()
        path = srv.workspace / "sample.py"
        path.write_text(text)
        srv.client.open(path.as_uri(), text)
        got = await _first_completion(lambda: srv.client.send_inline(line, ch, path.as_uri())[1], result_text)
        t_first = (time.perf_counter() - t0) * 1000
    finally:
        await srv.stop()
    return {"init_ms": t_init, "first_ms": t_first, "text": got}


async def cold_kestrel(mock: MockProcess, out: Path) -> dict[str, Any]:
    with open(out / "server.log", "ab") as log:
        t0 = time.perf_counter()
        client = await start_kestrel(mock, log)
        try:
            t_init = (time.perf_counter() - t0) * 1000
            text, line, ch = cold_document()
            client.open(text)
            got = await _first_completion(lambda: client.send_inline(line, ch)[1], result_text)
            t_first = (time.perf_counter() - t0) * 1000
        finally:
            await stop_server(client)
    return {"init_ms": t_init, "first_ms": t_first, "text": got}


def _latency_block(ed: Editor) -> dict[str, Any]:
    return {"visible_latency_ms": summary(ed.latency, 1), "answered_latency_ms": summary(ed.latency_any, 1),
            "client": ed.c, "errors": ed.errors}


def _ratios(block: dict[str, Any], key: str) -> dict[str, Any]:
    """Kestrel / Copilot for p50 and p95 (against Copilot as shipped and with completionsDelay 0)."""
    k = block["kestrel"][key]
    out: dict[str, Any] = {}
    for peer, suffix in (("copilot", ""), ("copilot_nodelay", "_vs_nodelay")):
        c = block[peer][key]
        for q in ("p50", "p95"):
            out[q + suffix] = round(k[q] / c[q], 3) if k.get(q) and c.get(q) else None
    return out


async def measure(out: Path, quick: bool) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    logging.getLogger("pygls").setLevel(logging.ERROR)
    cold_runs = 1 if quick else 3
    rounds, keys = (2, 40) if quick else (4, 80)
    cert, key = certs.make_cert(out / "peers-tls")
    res: dict[str, Any] = {"script": {**SCRIPT, "chars_per_s": CPS}, "copilot_version": copilot.VERSION,
                           "kestrel_provider": "fim", "rounds": rounds, "keys_per_round": keys}
    with StandInProcess(cert, key, out / "standin.log") as standin, \
            StandInProcess(cert, key, out / "standin-nodelay.log", exp_parameters={NO_DELAY: 0}) as standin0, \
            MockProcess(out / "mock.log", text=MOCK_TEXT) as mock:
        mock.configure(ttft_ms=TTFT_MS, tps=TPS)
        # cold start (one unmeasured warm-up each: page cache, .pyc, V8 code cache)
        cold: dict[str, list[dict]] = {"copilot": [], "kestrel": []}
        for i in range(cold_runs + 1):
            order = ["copilot", "kestrel"] if i % 2 == 0 else ["kestrel", "copilot"]
            for name in order:
                r = await (cold_copilot(standin.url, cert, out) if name == "copilot" else cold_kestrel(mock, out))
                print(f"  cold {name:8s} init {r['init_ms']:7.0f} ms, first completion {r['first_ms']:7.0f} ms"
                      f"{'' if i else ' (warm-up, not counted)'}: {r['text']!r}", flush=True)
                if i:
                    cold[name].append(r)
        res["cold_start"] = {name: {"spawn_to_initialize_ms": summary([r["init_ms"] for r in runs], 1),
                                    "spawn_to_first_completion_ms": summary([r["first_ms"] for r in runs], 1),
                                    "texts": sorted({str(r["text"]) for r in runs})} for name, runs in cold.items()}

        # keystroke storm, both servers up, interleaved in rounds
        standin.reset()
        mock.reset()
        mock.configure(ttft_ms=TTFT_MS, tps=TPS)
        standin0.reset()
        srv = copilot.CopilotServer(standin.url, cert, out / "copilot.log")
        srv0 = copilot.CopilotServer(standin0.url, cert, out / "copilot-nodelay.log")
        klog = open(out / "server.log", "ab")
        kes = None
        try:
            await srv.start()
            await srv0.start()
            kes = await start_kestrel(mock, klog)
            await wait_ready(kes)
            path = srv.workspace / "sample.py"
            path.write_text(HEADER + "\n")
            uri = path.as_uri()
            path0 = srv0.workspace / "sample.py"
            path0.write_text(HEADER + "\n")
            uri0 = path0.as_uri()
            srv.client.open(uri, HEADER + "\n")
            srv0.client.open(uri0, HEADER + "\n")
            kes.open(HEADER + "\n")
            # warm each (first completion through each stack), not counted
            await _first_completion(lambda: srv.client.send_inline(HEADER.count("\n"), 0, uri)[1], lambda r: "x")
            await _first_completion(lambda: srv0.client.send_inline(HEADER.count("\n"), 0, uri0)[1], lambda r: "x")
            await _first_completion(lambda: kes.send_inline(HEADER.count("\n"), 0)[1], lambda r: "x")
            standin.reset()
            standin0.reset()
            mock.reset()
            mock.configure(ttft_ms=TTFT_MS, tps=TPS)
            eds = {
                "copilot": Editor("copilot", lambda t: srv.client.change(t, uri),
                                  lambda ln, ch: srv.client.send_inline(ln, ch, uri), srv.client.cancel,
                                  result_text),
                "copilot_nodelay": Editor("copilot_nodelay", lambda t: srv0.client.change(t, uri0),
                                          lambda ln, ch: srv0.client.send_inline(ln, ch, uri0), srv0.client.cancel,
                                          result_text),
                "kestrel": Editor("kestrel", kes.change, kes.send_inline, kes.cancel, result_text),
            }
            for r in range(rounds):
                for name in (PEERS if r % 2 == 0 else PEERS[::-1]):
                    await storm_segment(eds[name], keys)
                print(f"  storm round {r + 1}/{rounds}: " + ", ".join(
                    f"{n} {len(e.latency)} results" for n, e in eds.items()), flush=True)
            s_stats, s0_stats, m_stats = standin.stats(), standin0.stats(), mock.stats()
            serial: dict[str, tuple[list[float], list[int]]] = {n: ([], [0]) for n in eds}
            for r in range(rounds):
                for name in (PEERS[::-1] if r % 2 == 0 else PEERS):
                    await serial_segment(eds[name], keys // 2, *serial[name])
            print("  serial: " + ", ".join(f"{n} {len(v[0])} results" for n, v in serial.items()), flush=True)
            outside = sorted(set(srv.outside_hosts()) | set(srv0.outside_hosts()))
        finally:
            await srv.stop()
            await srv0.stop()
            if kes is not None:
                await stop_server(kes)
            klog.close()
        storm = {n: _latency_block(e) for n, e in eds.items()}
        storm["copilot"]["upstream_requests"] = s_stats.get("completion_requests")
        storm["copilot"]["upstream_streams_cancelled"] = s_stats.get("streams_cancelled")
        storm["copilot_nodelay"]["upstream_requests"] = s0_stats.get("completion_requests")
        storm["copilot_nodelay"]["upstream_streams_cancelled"] = s0_stats.get("streams_cancelled")
        storm["kestrel"]["upstream_requests"] = sum(
            v for k, v in (m_stats.get("requests") or {}).items() if "completions" in k or k in ("/v1/responses",))
        storm["kestrel"]["upstream_streams_cancelled"] = m_stats.get("streams_cancelled")
        res["keystroke_storm"] = storm
        res["keystroke_serial"] = {n: {"latency_ms": summary(v[0], 1), "empty_or_failed": v[1][0]}
                                   for n, v in serial.items()}
        res["serial_ratio_kestrel_over_copilot"] = _ratios(res["keystroke_serial"], "latency_ms")
        res["ratio_kestrel_over_copilot"] = _ratios(storm, "visible_latency_ms")
        all_stats = standin.stats()
        res["copilot_upstream"] = {"requests": all_stats.get("requests"), "unknown_paths": all_stats.get("unknown"),
                                   "outside_hosts_attempted": outside,
                                   "completion_bodies": all_stats.get("completion_bodies", [])[:3]}
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    out = Path(a.out)
    res = asyncio.run(measure(out, a.quick))
    (out / "peers-raw.json").write_text(json.dumps(res, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
