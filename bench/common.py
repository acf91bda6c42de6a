"""Shared plumbing: the mock model as a separate process, percentiles, machine description.
The server process and the client that drives it: bench/lsp_client.py."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from .constants import REPO
from .lsp_client import clean_env

SUGGESTION = "compute(x)"
MOCK_TEXT = SUGGESTION + "\n"


# ----------------------------------------------------------------------------------------
# statistics
# ----------------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100), None for no data."""
    if not values:
        return None
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values: list[float], digits: int = 3) -> dict[str, Any]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, digits)

    return {
        "n": len(values),
        "p50": r(percentile(values, 50)),
        "p95": r(percentile(values, 95)),
        "mean": r(statistics.fmean(values)) if values else None,
        "min": r(min(values)) if values else None,
        "max": r(max(values)) if values else None,
    }


def paired_ratio_p50(before: list[float], after: list[float]) -> float | None:
    """The median of after[i] / before[i] over the pairs (a side-by-side run's per-sample ratio)."""
    ratios = sorted(y / x for x, y in zip(before, after) if x > 0)
    return round(ratios[len(ratios) // 2], 3) if ratios else None


# ----------------------------------------------------------------------------------------
# mock model in its own process (so it does not share the GIL with the measuring client)
# ----------------------------------------------------------------------------------------
class MockProcess:
    def __init__(self, log_path: Path | None = None, args: list[str] | None = None, **config: Any) -> None:
        self.log_path = log_path
        self.args = list(args or [])  # extra CLI arguments, e.g. ["--certfile", c, "--keyfile", k]
        self.initial = config
        self.proc: subprocess.Popen | None = None
        self.base_url = ""
        self.root = ""
        self._log = None

    def __enter__(self) -> "MockProcess":
        cmd = [sys.executable, "-m", "kestrel.testing.mock_model", "--port", "0"]
        if self.initial:
            cmd += ["--config", json.dumps(self.initial)]
        cmd += self.args
        self._log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._log, env=clean_env(), cwd=REPO)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                raise RuntimeError(f"mock model exited (rc={self.proc.poll()})")
            if line.startswith("MOCK_READY "):
                self.base_url = line.split()[1].strip()
                self.root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
                return self
        raise RuntimeError("mock model did not start")

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log not in (None, subprocess.DEVNULL):
            self._log.close()

    @property
    def port(self) -> int:
        return int(self.root.rsplit(":", 1)[1].split("/", 1)[0])

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.root + path, data=data, method=method,
                                     headers={"content-type": "application/json"})
        ctx = None
        if self.root.startswith("https://"):  # control calls only: skip verification of the bench's own cert
            import ssl

            ctx = ssl._create_unverified_context()
        with urllib.request.urlopen(req, timeout=10, context=ctx) as resp:
            return json.loads(resp.read() or b"null")

    def configure(self, **cfg: Any) -> dict:
        return self._call("POST", "/_mock/config", cfg)

    def stats(self) -> dict:
        return self._call("GET", "/_mock/stats")

    def reset(self) -> None:
        self._call("POST", "/_mock/reset", {})


def init_options(kind: str, base_url: str, http2: str = "on", **extra: Any) -> dict:
    """initializationOptions for a provider `kind` against the mock model at `base_url`."""
    return {"kestrel": {"provider": kind, "baseUrl": base_url, "model": "mock-model", "apiKey": "x",
                        "http2": http2, **extra}}


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


# ----------------------------------------------------------------------------------------
# machine
# ----------------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    cpu_model, cpus = None, 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu_model is None:
                    cpu_model = line.split(":", 1)[1].strip()
                if line.startswith("processor"):
                    cpus += 1
    except OSError:
        pass
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    from importlib.metadata import version

    def ver(name: str) -> str | None:
        try:
            return version(name)
        except Exception:
            return None

    return {
        "cpu_model": cpu_model,
        "cpu_count": cpus or os.cpu_count(),
        "affinity_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "ram_gb": mem_gb,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "openai": ver("openai"),
        "httpx2": ver("httpx2"),
        "pygls": ver("pygls"),
        "lsprotocol": ver("lsprotocol"),
        "hypercorn": ver("hypercorn"),
        "h2": ver("h2"),
        "kestrel": ver("kestrel"),
        "git_commit": _git_commit(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def _git_commit() -> str | None:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True,
                               text=True, timeout=5)
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except Exception:
        return None
