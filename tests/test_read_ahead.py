"""Reading the prompt where the cursor rests (`kestrel/cursor`, completion/read_ahead.py): kestrel-lsp
as a process over stdio against the mock model on this machine, checked in the requests it received."""

from __future__ import annotations

import asyncio


from conftest import change_doc, complete, kestrel, mock_options, open_doc, wait_for
from kestrel.completion.read_ahead import CHUNK_CHARS, chunk_ends

URI = "file:///work/orders.py"
HEAD = "".join(f"def total_{i}(items):\n    return sum(item.price * {i} for item in items)\n\n\n" for i in range(30))
DOC = HEAD + "def grand_total(items):\n    \n    return 0\n"
LINE = HEAD.count("\n") + 1  # the empty body line of grand_total, the cursor after its indent


def reads(mock) -> list[dict]:
    """The one-token requests the mock received: the reads ahead."""
    return [e["body"] for e in mock.stats()["request_log"]
            if e["endpoint"] == "/v1/completions" and e["body"].get("max_tokens") == 1]


def cursor(client, line: int = LINE, character: int = 4, uri: str = URI) -> None:
    client.protocol.notify("kestrel/cursor", {"uri": uri, "position": {"line": line, "character": character}})


def test_chunks_end_on_line_ends_and_the_last_at_the_end():
    text = "".join(f"line {i:03d} " + "x" * 40 + "\n" for i in range(40)) + "tail"
    ends = chunk_ends(text)
    assert ends[-1] == len(text) and ends == sorted(set(ends))
    assert all(text[e - 1] == "\n" for e in ends[:-1])
    assert all(CHUNK_CHARS <= b - a < CHUNK_CHARS + 60 for a, b in zip([0, *ends[:-2]], ends[:-1]))
    assert chunk_ends("short") == [5]


async def test_the_prompt_where_the_cursor_rests_is_read_before_the_first_keystroke(mock):
    """The reads are successive prefixes of the prompt the next suggestion sends, without its suffix,
    one token each; the suggestion after the keystroke begins with the last of them."""
    mock.configure(text="ubtotal = 0\n")
    async with kestrel(mock_options(mock, "fim")) as client:
        open_doc(client, URI, DOC)
        cursor(client)
        chunks = len(chunk_ends(HEAD + "def grand_total(items):\n    "))
        await wait_for(lambda: len(reads(mock)) == chunks, what=f"{chunks} reads")
        prompts = [r["prompt"] for r in reads(mock)]
        assert chunks >= 3
        assert prompts[-1] == "<|fim_prefix|>" + HEAD + "def grand_total(items):\n    <|fim_suffix|><|fim_middle|>"
        heads = [p.removesuffix("<|fim_suffix|><|fim_middle|>") for p in prompts]
        assert all(b.startswith(a) and len(b) > len(a) for a, b in zip(heads, heads[1:]))
        change_doc(client, URI, DOC.replace("\n    \n", "\n    s\n"), 2)  # the first keystroke
        assert await complete(client, URI, LINE, 5) == "ubtotal = 0"
        sent = mock.stats()["last_request"]
        assert sent["prompt"].startswith(heads[-1]) and sent["max_tokens"] > 1
        d = await client.protocol.send_request_async("kestrel/diagnostics", {})
        assert (d.readAheads, d.readAheadsUsed) == (1, 1)
        cursor(client, LINE, 5)  # resting where the suggestion was just asked for: nothing more to read
        await asyncio.sleep(0.3)
        assert len(reads(mock)) == chunks


async def test_a_keystroke_stops_the_reading_after_the_chunk_in_flight(mock):
    mock.configure(text="ubtotal = 0\n", ttft_ms=400)
    async with kestrel(mock_options(mock, "fim")) as client:
        open_doc(client, URI, DOC)
        cursor(client)
        await wait_for(lambda: len(reads(mock)) == 1, what="the first read")
        change_doc(client, URI, DOC.replace("\n    \n", "\n    s\n"), 2)
        assert await complete(client, URI, LINE, 5) == "ubtotal = 0"
        await asyncio.sleep(0.6)
        assert len(reads(mock)) == 1


