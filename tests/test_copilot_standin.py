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


def test_trim_by_indentation_follows_copilots_own_indentation_rule() -> None:
    from bench.peers.standin import current_indent, fim_prompt, indentation_cut

    # a function body after its docstring: `current` is the `def` line's indentation
    prompt = '# Path: tasks/f.py\ndef f(x):\n    """Doc.\n    more\n    """\n'
    assert current_indent(prompt, "python") == 0
    assert current_indent("def f(x):\n    for a in b:\n        ", "python") == 4
    assert current_indent("", "python") == 0
    body = "    for a in x:\n        y()\n    return 1\n\n\ndef g():\n    pass\n"
    cut = indentation_cut(body, 0, 4)  # next line of the document is indented 4: the block ends there
    assert body[:cut] == "    for a in x:\n        y()"
    assert indentation_cut(body, 0, 0)  == body.index("\ndef g")  # a top-level line ends it
    assert indentation_cut("    return 1\n", 0, 0) is None  # nothing after the first line yet: go on
    branch = "if a:\n        y()\n    else:\n        z()\n    return 1\n"
    assert branch[:indentation_cut(branch, 4, 4)] == "if a:\n        y()\n    else:\n        z()"  # `else` continues
    assert indentation_cut("x = 1\n\n   \n", 4, 0) is None  # blank lines never end a block
    assert fim_prompt("# Path: a.py\nx = ", "\ny = 2\n") == "<|fim_prefix|># Path: a.py\nx = <|fim_suffix|>\ny = 2\n<|fim_middle|>"


async def _forwarding(tmp_path) -> None:
    """`upstream` set: the completion is the upstream model's FIM answer, cut by indentation."""
    seen: list = []

    async def upstream(reader, writer):  # a fake llama.cpp /v1/completions, streaming 4 pieces
        head = await reader.readuntil(b"\r\n\r\n")
        n = int(next(ln.split(b":")[1] for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")))
        seen.append(json.loads(await reader.readexactly(n)))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for piece in ["    for a in x:\n", "        y()\n", "    return 1\n", "def g():\n"]:
            ev = b"data: " + json.dumps({"id": "c", "object": "text_completion", "created": 0, "model": "m",
                                         "choices": [{"text": piece, "index": 0, "finish_reason": None,
                                                      "logprobs": None}]}).encode() + b"\n\n"
            writer.write(f"{len(ev):x}\r\n".encode() + ev + b"\r\n")
            await writer.drain()
        ev = b"data: [DONE]\n\n"
        writer.write(f"{len(ev):x}\r\n".encode() + ev + b"\r\n0\r\n\r\n")
        await writer.drain()
        writer.close()

    up = await asyncio.start_server(upstream, "127.0.0.1", 0)
    port = up.sockets[0].getsockname()[1]
    cert, key = certs.make_cert(tmp_path)
    import ssl

    s = StandIn({"upstream": f"http://127.0.0.1:{port}/v1", "upstream_model": "qwen", "fim": "qwen"},
                log=open(tmp_path / "log", "w"))
    base = await s.start(cert, key)
    try:
        async with httpx.AsyncClient(base_url=base, verify=ssl.create_default_context(cafile=cert), timeout=10) as c:
            body = {"prompt": '# Path: t.py\ndef f(x):\n    """D."""\n', "suffix": "    return 1\n", "max_tokens": 77,
                    "stop": ["\n\n\n"], "stream": True, "temperature": 0,
                    "extra": {"language": "python", "next_indent": 4, "trim_by_indentation": True}}
            r = await c.post("/v1/engines/e/completions", json=body)
            events = _sse(r.text)
            assert events[-1] == "[DONE]" and events[-2]["choices"][0]["finish_reason"] == "stop"
            assert "".join(e["choices"][0]["text"] for e in events[:-1]) == "    for a in x:\n        y()"
    finally:
        await s.close()
        up.close()
    sent = seen[0]
    assert sent["prompt"] == "<|fim_prefix|>" + body["prompt"] + "<|fim_suffix|>" + body["suffix"] + "<|fim_middle|>"
    assert sent["max_tokens"] == 77 and sent["temperature"] == 0 and sent["stream"] is True
    assert sent["stop"][0] == "\n\n\n" and "<|endoftext|>" in sent["stop"]


def test_standin_forwards_to_an_upstream_model(tmp_path) -> None:
    asyncio.run(_forwarding(tmp_path))
