"""Bad input and model faults: a clear error or an empty result, never a crash or a hang."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from conftest import SERVER_CMD, change_doc, clean_env, complete, inline_params, kestrel, mock_options, open_doc, wait_for

URI = "file:///work/faults.py"


async def still_serves(client, mock) -> None:
    mock.configure(fault=None, text="str(True)\n", tps=0, ttft_ms=0)
    change_doc(client, URI, "alive = \n", 999)
    assert await complete(client, URI, 0, 8) == "str(True)"


@pytest.mark.parametrize("fault", ["500", "503", "drop", "malformed"])
async def test_model_faults_are_reported_once_and_the_server_recovers(mock, fault):
    async with kestrel(mock_options(mock, maxRetries=0)) as client:
        mock.configure(fault=fault, fault_count=-1, fault_after=2, text="first_token second third fourth\n")
        open_doc(client, URI, "x = \n")
        for i in range(3):
            change_doc(client, URI, f"x{i} = \n", i + 2)
            await complete(client, URI, 0, 5)
        await wait_for(lambda: client.messages, what="an error message")
        errors = [m for m in client.messages if m.type == types.MessageType.Error]
        assert len(errors) == 1, [m.message for m in errors]  # once, not a flood
        assert "Kestrel:" in errors[0].message
        assert any(ev["state"] in ("error", "offline") for ev in client.status_events)
        await still_serves(client, mock)
        await wait_for(lambda: client.status_events[-1]["state"] in ("ready", "busy"), 5, "status back to ready")


async def test_rate_limit_says_when_to_retry(mock):
    async with kestrel(mock_options(mock, maxRetries=0)) as client:
        mock.configure(fault="429", fault_count=1, retry_after=7)
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) is None
        await wait_for(lambda: any("rate limit" in m.message and "7" in m.message for m in client.messages), what="the 429 message")
        await still_serves(client, mock)


async def test_stalled_model_hits_the_deadline(mock):
    async with kestrel(mock_options(mock, maxRetries=0, requestTimeout=1.0)) as client:
        mock.configure(fault="stall", fault_count=1, fault_after=1, text="a b c d e f\n")
        open_doc(client, URI, "x = \n")
        assert await asyncio.wait_for(complete(client, URI, 0, 4), 10) in (None, "a")
        await still_serves(client, mock)


async def test_a_chat_stream_that_ends_with_nothing_says_why_instead_of_answering_empty(mock):
    """llama.cpp's server streams nothing at all, with no error, for a prompt longer than the model's
    context window (the mock's "empty" fault). The turn fails with a reason, not with an empty answer."""
    async with kestrel(mock_options(mock, maxRetries=0)) as client:
        mock.configure(fault="empty", fault_count=1, text="an answer\n")
        reply = await client.protocol.send_request_async("kestrel/chat", {"prompt": "What does this do?"})
        assert reply.text == "" and "ended the answer without sending anything" in reply.error
        assert "context window" in reply.error
        again = await client.protocol.send_request_async("kestrel/chat", {"prompt": "And now?"})
        assert again.text == "an answer\n" and not getattr(again, "error", None)


async def test_model_down_is_offline_not_a_crash():
    opts = {"kestrel": {"provider": "chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "maxRetries": 0}}
    async with kestrel(opts) as client:
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) is None
        await wait_for(lambda: any("cannot reach the model server" in m.message for m in client.messages), what="the message")
        assert any(ev["state"] == "offline" for ev in client.status_events)


async def test_websocket_refused_falls_back_to_http_once(mock):
    mock.configure(fault="refuse_ws", fault_count=-1, text="print('fallback')\n")
    async with kestrel(mock_options(mock, "responses-ws")) as client:
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) == "print('fallback')"
        change_doc(client, URI, "y = \n", 2)
        assert await complete(client, URI, 0, 4) == "print('fallback')"
        stats = mock.stats()
        assert stats["requests"].get("/v1/responses") == 2
        assert stats["faults_injected"] == 1  # one refused handshake: tried once, remembered for the session


async def test_bad_positions_unicode_and_huge_documents(mock):
    mock.configure(text="pass\n")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, "s = '😀😀'\n")
        for line, char in [(0, 999), (50, 0), (0, 6), (0, 5)]:  # past line, past file, inside a surrogate pair
            await complete(client, URI, line, char)
        big = "x = 1\n" * 1_800_000  # ~10 MB
        open_doc(client, "file:///work/big.py", big)
        assert await complete(client, "file:///work/big.py", 1_000_000, 5) in (None, "pass")
        open_doc(client, "file:///work/bin.dat", "\x00\x01\x02\xff" * 1000, language="plaintext")
        await complete(client, "file:///work/bin.dat", 0, 10)
        assert await client.protocol.send_request_async("kestrel/getStatus", {}) is not None
        await still_serves(client, mock)


async def test_unknown_method_and_malformed_params_get_errors(mock):
    async with kestrel(mock_options(mock)) as client:
        with pytest.raises(Exception) as unknown:
            await client.protocol.send_request_async("kestrel/noSuchMethod", {})
        assert "noSuchMethod" in str(unknown.value) or "not found" in str(unknown.value).lower()
        open_doc(client, URI, "x = \n")
        assert await complete(client, "file:///never/opened.py", 0, 0) is None
        await still_serves(client, mock)


async def test_secret_files_never_reach_the_model(mock):
    mock.configure(text="leak\n")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, "file:///work/.env", "OPENAI_API_KEY=sk-canary-do-not-send-000\n", language="dotenv")
        open_doc(client, URI, "import os\nkey = os.environ[\n")
        assert await complete(client, "file:///work/.env", 0, 5) is None
        await complete(client, URI, 1, 17)
        assert "sk-canary" not in json.dumps(mock.stats()["request_log"])


