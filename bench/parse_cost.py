"""`sdk_parse_cost`: µs per event for the SDK's typed parsing (`parse_event` /
`construct_type`) vs plain `json.loads`, on real event bytes captured from the mock."""

from __future__ import annotations

import json
import timeit
from pathlib import Path
from typing import Any

from .common import MOCK_TEXT, MockProcess
from .sdk import make_client


async def capture(base_url: str) -> dict[str, bytes]:
    """Real frames: a Responses WebSocket stream and a Chat Completions SSE stream."""
    client = make_client(base_url, "on")
    frames: dict[str, bytes] = {}
    try:
        conn = await client.responses.connect(max_retries=0).enter()
        try:
            await conn.send_raw(json.dumps({"type": "response.create", "model": "mock-model", "stream_id": "p1",
                                            "input": [{"role": "user", "content": "x = "}], "store": False}))
            while True:
                data = await conn.recv_bytes()
                kind = json.loads(data).get("type")
                frames.setdefault(kind, data)
                if kind in ("response.completed", "error"):
                    break
        finally:
            await conn.close()
        async with client.chat.completions.with_streaming_response.create(
            stream=True, model="mock-model", messages=[{"role": "user", "content": "x = "}]
        ) as resp:
            async for line in resp.iter_lines():
                if line.startswith("data:") and "[DONE]" not in line:
                    ev = json.loads(line[5:])
                    if any((c.get("delta") or {}).get("content") for c in ev.get("choices") or ()):
                        frames.setdefault("chat.completion.chunk", line[5:].strip().encode())
    finally:
        await client.close()
    return frames


def per_call_us(fn: Any, number: int) -> float:
    timer = timeit.Timer(fn)
    best = min(timer.repeat(repeat=5, number=number))
    return best / number * 1e6


async def run(number: int, out: Path) -> dict[str, Any]:
    from openai._models import construct_type
    from openai.resources.responses.responses import AsyncResponsesConnection
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent

    with MockProcess(out / "mock.log", text=MOCK_TEXT) as mock:
        frames = await capture(mock.base_url)
    parse_event = AsyncResponsesConnection.parse_event  # uses no connection state
    res: dict[str, Any] = {"number_per_repeat": number, "method": "best of 5 timeit repeats", "events": {}}
    cases = [
        ("response.output_text.delta", "parse_event (WS typed)", lambda d: parse_event(None, d)),
        ("response.output_text.delta", "construct_type(ResponseStreamEvent) (SSE typed)",
         lambda d: construct_type(value=json.loads(d), type_=ResponseStreamEvent)),
        ("response.completed", "parse_event (WS typed)", lambda d: parse_event(None, d)),
        ("chat.completion.chunk", "construct_type(ChatCompletionChunk)",
         lambda d: construct_type(value=json.loads(d), type_=ChatCompletionChunk)),
    ]
    for kind, label, typed in cases:
        data = frames.get(kind)
        if data is None:
            continue
        typed(data)  # warm caches
        j = per_call_us(lambda: json.loads(data), number)
        t = per_call_us(lambda: typed(data), number)
        entry = res["events"].setdefault(kind, {"bytes": len(data), "json_loads_us": round(j, 2), "typed": {}})
        entry["typed"][label] = {"us": round(t, 2), "ratio_vs_json": round(t / j, 1), "extra_us": round(t - j, 2)}
        print(f"  {kind:28s} {label:50s} {t:7.2f} µs vs json.loads {j:5.2f} µs (x{t / j:.1f})", flush=True)
    return res
