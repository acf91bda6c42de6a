"""Hostile bytes on the wire cost the server neither its life nor its state.

A client (or anything that can write to the server's input) sends what no library would: a
`Content-Length` of a terabyte, a body over the size limit, invalid JSON, broken headers. Before the
fix `Content-Length: 1000000000000` killed the server with MemoryError and invalid JSON went
unanswered. Now each gets a clear JSON-RPC error and the very next request is answered.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from lsp_wire import Wire, frame, request, stdio_server, tcp_server

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
TERABYTE_HEADER = b"Content-Length: 1000000000000\r\n\r\n"


async def still_serves(wire: Wire) -> None:
    answer = await wire.request("kestrel/getStatus", timeout=15)
    assert "state" in answer["result"], answer


async def test_a_terabyte_content_length_is_refused_and_the_next_request_answered():
    async with stdio_server() as (wire, proc):
        await wire.initialize()
        await wire.send_raw(TERABYTE_HEADER)  # the exact attack, then an ordinary request
        await still_serves(wire)
        error = await wire.response_to(None)
        assert error["error"]["code"] == INVALID_REQUEST and "limit" in error["error"]["message"], error
        assert proc.returncode is None


async def test_a_request_over_the_limit_is_answered_with_its_own_id():
    """A 65 MiB request against the default 64 MiB limit: discarded unread, the request's own id
    gets the error (so the client stops waiting), the next request is answered."""
    async with stdio_server() as (wire, proc):
        await wire.initialize()
        huge = request("huge", "kestrel/chat", {"prompt": "x" * (65 * 1024 * 1024)})
        await wire.send(huge)
        error = await wire.response_to("huge", timeout=60)
        assert error["error"]["code"] == INVALID_REQUEST, error
        assert "67,108,864" in error["error"]["message"] and "--max-message-mb" in error["error"]["message"], error
        await still_serves(wire)


async def test_a_notification_over_the_limit_is_reported_to_the_user():
    async with stdio_server("--max-message-mb", "1") as (wire, proc):
        await wire.initialize()
        await wire.open("file:///work/huge.py", "x = 1\n" * 400_000)  # 2.4 MB
        shown = await wire.notification("window/showMessage", lambda p: "textDocument/didOpen" in p["message"])
        assert shown["params"]["type"] == 1 and "1,048,576" in shown["params"]["message"], shown
        await still_serves(wire)


@pytest.mark.parametrize("body, code, reply_id", [
    (b"{not json", PARSE_ERROR, None),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "kestrel/getStatus", "par', PARSE_ERROR, None),  # cut short
    (b"\xff\xfe\x00garbage", PARSE_ERROR, None),  # not UTF-8
    (b"[1, 2]", INVALID_REQUEST, None),  # JSON, but not a JSON-RPC message
    (b'{"id": 9, "method": "kestrel/getStatus"}', INVALID_REQUEST, 9),  # no "jsonrpc": "2.0"
], ids=["not-json", "truncated", "not-utf8", "batch", "not-jsonrpc"])
async def test_invalid_json_gets_an_error_and_the_server_goes_on(body, code, reply_id):
    """JSON-RPC 2.0 §5.1: a parse error is answered with id null (the id cannot be known)."""
    async with stdio_server() as (wire, proc):
        await wire.initialize()
        await wire.send_raw(frame(body))
        await still_serves(wire)
        error = await wire.response_to(reply_id)
        assert error["error"]["code"] == code, error


@pytest.mark.parametrize("garbage", [
    b"Content-Length: lots\r\n\r\n",
    b"Content-Type: application/json\r\n\r\n{}",  # no Content-Length
    b"X" * 20_000 + b"\r\n\r\n",  # a header line with no end in sight
], ids=["length-not-a-number", "no-length", "endless-header"])
async def test_a_broken_header_is_skipped(garbage):
    async with stdio_server() as (wire, proc):
        await wire.initialize()
        await wire.send_raw(garbage)
        await still_serves(wire)
        error = await wire.response_to(None)
        assert error["error"]["code"] == PARSE_ERROR and "header" in error["error"]["message"], error


async def test_the_same_limits_hold_over_tcp():
    with tempfile.TemporaryDirectory() as runtime:
        async with tcp_server(Path(runtime)) as server:
            editor = await server.editor()
            await editor.send_raw(frame(b"{not json"))
            assert (await editor.response_to(None))["error"]["code"] == PARSE_ERROR
            await editor.send_raw(TERABYTE_HEADER)
            await still_serves(editor)
            assert (await editor.response_to(None))["error"]["code"] == INVALID_REQUEST
            assert server.proc.returncode is None


@pytest.mark.parametrize("read_size", [1, 7, 40, 65536])
async def test_framing_does_not_depend_on_how_the_bytes_arrive(read_size):
    """The same frames whether the pipe delivers one byte at a time or everything at once: a
    header split across reads is still found, an oversized body is skipped, a lying length stops
    at the next header."""
    from kestrel.transport.framing import FrameReader, Malformed, Message, Oversized

    ok = frame(request(1, "kestrel/getStatus"))
    stream = (ok + frame(b"x" * 300) + TERABYTE_HEADER + b'{"id": 2' + ok + b"Content-Length: 150\r\n\r\n{}"
              + ok + b"junk\r\n\r\n" + ok)
    chunks = [stream[i:i + read_size] for i in range(0, len(stream), read_size)]

    async def read(n: int) -> bytes:
        return chunks.pop(0) if chunks else b""

    frames, reader = [], FrameReader(read, max_body=200)
    while (item := await reader.next()) is not None:
        frames.append(item)
    body = ok.split(b"\r\n\r\n", 1)[1]
    assert frames == [Message(body), Oversized(300, b"x" * 300), Oversized(10**12, b'{"id": 2'), Message(body),
                      Message(b"{}"), Message(body), Malformed("header line without ':'"), Message(body)]