def _frame(obj) -> bytes:
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_malformed_json_rpc_on_stdin_does_not_kill_the_server():
    bad_position = {"textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": "a"}, "context": {"triggerKind": 1}}
    payload = b"".join([
        _frame(b"{oops"),
        _frame(b"[]"),
        _frame({"jsonrpc": "2.0", "id": 1, "x": 1}),
        _frame({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}}}),
        _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        _frame({"jsonrpc": "2.0", "id": 3, "method": "textDocument/inlineCompletion", "params": {"textDocument": 5}}),
        _frame({"jsonrpc": "2.0", "id": 4, "method": "textDocument/inlineCompletion", "params": bad_position}),
        _frame({"jsonrpc": "2.0", "id": 5, "method": "kestrel/getStatus", "params": {}}),
        _frame({"jsonrpc": "2.0", "id": 6, "method": "shutdown"}),
        _frame({"jsonrpc": "2.0", "method": "exit"}),
    ])
    proc = subprocess.run(SERVER_CMD, input=payload, capture_output=True, timeout=60, env=clean_env())
    replies = {}
    for chunk in proc.stdout.split(b"Content-Length:")[1:]:
        msg = json.loads(chunk.split(b"\r\n\r\n", 1)[1])
        if "id" in msg:
            replies[msg["id"]] = msg
    assert "capabilities" in replies[2]["result"]  # still answered initialize after the garbage
    assert replies[3]["error"]["code"] in (-32602, -32603) and replies[4]["error"]
    assert "state" in replies[5]["result"]
    assert replies[6].get("result", "missing") is None


@pytest.fixture
async def fuzz_client(mock):
    mock.configure(text="x\n")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, "")
        yield client


_versions = iter(range(2, 10**9))
text_st = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=text_st, line=st.integers(0, 40), character=st.integers(0, 500))
async def test_fuzz_inline_completion_params(fuzz_client, text, line, character):
    """Random documents and positions through one server: an answer or an LSP error, never death."""
    change_doc(fuzz_client, URI, text, next(_versions))
    params = inline_params(URI, line, character)
    try:
        await asyncio.wait_for(
            fuzz_client.protocol.send_request_async(types.TEXT_DOCUMENT_INLINE_COMPLETION, params), 10
        )
    except asyncio.TimeoutError:
        raise AssertionError("the server did not answer")
    assert await fuzz_client.protocol.send_request_async("kestrel/getStatus", {}) is not None


async def test_websocket_dropped_mid_stream_reconnects_on_the_next_request(mock):
    async with kestrel(mock_options(mock, "responses-ws", maxRetries=0)) as client:
        open_doc(client, URI, "x = \n")
        await wait_for(lambda: mock.stats()["requests"].get("ws_create"), what="the generate:false prewarm")
        mock.configure(fault="drop", fault_count=1, fault_after=2, text="first_token second third fourth\n")
        await complete(client, URI, 0, 4)
        await wait_for(lambda: any("dropped" in m.message or "closed" in m.message for m in client.messages), what="the message")
        await still_serves(client, mock)
        assert mock.stats()["ws_connections"] == 2


async def test_websocket_rotates_before_its_lifetime_ends(mock):
    mock.configure(text="print('rotated')\n")
    async with kestrel(mock_options(mock, "responses-ws", wsRotateSeconds=0.2)) as client:
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) == "print('rotated')"
        await asyncio.sleep(0.3)
        change_doc(client, URI, "y = \n", 2)
        assert await complete(client, URI, 0, 4) == "print('rotated')"
        assert mock.stats()["ws_connections"] >= 2


async def test_tcp_mode_serves_lsp(mock, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(*SERVER_CMD, "--tcp", f"127.0.0.1:{port}",
                                                env=clean_env(XDG_RUNTIME_DIR=str(tmp_path)),
                                                stderr=asyncio.subprocess.DEVNULL)
    try:
        token_file = tmp_path / "kestrel" / f"tcp-{port}.token"  # written once the port is bound
        await wait_for(token_file.exists, 30, "the token file")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        options = {"kestrel": {"authToken": token_file.read_text()}}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                           "params": {"capabilities": {}, "initializationOptions": options}}).encode()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        data = b""
        while b"capabilities" not in data:
            chunk = await asyncio.wait_for(reader.read(65536), 10)
            assert chunk, "the server closed the connection"
            data += chunk
        assert b"inlineCompletionProvider" in data
        writer.close()
    finally:
        proc.terminate()
        await proc.wait()


async def test_websocket_stall_ends_within_the_deadline(mock):
    async with kestrel(mock_options(mock, "responses-ws", requestTimeout=1.0)) as client:
        await wait_for(lambda: mock.stats()["requests"].get("ws_create"), what="prewarm")
        mock.configure(fault="stall", fault_after=2, text="one two three four five\n")
        result = await asyncio.wait_for(
            client.protocol.send_request_async("kestrel/chat", {"id": "stall", "prompt": "hi"}), 15)
        assert "timed out" in result.error and result.text  # what arrived is kept


async def test_completions_do_not_sleep_through_retry_after_but_chat_retries(mock):
    async with kestrel(mock_options(mock)) as client:  # default maxRetries
        open_doc(client, URI, "x = \n")
        mock.configure(fault="429", fault_count=1, retry_after=30, text="later()\n")
        assert await asyncio.wait_for(complete(client, URI, 0, 4), 10) is None  # no 30 s sleep for a keystroke
        mock.configure(fault="429", fault_count=1, retry_after=0.2, text="answer")
        result = await client.protocol.send_request_async("kestrel/chat", {"prompt": "hi"})
        assert result.text == "answer" and not getattr(result, "error", None)  # chat retried after 0.2 s
