"""Kestrel side by side with other completion language servers (latency only).

Today: GitHub Copilot's language server (`@github/copilot-language-server`, see copilot.py)
against a local stand-in for GitHub's endpoints (standin.py) that streams the same scripted
answer as Kestrel's mock. Everything runs in a loopback-only network namespace
(`unshare -rn`), so the peer's telemetry cannot leave the machine.

`python -m bench.peers [--quick]` prints a table and writes bench/out/peers.json;
`await run_peers(logs, quick)` returns the same dict (for bench/run.py's `results.peers`).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..constants import REPO

PEERS = ("copilot", "copilot_nodelay", "kestrel")  # copilot_nodelay: experiment copilotcompletionsdelay=0


def netns_available() -> bool:
    """`unshare -rn` (a user + network namespace) works here and `ip` can bring up loopback."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    try:
        r = subprocess.run(["unshare", "-rn", "sh", "-c", "ip link set lo up"], capture_output=True, timeout=10)
        return r.returncode == 0
    except Exception:
        return False


async def run_peers(logs: Path, quick: bool) -> dict[str, Any]:
    """Install the peer if needed, run bench.peers.runner (in a loopback-only network namespace
    when possible) and return its results; {"skipped": reason} when the peer cannot run."""
    from . import certs, copilot

    logs = Path(logs)
    logs.mkdir(parents=True, exist_ok=True)
    if copilot.node_binary() is None:
        return {"skipped": "Node >= 22.13 not found (make node-tools)"}
    if not certs.available():
        return {"skipped": "neither the cryptography package nor the openssl CLI is available"}
    try:
        await asyncio.to_thread(copilot.ensure_installed)
    except Exception as exc:
        return {"skipped": f"could not install {copilot.PACKAGE}@{copilot.VERSION}: {type(exc).__name__}: {exc}"}
    runner = [sys.executable, "-m", "bench.peers.runner", "--out", str(logs.resolve())] + (["--quick"] if quick else [])
    isolated = netns_available()
    if isolated:
        cmd = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *runner]
    else:
        print("  WARNING: unshare -rn is not available: running WITHOUT network isolation "
              "(the peer's telemetry may leave the machine)", flush=True)
        cmd = runner
    raw = logs / "peers-raw.json"
    raw.unlink(missing_ok=True)
    proc = await asyncio.create_subprocess_exec(*cmd, cwd=str(REPO))
    rc = await proc.wait()
    if rc != 0 or not raw.exists():
        return {"error": f"bench.peers.runner exited with {rc} (logs in {logs})", "network_isolated": isolated}
    res = json.loads(raw.read_text())
    res["network_isolated"] = isolated
    res["isolation"] = "unshare -rn (user + network namespace, loopback only)" if isolated else "none"
    return res


def table(res: dict[str, Any]) -> str:
    if "skipped" in res or "error" in res:
        return f"peers: {res.get('skipped') or res.get('error')}"
    st, cs = res["keystroke_storm"], res["cold_start"]
    rows = [f"{'':16s} {'storm p50':>10s} {'storm p95':>10s} {'results':>8s} {'requests':>8s} {'upstream':>8s}"
            f" {'cold init':>10s} {'cold 1st':>10s}"]
    for name in PEERS:
        v, c = st[name]["visible_latency_ms"], cs.get(name)
        cold = (f" {_ms(c['spawn_to_initialize_ms']['p50'])} {_ms(c['spawn_to_first_completion_ms']['p50'])}"
                if c else "")
        rows.append(f"{name:16s} {_ms(v['p50'])} {_ms(v['p95'])} {v['n']:8d} {st[name]['client']['requests']:8d}"
                    f" {st[name]['upstream_requests'] or 0:8d}{cold}")
    r = res["ratio_kestrel_over_copilot"]
    rows.append(f"Kestrel/Copilot storm latency: p50 {r['p50']}, p95 {r['p95']}"
                f" (vs completionsDelay=0: p50 {r['p50_vs_nodelay']}, p95 {r['p95_vs_nodelay']})")
    ser = res.get("keystroke_serial")
    if ser:
        rows.append("serial (one request per keystroke, answer awaited, no cancels):")
        for name in PEERS:
            v = ser[name]["latency_ms"]
            rows.append(f"{name:16s} {_ms(v['p50'])} {_ms(v['p95'])} {v['n']:8d} shown, "
                        f"{ser[name]['empty_or_failed']} empty/failed")
        r = res["serial_ratio_kestrel_over_copilot"]
        rows.append(f"Kestrel/Copilot serial latency: p50 {r['p50']}, p95 {r['p95']}"
                    f" (vs completionsDelay=0: p50 {r['p50_vs_nodelay']}, p95 {r['p95_vs_nodelay']})")
    rows.append(f"network isolated: {res.get('network_isolated')}")
    return "\n".join(rows)


def _ms(x: Any) -> str:
    return f"{x:8.1f}ms" if isinstance(x, (int, float)) else f"{'-':>10s}"
