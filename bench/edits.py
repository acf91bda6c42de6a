"""`edits_ms`: quick fixes and inline edits, against the mock's own TTFT.

- quick fix: `codeAction/resolve` of "Fix with Kestrel" sent → response with the edit (the time
  from picking the fix to having the edit to apply), vs the same model request straight through
  the SDK (a warm `AsyncOpenAI`, chat, the same mock).
- inline edit: `kestrel/edit` sent → the first `kestrel/editDelta` that completes a line (the first
  previewed line), vs the SDK's time to its first streamed line.
Mock: ttft 20 ms, 400 tokens/s, so the model's own time dominates; reported: p50/p95 and the
ratio to the SDK baseline, pairs interleaved.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .common import MockProcess, init_options, summary
from .lsp_client import kestrel_server

TTFT_MS = 20
TPS = 400
FIXED = '    print("hello", name)'
REWRITE = "def greet(name):\n    print(\"hello\", name)\n    return name"
SOURCE = 'import os\n\n\ndef greet(name):\n    pritn("hello", name)\n    return name\n'
URI = "file:///bench/edits.py"


async def _sdk_first_line_ms(sdk: Any) -> float:
    t0 = time.perf_counter()
    text = ""
    stream = await sdk.chat.completions.create(model="mock-model", messages=[{"role": "user", "content": "x"}], stream=True)
    first_line = None
    async for chunk in stream:
        text += (chunk.choices[0].delta.content or "") if chunk.choices else ""
        if first_line is None and "\n" in text:
            first_line = (time.perf_counter() - t0) * 1000
    return first_line if first_line is not None else (time.perf_counter() - t0) * 1000


async def _sdk_total_ms(sdk: Any) -> float:
    t0 = time.perf_counter()
    stream = await sdk.chat.completions.create(model="mock-model", messages=[{"role": "user", "content": "x"}], stream=True)
    async for _ in stream:
        pass
    return (time.perf_counter() - t0) * 1000


async def run(samples: int, out: Path) -> dict[str, Any]:
    from openai import AsyncOpenAI

    result: dict[str, Any] = {"mock_ttft_ms": TTFT_MS, "mock_tps": TPS}
    with MockProcess(out / "mock.log", text=FIXED, ttft_ms=TTFT_MS, tps=TPS) as mock:
        sdk = AsyncOpenAI(base_url=mock.base_url, api_key="x", max_retries=0)
        async with kestrel_server(init_options("chat", mock.base_url, "on"), out / "server.log", raw=True) as client:
            client.open(SOURCE, URI)
            diag = {"range": {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 9}},
                    "message": "undefined name 'pritn'", "source": "pyflakes", "severity": 1}
            fix_ms, fix_sdk = [], []
            for i in range(samples + 3):
                actions = await client.request("textDocument/codeAction", {
                    "textDocument": {"uri": URI}, "range": diag["range"], "context": {"diagnostics": [diag]}})
                t0 = time.perf_counter()
                resolved = await client.request("codeAction/resolve", actions[0])
                ms = (time.perf_counter() - t0) * 1000
                assert resolved.get("edit"), resolved
                ref = await _sdk_total_ms(sdk)
                if i >= 3:
                    fix_ms.append(ms)
                    fix_sdk.append(ref)
            result["quick_fix_ms"] = summary(fix_ms)
            result["quick_fix_sdk_ms"] = summary(fix_sdk)

            mock.configure(text=REWRITE)
            first_line: dict[str, float] = {}

            def on_note(method: str, params: Any, t: float) -> None:
                if method == "kestrel/editDelta" and "\n" in params.get("delta", "") and params["id"] not in first_line:
                    first_line[params["id"]] = t

            client.on_notification = on_note
            edit_ms, edit_sdk = [], []
            for i in range(samples + 3):
                eid = f"e{i}"
                t0 = time.perf_counter()
                r = await client.request("kestrel/edit", {"id": eid, "uri": URI, "instruction": "fix the typo",
                                                          "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}})
                assert not r.get("error"), r
                ref = await _sdk_first_line_ms(sdk)
                if i >= 3 and eid in first_line:
                    edit_ms.append((first_line[eid] - t0) * 1000)
                    edit_sdk.append(ref)
            result["edit_first_line_ms"] = summary(edit_ms)
            result["edit_first_line_sdk_ms"] = summary(edit_sdk)
        await sdk.close()
    for key, ref in (("quick_fix_ms", "quick_fix_sdk_ms"), ("edit_first_line_ms", "edit_first_line_sdk_ms")):
        a, b = result[key], result[ref]
        result[key.replace("_ms", "_ratio_p50")] = round(a["p50"] / b["p50"], 3) if a["p50"] and b["p50"] else None
    return result