async def test_nothing_is_read_when_turned_off_for_chat_models_or_for_secret_files(mock):
    mock.configure(text="x\n")
    async with kestrel(mock_options(mock, "fim", completion={"readAhead": False})) as client:
        open_doc(client, URI, DOC)
        cursor(client)
        await asyncio.sleep(0.3)
    async with kestrel(mock_options(mock, "chat")) as client:  # a chat prompt is not laid out to be kept
        open_doc(client, URI, DOC)
        cursor(client)
        await asyncio.sleep(0.3)
        assert (await client.protocol.send_request_async("kestrel/diagnostics", {})).readAheads == 0
    async with kestrel(mock_options(mock, "fim")) as client:
        secret = "file:///work/.env"
        open_doc(client, secret, "API_TOKEN=abc\n" * 200, language="dotenv")
        cursor(client, 10, 4, secret)
        await asyncio.sleep(0.3)
    # Only the model list may have been asked (each server's prewarm, `GET /models`, reaches the mock
    # or not depending on how fast the server shuts down): no completion, no read.
    assert set(mock.stats()["requests"]) <= {"/v1/models"}


async def test_a_remote_model_is_never_asked_to_read_ahead():
    """A provider that is not on this machine: the notification is ignored (its prompt cache is billed)."""
    options = {"kestrel": {"provider": "fim", "baseUrl": "http://192.0.2.1:9/v1", "model": "m", "apiKey": "k" * 16,
                           "completion": {"prepareNext": False}}}
    async with kestrel(options) as client:
        open_doc(client, URI, DOC)
        cursor(client)
        await asyncio.sleep(0.3)
        assert (await client.protocol.send_request_async("kestrel/diagnostics", {})).readAheads == 0


async def test_a_suggestion_prepared_elsewhere_is_given_up_when_the_cursor_rests_away_from_it(mock):
    """After a suggestion, what follows it is being prepared; the user clicks elsewhere instead of
    accepting: the preparation is cancelled (a local server runs one stream at a time) and the new
    place is read."""
    # The preparation's prompt holds the accepted `sqrt(2)` (after the middle marker: it continues the last prompt).
    mock.configure(text="sqrt(2)\n", rules=[{"match": "sqrt(2)", "text": " + 1\n", "ttft_ms": 3000}])
    doc = "import math\nvalue = math.\n" + HEAD
    async with kestrel(mock_options(mock, "fim", completion={"prepareNext": True})) as client:
        open_doc(client, URI, doc)
        assert await complete(client, URI, 1, 13) == "sqrt(2)"
        await wait_for(lambda: mock.stats()["requests"].get("/v1/completions") == 2, what="the preparation")
        cursor(client, 40, 4)
        await wait_for(lambda: mock.stats()["streams_cancelled"] >= 1, what="the preparation to be cancelled")
        await wait_for(lambda: len(reads(mock)) >= 1, what="a read at the new place")
        d = await client.protocol.send_request_async("kestrel/diagnostics", {})
        assert d.preparedUsed == 0 and d.readAheads == 1


async def test_nothing_is_read_where_the_next_prompt_continues_the_last_one_sent(mock):
    """Characters typed at the place of the last suggestion, with no suggestion asked for since (the
    text did not follow it): the next prompt is the last one sent with those characters after it
    (`completion.continueTyped`), which the server holds; a read there would replace it. Elsewhere in
    the file a read starts."""
    mock.configure(text="ubtotal = 0\n")
    async with kestrel(mock_options(mock, "fim", completion={"prepareNext": False})) as client:
        open_doc(client, URI, DOC)
        assert (await complete(client, URI, LINE, 4)).startswith("ubtotal = 0")
        change_doc(client, URI, DOC.replace("\n    \n", "\n    x\n"), 2)  # not what was suggested; no request yet
        cursor(client, LINE, 5)
        await asyncio.sleep(0.3)
        assert reads(mock) == []
        cursor(client, 2, 4)  # another function's body
        await wait_for(lambda: len(reads(mock)) >= 1, what="a read at the other place")
