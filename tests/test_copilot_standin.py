"""The GitHub stand-in that the Copilot language-server comparison (bench/peers) runs against:
its endpoints over TLS with the venv's HTTP client. No npm, no network."""

from __future__ import annotations

import asyncio
import json

import pytest

from bench.peers import certs
from bench.peers.standin import StandIn

httpx = pytest.importorskip("httpx2")
pytestmark = pytest.mark.skipif(not certs.available(), reason="needs `cryptography` or the openssl CLI")


def _sse(text: str) -> list:
    return [json.loads(ln[6:]) if ln[6:] != "[DONE]" else "[DONE]"
            for ln in text.splitlines() if ln.startswith("data: ")]


async def _exercise(tmp_path) -> None:
    cert, key = certs.make_cert(tmp_path)
    import ssl

    verify = ssl.create_default_context(cafile=cert)
    s = StandIn({"text": "compute(x)\nmore()\n", "ttft_ms": 30, "tps": 400}, log=open(tmp_path / "log", "w"))
    base = await s.start(cert, key)
    try:
        async with httpx.AsyncClient(base_url=base, verify=verify, timeout=10) as c:
            r = await c.get("/copilot_internal/v2/token")
            assert r.status_code == 200 and r.headers["x-github-request-id"]
            tok = r.json()
            assert tok["token"] and tok["expires_at"] > 4_000_000_000 and tok["refresh_in"] > 0
            assert {"api", "proxy", "telemetry", "origin-tracker"} <= set(tok["endpoints"])
            assert all(v.startswith(base.rstrip("/")) for v in tok["endpoints"].values())
            assert (await c.get("/copilot_internal/user")).status_code == 200
            exp = (await c.get("/telemetry")).json()
            assert exp == {"Configs": [{"Id": "vscode", "Parameters": {}}], "AssignmentContext": ""}
            assert (await c.get("/models")).json() == {"data": []}
            assert (await c.get("/embeddings/models")).json() == {"models": []}
            r = await c.post("/telemetry", content=b'[{"name":"x"}]')
            assert r.status_code == 200 and r.headers["x-github-request-id"]

            body = {"prompt": "# path: a.py\nx = ", "suffix": "\n", "max_tokens": 500, "stop": ["\n"],
                    "stream": True, "extra": {"language": "python"}, "n": 1}
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            r = await c.post("/v1/engines/gpt-41-copilot/completions", json=body)
            elapsed = loop.time() - t0
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            assert r.headers["x-github-request-id"]
            events = _sse(r.text)
            assert events[-1] == "[DONE]"
            text = "".join(e["choices"][0]["text"] for e in events[:-1])
            assert text == "compute(x)"  # cut at the stop sequence, as the mock does
            assert events[-2]["choices"][0]["finish_reason"] == "stop"
            assert elapsed >= 0.03  # the scripted TTFT

            r = await c.get("/no/such/path")
            assert r.status_code == 404 and r.headers["x-github-request-id"]
        assert "GET /no/such/path" in s.stats["unknown"]
        assert s.stats["completion_bodies"][0]["body"]["extra"] == {"language": "python"}
        assert s.stats["streams_completed"] == 1
    finally:
        await s.close()


def test_standin_endpoints(tmp_path) -> None:
    asyncio.run(_exercise(tmp_path))
