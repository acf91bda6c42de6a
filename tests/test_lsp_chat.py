"""`kestrel/chat`: streamed deltas, stop keeps the partial answer, faults keep what arrived."""

from __future__ import annotations

import asyncio

import pytest

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


async def test_socket_dropped_mid_answer_reconnects_and_completes(mock):
    async with kestrel(mock_options(mock, "responses-ws", maxRetries=0)) as client:
        deltas = capture_deltas(client)
        resumed = []
        client.feature("kestrel/chatResumed")(lambda p: resumed.append(p))
        await wait_for(lambda: mock.stats()["requests"].get("ws_create"), what="prewarm")
        mock.configure(fault="drop", fault_count=1, fault_after=4, text=ANSWER,
                       rules=[{"match": "connection dropped", "text": " [resumed]"}])
        result = await client.protocol.send_request_async("kestrel/chat", {"id": "t3", "prompt": "explain"})
        assert not getattr(result, "error", None) and resumed
        before = result.text[: resumed[0].at]
        assert before and ANSWER.startswith(before)  # what arrived before the drop is kept
        assert result.text.endswith(" [resumed]")  # the turn completed on a new socket with the context replayed
        assert mock.stats()["ws_connections"] >= 2
        await wait_for(lambda: "".join(deltas) == result.text, what="all deltas")


async def test_socket_dropping_every_time_fails_clearly_and_keeps_the_partial_answer(mock):
    async with kestrel(mock_options(mock, "responses-ws", maxRetries=0)) as client:
        await wait_for(lambda: mock.stats()["requests"].get("ws_create"), what="prewarm")
        mock.configure(fault="drop", fault_count=-1, fault_after=4, text=ANSWER)
        result = await client.protocol.send_request_async("kestrel/chat", {"id": "t4", "prompt": "explain"})
        assert result.error and "closed" in result.error
        assert result.text.startswith("Use a ")  # everything that arrived is kept (3 attempts' worth)
        assert mock.stats()["ws_connections"] >= 3  # it reconnected (bounded), then gave up clearly
        mock.configure(fault=None)
        again = await client.protocol.send_request_async("kestrel/chat", {"id": "t5", "prompt": "explain"})
        assert again.text == ANSWER  # the user can retry


def capture_steers(client) -> list:
    marks: list = []
    client.feature("kestrel/chatSteered")(lambda params: marks.append(params))
    return marks


@pytest.mark.parametrize("provider,steering,mode", [
    ("responses-ws", True, "native"),
    ("responses-ws", False, "emulated"),  # the model answers steering_not_supported
    ("chat", True, "emulated"),  # Chat Completions cannot steer
])
async def test_steering_redirects_the_running_answer_without_losing_text(mock, provider, steering, mode):
    mock.configure(text=ANSWER, tps=30, steering=steering,
                   rules=[{"match": "shorter please", "text": " OK, shorter: use dict(pairs)."}])
    async with kestrel(mock_options(mock, provider)) as client:
        deltas = capture_deltas(client)
        marks = capture_steers(client)
        pending = asyncio.ensure_future(client.protocol.send_request_async("kestrel/chat", {"id": "s1", "prompt": "explain"}))
        await wait_for(lambda: len("".join(deltas)) >= 6, what="the answer to start")
        ack = await client.protocol.send_request_async("kestrel/steer", {"id": "s1", "text": "shorter please"})
        assert ack.accepted and ack.mode == mode
        result = await pending
        before = result.text[: result.steers[0].at]
        assert before and ANSWER.startswith(before)  # nothing streamed before the steer was lost
        assert result.text.endswith("OK, shorter: use dict(pairs).")  # the redirected continuation
        assert len(before) < len(ANSWER)
        await wait_for(lambda: "".join(deltas) == result.text, what="all deltas")
        assert marks and marks[0].mode == mode
        if mode == "emulated" and provider == "chat":
            log = [e["body"] for e in mock.stats()["request_log"] if e["endpoint"].endswith("/chat/completions")]
            sent = log[-1]["messages"]
            assert sent[-2] == {"role": "assistant", "content": before} and sent[-1]["content"] == "shorter please"


async def test_steer_after_the_answer_finished_says_so(mock):
    mock.configure(text="done.")
    async with kestrel(mock_options(mock)) as client:
        await client.protocol.send_request_async("kestrel/chat", {"id": "s2", "prompt": "hi"})
        ack = await client.protocol.send_request_async("kestrel/steer", {"id": "s2", "text": "more"})
        assert not ack.accepted and "already finished" in ack.error


async def test_the_answer_cap_setting_reaches_the_model(mock):
    mock.configure(text=ANSWER)
    async with kestrel(mock_options(mock, chat={"maxTokens": 321})) as client:
        await client.protocol.send_request_async("kestrel/chat", {"prompt": "explain"})
        assert mock.stats()["last_request"]["max_tokens"] == 321
    async with kestrel(mock_options(mock)) as client:  # default: the model's own limit
        await client.protocol.send_request_async("kestrel/chat", {"prompt": "explain"})
        assert "max_tokens" not in mock.stats()["last_request"]


@pytest.mark.parametrize("provider", ["chat", "responses", "responses-ws"])
async def test_an_answer_cut_at_its_token_limit_says_so(mock, provider):
    """The model wrote as many tokens as it was allowed: the answer may end mid-sentence, and the result
    says so (the panel tells the user to ask for the rest); an answer that ended by itself does not."""
    mock.configure(text=ANSWER)
    async with kestrel(mock_options(mock, provider, chat={"maxTokens": 3})) as client:
        cut = await client.protocol.send_request_async("kestrel/chat", {"prompt": "explain"})
        assert cut.text and cut.text != ANSWER and cut.hitTokenLimit is True
    async with kestrel(mock_options(mock, provider)) as client:
        whole = await client.protocol.send_request_async("kestrel/chat", {"prompt": "explain"})
        assert whole.text == ANSWER and getattr(whole, "hitTokenLimit", None) is None
