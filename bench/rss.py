"""`rss_mb`: the server's VmRSS idle after initialize (before and after the provider is
ready), after N and after 2N completions, and the growth between the two."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .common import MOCK_TEXT, SUGGESTION, MockProcess, init_options, rss_mb
from .lsp_client import kestrel_server, wait_ready
from .inline_added import document


async def run_kind(kind: str, http2: str, n: int, out: Path) -> dict[str, Any]:
    with MockProcess(out / "mock.log", text=MOCK_TEXT) as mock:
        async with kestrel_server(init_options(kind, mock.base_url, http2), out / "server.log", ready=False) as client:
            pid = client.proc.pid
            after_init = rss_mb(pid)  # `initialize` answered; openai not imported yet
            await wait_ready(client)
            await asyncio.sleep(0.5)
            idle = rss_mb(pid)
            text, _, _ = document(0)
            client.open(text)
            marks: dict[int, float | None] = {}
            wrong = 0
            for i in range(1, 2 * n + 1):
                text, line, ch = document(i)
                client.change(text)
                got = await client.inline(line, ch)
                wrong += got != SUGGESTION
                if i in (n, 2 * n):
                    await asyncio.sleep(0.3)  # let the last streams finish
                    marks[i] = rss_mb(pid)
            # the same number of didChange notifications with no completion: is growth per edit?
            for i in range(2 * n + 1, 3 * n + 1):
                client.change(document(i)[0])
                if i % 50 == 0:
                    await client.get_status()  # keep the pipe from filling up
            await client.get_status()
            await asyncio.sleep(0.3)
            after_edits = rss_mb(pid)
            stats = mock.stats()
    growth = None if marks[2 * n] is None or marks[n] is None else marks[2 * n] - marks[n]
    r = {
        "kind": kind,
        "http2": http2,
        "after_initialize_mb": _r(after_init),
        "idle_ready_mb": _r(idle),
        f"after_{n}_mb": _r(marks[n]),
        f"after_{2 * n}_mb": _r(marks[2 * n]),
        "n": n,
        "after_n_mb": _r(marks[n]),
        "after_2n_mb": _r(marks[2 * n]),
        "growth_n_to_2n_mb": _r(growth),
        "growth_kb_per_completion": None if growth is None else round(growth * 1024 / n, 2),
        "after_2n_plus_n_didchange_only_mb": _r(after_edits),
        "growth_n_didchange_only_mb": _r(None if after_edits is None or marks[2 * n] is None else after_edits - marks[2 * n]),
        "wrong_results": wrong,
        "mock_connections_opened": stats.get("connections_opened"),
        "mock_ws_connections": stats.get("ws_connections"),
    }
    print(f"  {kind:14s} idle {r['idle_ready_mb']} MB, after {n}: {r['after_n_mb']} MB, after {2 * n}: "
          f"{r['after_2n_mb']} MB (growth {r['growth_n_to_2n_mb']} MB); +{n} didChange only: "
          f"+{r['growth_n_didchange_only_mb']} MB", flush=True)
    return r


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


async def run(kinds: list[str], n: int, out: Path) -> dict[str, Any]:
    res = {}
    for kind in kinds:
        name, http2 = (kind[:-3], "off") if kind.endswith("-h1") else (kind, "on")
        res[kind] = await run_kind(name, http2, n, out)
    return res
