"""`kestrel/chat`: streamed deltas, stop keeps the partial answer, faults keep what arrived."""

from __future__ import annotations

import asyncio

from conftest import kestrel, mock_options, wait_for

ANSWER = "Use a dict comprehension: {k: v for k, v in pairs}."


def capture_deltas(client) -> list[str]:
    deltas: list[str] = []
    client.feature("kestrel/chatDelta")(lambda params: deltas.append(params.delta))
    return deltas


async def test_chat_streams_deltas_and_returns_the_answer(mock):
    mock.configure(text=ANSWER)
    async with kestrel(mock_options(mock)) as client:
        deltas = capture_deltas(client)
        result = await client.protocol.send_request_async(
            "kestrel/chat", {"id": "t1", "messages": [{"role": "user", "content": "invert a dict?"}]})
        assert result.text == ANSWER and result.id == "t1"
        await wait_for(lambda: "".join(deltas) == ANSWER, what="all deltas")
        assert mock.stats()["last_request"]["messages"][-1]["content"] == "invert a dict?"


async def test_stop_keeps_what_was_streamed(mock):
    mock.configure(text=ANSWER, tps=20)
    async with kestrel(mock_options(mock, "responses")) as client:
        deltas = capture_deltas(client)
        pending = asyncio.ensure_future(client.protocol.send_request_async("kestrel/chat", {"id": "t2", "prompt": "explain"}))
        await wait_for(lambda: len("".join(deltas)) >= 3, what="some deltas")
        assert await client.protocol.send_request_async("kestrel/stopChat", {"id": "t2"}) is True
        result = await pending
        assert result.stopped and ANSWER.startswith(result.text) and len(result.text) < len(ANSWER)
        await wait_for(lambda: mock.stats()["streams_cancelled"] == 1, what="upstream closed")


async def test_socket_dropped_mid_answer_keeps_the_partial_answer(mock):
    async with kestrel(mock_options(mock, "responses-ws", maxRetries=0)) as client:
        await wait_for(lambda: mock.stats()["requests"].get("ws_create"), what="prewarm")
        mock.configure(fault="drop", fault_after=4, text=ANSWER)
        result = await client.protocol.send_request_async("kestrel/chat", {"id": "t3", "prompt": "explain"})
        assert result.error and "closed" in result.error
        assert result.text and ANSWER.startswith(result.text)
        mock.configure(fault=None)
        again = await client.protocol.send_request_async("kestrel/chat", {"id": "t4", "prompt": "explain"})
        assert again.text == ANSWER  # retry works on a fresh socket
