"""`python -m bench.runtimes`: llama.cpp's own C++ `llama-server` against llama-cpp-python's server (what
Kestrel runs today, through its launcher) on the same GGUF, side by side in one process (issue 24).

Both servers run at once on their own loopback ports; requests alternate between them (which goes first
alternates too), one at a time, so they never compete for the cores and each finds its own KV cache in
the state its previous request left. Measured through the openai SDK, greedy:

- start: spawn -> serving (llama-cpp-python: Kestrel's launcher, imports and model load, until it proves
  its identity; llama-server: until `/health` answers 200), in alternating rounds;
- cold: FIM prompts of the embedded windows (384 + 96 tokens, cut from Kestrel's own source), each new to
  both servers: time to the first token, tokens/s after it, whether both wrote the same text;
- warm: the same prompt with one more typed character before the cursor (llama.cpp keeps the common
  prefix of the last prompt): time to the first token.

    python -m bench.runtimes --llama-server PATH [--model-path M.gguf] [--samples 20] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .common import paired_ratio_p50, summary
from .local_model import _sdk_request, _window_prompts


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CppServer:
    """llama.cpp's `llama-server` on a loopback port (a benchmark stand-in: no key, no identity proof)."""

    def __init__(self, binary: str, model: str, n_ctx: int, threads: int, extra: list[str]) -> None:
        self.binary, self.model, self.n_ctx, self.threads, self.extra = binary, model, n_ctx, threads, extra
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> float:
        """Spawn and wait for /health; ms from spawn to serving."""
        import httpx2

        self.port = _free_port()
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [self.binary, "-m", self.model, "-c", str(self.n_ctx), "-t", str(self.threads), "-np", "1",
             "--host", "127.0.0.1", "--port", str(self.port), "--no-webui", *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        async with httpx2.AsyncClient() as http:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"llama-server exited ({self.proc.returncode})")
                try:
                    if (await http.get(f"http://127.0.0.1:{self.port}/health", timeout=1)).status_code == 200:
                        return (time.perf_counter() - t0) * 1000
                except httpx2.HTTPError:
                    pass
                await asyncio.sleep(0.005)

    async def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            await asyncio.to_thread(self.proc.wait)


class PythonServer:
    """llama-cpp-python's server as Kestrel starts it (its launcher), without the key (a raw SDK client)."""

    def __init__(self, model: Any, n_ctx: int, threads: int) -> None:
        from kestrel.local.runtime import LocalModelServer

        self.server = LocalModelServer(model, n_ctx=n_ctx, threads=threads, require_key=False)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    async def start(self) -> float:
        t0 = time.perf_counter()
        await self.server.start()
        return (time.perf_counter() - t0) * 1000

    async def stop(self) -> None:
        await self.server.stop()


async def run(binary: str, model_path: str | None, samples: int, starts: int, extra: list[str]) -> dict[str, Any]:
    from openai import AsyncOpenAI

    from kestrel.local.models import LocalModel, resolve_model
    from kestrel.local.runtime import thread_count

    model = (LocalModel(path=Path(model_path), name=Path(model_path).stem, source="path") if model_path
             else resolve_model(allow_download=False))
    threads, n_ctx = thread_count(None), 2048
    makers = {"llama_cpp_python": lambda: PythonServer(model, n_ctx, threads),
              "llama_server": lambda: CppServer(binary, str(model.path), n_ctx, threads, extra)}
    start_ms: dict[str, list[float]] = {k: [] for k in makers}
    for i in range(starts + 1):  # the first round warms the page cache, not counted
        for name in (list(makers) if i % 2 == 0 else list(reversed(makers))):
            server = makers[name]()
            ms = await server.start()
            await server.stop()
            if i:
                start_ms[name].append(ms)

    servers = {name: make() for name, make in makers.items()}
    for server in servers.values():
        await server.start()
    clients = {name: AsyncOpenAI(base_url=s.base_url, api_key="none", max_retries=0) for name, s in servers.items()}
    cold: dict[str, list[float]] = {k: [] for k in makers}
    warm: dict[str, list[float]] = {k: [] for k in makers}
    tps: dict[str, list[float]] = {k: [] for k in makers}
    texts: dict[str, list[str]] = {k: [] for k in makers}
    try:
        for name in servers:  # one unmeasured request each: first-inference costs are not the runtime's pace
            await _sdk_request(clients[name], "local", "def f():\n    return", 4, stop=())
        prompts = _window_prompts(model.name, samples)
        for i, prompt in enumerate(prompts):
            order = list(servers) if i % 2 == 0 else list(reversed(servers))
            for name in order:
                ms, rate, text = await _sdk_request(clients[name], "local", prompt, 32, stop=())
                cold[name].append(ms)
                texts[name].append(text)
                if rate:
                    tps[name].append(rate)
            cut = prompt.index("<|fim_suffix|>") if "<|fim_suffix|>" in prompt else len(prompt)
            typed = prompt[:cut] + "x" + prompt[cut:]
            for name in order:
                ms, _, _ = await _sdk_request(clients[name], "local", typed, 8, stop=())
                warm[name].append(ms)
    finally:
        for c in clients.values():
            await c.close()
        for server in servers.values():
            await server.stop()
    py, cpp = "llama_cpp_python", "llama_server"
    return {
        "model": model.name, "threads": threads, "n_ctx": n_ctx, "prompts": len(cold[py]), "llama_server_flags": extra,
        "start_ms": {k: summary(v, 1) for k, v in start_ms.items()},
        "cold_ttft_ms": {k: summary(v, 1) for k, v in cold.items()},
        "warm_ttft_ms": {k: summary(v, 1) for k, v in warm.items()},
        "tokens_per_s": {k: summary(v, 2) for k, v in tps.items()},
        "ratio_cpp_over_python_p50": {"start": paired_ratio_p50(start_ms[py], start_ms[cpp]),
                                      "cold_ttft": paired_ratio_p50(cold[py], cold[cpp]),
                                      "warm_ttft": paired_ratio_p50(warm[py], warm[cpp]),
                                      "tokens_per_s": paired_ratio_p50(tps[py], tps[cpp])},
        "same_text": sum(a == b for a, b in zip(texts[py], texts[cpp])),
        "texts": {k: v for k, v in texts.items()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.runtimes", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llama-server", required=True, help="the llama-server binary")
    p.add_argument("--model-path", help="a GGUF file (default: the embedded model)")
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--starts", type=int, default=6)
    p.add_argument("--extra", default="", help="more llama-server flags, space-separated")
    p.add_argument("--out", type=Path)
    a = p.parse_args(argv)
    res = asyncio.run(run(a.llama_server, a.model_path, a.samples, a.starts, a.extra.split()))
    text = json.dumps(res, indent=2)
    if a.out:
        a.out.write_text(text + "\n")
    summary_only = {k: v for k, v in res.items() if k != "texts"}
    print(json.dumps(summary_only, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
