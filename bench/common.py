"""Shared plumbing: the mock model as a separate process, the LSP server process and client,
percentiles, machine description."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from lsprotocol import types

from kestrel.core.payload import plain
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient

from .constants import REPO, URI
from .rawclient import RawClient

SERVER_CMD = [sys.executable, "-m", "kestrel", "--log-level", "WARNING"]
SUGGESTION = "compute(x)"
MOCK_TEXT = SUGGESTION + "\n"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without model settings from the developer's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KESTREL_", "OPENAI_"))}
    env.update(extra)
    return env


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


# ----------------------------------------------------------------------------------------
# the LSP server process + a pygls client
# ----------------------------------------------------------------------------------------
as_dict = plain  # pygls named tuples -> plain dicts (the server's own helper)


class BenchClient(LanguageClient):
    """pygls' LanguageClient, but the server's stderr goes to a file (a full, unread
    stderr pipe would block the server) and status notifications are recorded."""

    def __init__(self) -> None:
        super().__init__("kestrel-bench", "1")
        self.status_events: list[dict] = []
        self.version = 1
        self.proc: asyncio.subprocess.Process | None = None

        @self.feature("kestrel/status")
        def _status(params: Any) -> None:
            self.status_events.append(as_dict(params))

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def _show(params: Any) -> None:
            pass

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            pass

    async def spawn(self, cmd: list[str], env: dict[str, str], stderr: Any) -> None:
        server = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env, cwd=str(REPO),
        )
        assert server.stdout is not None and server.stdin is not None
        self.protocol.set_writer(server.stdin)
        connection = asyncio.create_task(
            run_async(stop_event=self._stop_event, reader=server.stdout, protocol=self.protocol,
                      logger=__import__("logging").getLogger("bench.client"), error_handler=self.report_server_error)
        )
        self._server = server
        self.proc = server
        self._async_tasks.extend([connection, asyncio.create_task(self._server_exit())])

    # --- the same small interface as rawclient.RawClient ---
    async def initialize(self, options: dict) -> Any:
        result = await self.initialize_async(types.InitializeParams(
            capabilities=client_capabilities(), initialization_options=options, process_id=os.getpid()))
        self.initialized(types.InitializedParams())
        return result

    async def shutdown(self) -> None:
        await self.shutdown_async(None)
        self.exit(None)

    async def get_status(self) -> dict:
        return as_dict(await self.protocol.send_request_async("kestrel/getStatus", None))

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.protocol.send_request_async(method, params)

    def send_inline(self, line: int, character: int, uri: str = URI, msg_id: Any = None) -> tuple[Any, Any]:
        msg_id = msg_id if msg_id is not None else f"bench-{id(object())}-{time.perf_counter_ns()}"
        fut = self.protocol.send_request_async(types.TEXT_DOCUMENT_INLINE_COMPLETION,
                                               inline_params(line, character, uri), msg_id=msg_id)
        return msg_id, asyncio.ensure_future(fut)

    async def inline(self, line: int, character: int, uri: str = URI) -> str | None:
        return result_text(await self.text_document_inline_completion_async(inline_params(line, character, uri)))

    def cancel(self, msg_id: Any) -> None:
        self.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.stop(), 5)
        except Exception:
            pass

    # --- document helpers ---
    def open(self, text: str, uri: str = URI) -> None:
        self.version = 1
        self.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))

    def change(self, text: str, uri: str = URI) -> None:
        self.version += 1
        self.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def inline_params(line: int, character: int, uri: str = URI) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic),
    )


def result_text(result: Any) -> str | None:
    if result is None:
        return None
    items = result.items if isinstance(result, types.InlineCompletionList) else result
    if not items:
        return None
    text = items[0].insert_text
    return text if isinstance(text, str) else text.value


def init_options(kind: str, base_url: str, http2: str = "on", **extra: Any) -> dict:
    return {"kestrel": {"provider": kind, "baseUrl": base_url, "model": "mock-model", "apiKey": "x",
                        "http2": http2, **extra}}


def client_capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            inline_completion=types.InlineCompletionClientCapabilities(dynamic_registration=False),
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        ),
        general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    )


CLIENT_KIND = "raw"  # or "pygls" (--client)


def new_client(raw: bool = False) -> Any:
    if CLIENT_KIND == "pygls" and not raw:
        return BenchClient()
    return RawClient()


@asynccontextmanager
async def kestrel_server(options: dict, log_path: Path | None, ready: bool = True, raw: bool = False,
                         env: dict[str, str] | None = None) -> AsyncIterator[Any]:
    """Spawn `python -m kestrel`, initialize it and (by default) wait until the provider is ready.
    raw=True: always the RawClient (benchmarks that timestamp notifications need its hook)."""
    client = new_client(raw)
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL
    try:
        await client.spawn(SERVER_CMD, clean_env(**(env or {})), log)
        await client.initialize(options)
        if ready:
            await wait_ready(client)
        yield client
    finally:
        await stop_server(client)
        if log is not subprocess.DEVNULL:
            log.close()


async def stop_server(client: BenchClient) -> None:
    """shutdown/exit politely (5 s each), else kill; then close the client."""
    try:
        if client.proc is not None and client.proc.returncode is None:
            await asyncio.wait_for(client.shutdown(), 5)
            await asyncio.wait_for(client.proc.wait(), 5)
    except Exception:
        pass
    if client.proc is not None and client.proc.returncode is None:
        client.proc.kill()
        await client.proc.wait()
    await client.close()


async def wait_ready(client: BenchClient, timeout: float = 30.0) -> None:
    """The provider is created after `initialized` (importing openai is slow): wait for the
    `kestrel/status` that says it is configured and its prewarm finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = await client.get_status()
        if isinstance(st, dict) and st.get("state") in ("ready", "busy") and st.get("connection") not in (None, "idle"):
            return
        if isinstance(st, dict) and st.get("state") == "unconfigured":
            raise RuntimeError(f"kestrel is unconfigured: {st.get('message')}")
        await asyncio.sleep(0.02)
    raise RuntimeError("kestrel did not become ready")


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
