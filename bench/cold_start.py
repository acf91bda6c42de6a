"""`cold_start_ms`: spawn `python -m kestrel` -> `initialize` result received; and, on the
same runs, spawn -> first inline completion answered (openai is imported after `initialized`)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .common import MOCK_TEXT, SUGGESTION, MockProcess, init_options, summary
from .lsp_client import SERVER_CMD, clean_env
from .inline_added import document
from .rawclient import RawClient


async def one_run(base_url: str, log: Any) -> tuple[float, float, str | None]:
    client = RawClient()
    t0 = time.perf_counter()
    # Started as the VS Code extension starts it when a provider is configured (here the mock): without
    # the embedded model's early process, which would otherwise compete for the 2 cores (local_model
    # measures the start with it).
    await client.spawn([*SERVER_CMD, "--no-prestart-local"], clean_env(), log)
    try:
        await client.initialize(init_options("chat", base_url, "on"))
        t_init = (time.perf_counter() - t0) * 1000
        text, line, ch = document(1)
        client.open(text)
        got = await client.inline(line, ch)
        t_first = (time.perf_counter() - t0) * 1000
        await asyncio.wait_for(client.shutdown(), 5)
        await asyncio.wait_for(client.proc.wait(), 5)
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()
        await client.close()
    return t_init, t_first, got


def interpreter_start_ms(runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=clean_env())
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def run(runs: int, out: Path) -> dict[str, Any]:
    init_ms, first_ms, wrong = [], [], 0
    with MockProcess(out / "mock.log", text=MOCK_TEXT) as mock, open(out / "server.log", "ab") as log:
        await one_run(mock.base_url, log)  # warm the OS page cache / .pyc files, not counted
        for _ in range(runs):
            a, b, got = await one_run(mock.base_url, log)
            init_ms.append(a)
            first_ms.append(b)
            wrong += got != SUGGESTION
    res = {
        "runs": runs,
        "spawn_to_initialize_ms": summary(init_ms, 1),
        "spawn_to_first_completion_ms": summary(first_ms, 1),
        "python_interpreter_start_ms": summary(interpreter_start_ms(runs), 1),
        "wrong_first_completions": wrong,
    }
    print(f"  initialize p50 {res['spawn_to_initialize_ms']['p50']} ms, first completion p50 "
          f"{res['spawn_to_first_completion_ms']['p50']} ms (bare python {res['python_interpreter_start_ms']['p50']} ms)",
          flush=True)
    return res
