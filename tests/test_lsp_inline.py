"""kestrel-lsp as a process over stdio, against the mock model, for every provider kind."""

from __future__ import annotations

import asyncio
import math

import pytest
from lsprotocol import types

from conftest import change_doc, clean_env, complete, inline_params, kestrel, mock_options, open_doc, wait_for

URI = "file:///work/sample.py"
SOURCE = "import math\n\n\ndef fibonacci(n):\n    \n"
BODY = "if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)"


@pytest.mark.parametrize("provider", ["chat", "fim", "responses", "responses-ws"])
async def test_inline_completion_every_provider(mock, provider):
    mock.configure(text=BODY + "\n")
    async with kestrel(mock_options(mock, provider)) as client:
        assert client.server_capabilities.inline_completion_provider is not None
        open_doc(client, URI, SOURCE)
        text = await complete(client, URI, 4, 4)
        assert text == BODY
        stats = mock.stats()
        if provider == "fim":
            body = stats["last_request"]
            assert body["prompt"] == (
                "<|fim_prefix|>" + SOURCE[: SOURCE.index("    \n") + 4] + "<|fim_suffix|>\n<|fim_middle|>"
            )
        if provider == "responses-ws":
            assert stats["ws_connections"] == 1
        await wait_for(lambda: any(ev.get("ttftMs") is not None for ev in client.status_events), what="a TTFT status")


async def test_fim_prompt_uses_family_template_and_context(mock):
    mock.configure(text="x")
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b")) as client:
        open_doc(client, "file:///work/helpers.py", "def compute_total(items):\n    return sum(i.price for i in items)\n")
        open_doc(client, URI, "from helpers import compute_total\n\ntotal = compute_total(")
        await complete(client, URI, 2, 22)
        prompt = mock.stats()["last_request"]["prompt"]
        # Paths are relative (here: no workspace folder, so the file name): never the user's absolute path.
        assert "<|file_sep|>helpers.py\ndef compute_total(items):" in prompt and "/work/" not in prompt
        assert prompt.endswith("<|fim_prefix|>from helpers import compute_total\n\ntotal = compute_total(<|fim_suffix|><|fim_middle|>")


async def test_single_line_mid_line(mock):
    mock.configure(text="sqrt(2)\nprint('more')\n")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, "import math\nvalue = math.\n")
        assert await complete(client, URI, 1, 13) == "sqrt(2)"


async def test_typing_through_reuses_the_same_generation(mock):
    mock.configure(text=BODY + "\n")
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        assert await complete(client, URI, 4, 4) == BODY
        typed = SOURCE.replace("    \n", "    if n \n")
        change_doc(client, URI, typed, 2)
        assert await complete(client, URI, 4, 9) == BODY[len("if n ") :]
        assert mock.stats()["requests"].get("/v1/chat/completions") == 1


async def test_streaming_generation_is_adopted_by_the_next_keystroke(mock):
    """A request cancelled while its stream still matches the typed text is reused, not re-requested."""
    mock.configure(text=BODY + "\n", tps=40)
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        first = client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(URI, 4, 4), msg_id="first")
        await wait_for(lambda: mock.stats()["tokens_sent"] >= 1, what="the stream to start")
        change_doc(client, URI, SOURCE.replace("    \n", "    if\n"), 2)
        client.protocol.notify("$/cancelRequest", types.CancelParams(id="first"))
        with pytest.raises(Exception):
            await first
        text = await complete(client, URI, 4, 6)
        assert text == BODY[2:]
        stats = mock.stats()
        assert stats["requests"].get("/v1/chat/completions") == 1 and stats["streams_cancelled"] == 0


async def test_stale_request_is_cancelled_upstream_at_once(mock):
    mock.configure(text=BODY + "\n", tps=20)
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        first = client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(URI, 4, 4), msg_id="stale")
        await wait_for(lambda: mock.stats()["tokens_sent"] >= 1, what="the stream to start")
        change_doc(client, URI, SOURCE.replace("    \n", "    zzz\n"), 2)  # diverges from the stream
        client.protocol.notify("$/cancelRequest", types.CancelParams(id="stale"))
        with pytest.raises(Exception):
            await first
        await wait_for(lambda: mock.stats()["streams_cancelled"] == 1, 5, "the upstream stream to close")
        stats = mock.stats()
        assert stats["streams_cancelled"] == 1
        assert stats["tokens_sent"] < len(BODY.split())  # stopped early: no tokens wasted after cancel
        assert stats["tokens_after_cancel"] == 0


async def test_cancel_keeps_the_http2_connection(mock):
    """Over HTTP/2 a cancelled completion resets only its stream: no new connection for the next one."""
    mock.configure(text=BODY + "\n", tps=20)
    async with kestrel(mock_options(mock, http2="on")) as client:
        open_doc(client, URI, SOURCE)
        await wait_for(lambda: mock.stats()["requests"].get("/v1/models"), what="prewarm")
        for i in range(3):
            client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(URI, 4, 4), msg_id=f"r{i}")
            await wait_for(lambda: mock.stats()["active_streams"] == 1, what="the stream to start")
            change_doc(client, URI, SOURCE.replace("    \n", f"    q{i}\n"), i + 2)
            client.protocol.notify("$/cancelRequest", types.CancelParams(id=f"r{i}"))
            await wait_for(lambda: mock.stats()["streams_cancelled"] == i + 1, what="the reset to reach the mock")
        change_doc(client, URI, SOURCE, 10)
        mock.configure(tps=0)
        assert await complete(client, URI, 4, 4) == BODY
        stats = mock.stats()
        assert stats["streams_cancelled"] == 3
        assert stats["connections_opened"] == 1


async def test_env_only_configuration(mock):
    mock.configure(text="42\n")
    env = clean_env(KESTREL_PROVIDER="chat", KESTREL_MODEL="mock-model", OPENAI_BASE_URL=mock.base_url, OPENAI_API_KEY="sk-test-env-000000")
    async with kestrel({}, env=env) as client:
        open_doc(client, URI, "answer = \n")
        assert await complete(client, URI, 0, 9) == "42"


async def test_configuration_change_switches_provider(mock):
    mock.configure(text="1\n")
    async with kestrel(mock_options(mock, "chat")) as client:
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) == "1"
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=mock_options(mock, "fim", completion={"maxLines": 2}))
        )
        change_doc(client, URI, "y = \n", 2)
        assert await complete(client, URI, 0, 4) == "1"
        assert mock.stats()["requests"].get("/v1/completions") == 1


async def test_unconfigured_server_answers_empty_and_says_why():
    async with kestrel({}) as client:
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) is None
        await wait_for(lambda: any("no model configured" in m.message for m in client.messages), what="the message")
        assert any(ev["state"] == "unconfigured" for ev in client.status_events)


async def test_configuration_change_can_clear_a_startup_value_and_the_key(mock):
    mock.configure(text="1\n")
    async with kestrel(mock_options(mock, "chat")) as client:
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) == "1"
        # The client's whole section without a provider: the startup provider is cleared.
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"kestrel": {"provider": None}}))
        change_doc(client, URI, "y = \n", 2)
        assert await complete(client, URI, 0, 4) is None
        await wait_for(lambda: client.status_events[-1]["state"] == "unconfigured", what="unconfigured")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings=mock_options(mock, "chat")))
        client.protocol.notify("kestrel/setApiKey", {"apiKey": None})  # clearing the key is honoured
        change_doc(client, URI, "z = \n", 3)
        assert await complete(client, URI, 0, 4) == "1"


async def test_the_next_suggestion_is_prepared_while_the_user_reads_it(mock):
    """Once a suggestion's stream has ended, what follows it is asked for at once, as if accepted:
    when the user accepts, the next suggestion comes from that stream, with no request after the
    acceptance. When the user types something else instead, it is dropped, counted as unused."""
    doc = "import math\nvalue = math.\n"
    mock.configure(text="sqrt(2)\n", rules=[{"match": "math.sqrt(2)", "text": " + 1\n"}])
    async with kestrel(mock_options(mock, completion={"prepareNext": True})) as client:
        open_doc(client, URI, doc)
        assert await complete(client, URI, 1, 13) == "sqrt(2)"
        await wait_for(lambda: mock.stats()["requests"].get("/v1/chat/completions") == 2,
                       what="the request for what follows the suggestion")
        assert "value = math.sqrt(2)" in str(mock.stats()["last_request"]["messages"])  # as if accepted
        change_doc(client, URI, doc.replace("math.", "math.sqrt(2)"), 2)  # Tab: the suggestion accepted
        assert await complete(client, URI, 1, 20) == " + 1"
        # A third request prepares what follows " + 1"; the user types something else instead.
        await wait_for(lambda: mock.stats()["requests"].get("/v1/chat/completions") == 3, what="the next preparation")
        change_doc(client, URI, doc.replace("math.", "math.sqrt(2) * "), 3)
        mock.configure(text="3\n", rules=[])
        assert await complete(client, URI, 1, 23) == "3"
        d = await client.protocol.send_request_async("kestrel/diagnostics", {})
        assert d.preparedGenerations >= 2 and d.preparedUsed == 1  # the second one was not needed
        assert mock.stats()["requests"].get("/v1/chat/completions") >= 4


async def test_diagnostics_report_the_last_generations_time_to_its_first_token(mock):
    """`kestrel/diagnostics` says how long the endpoint took to its first token on the last
    generation started (what bench.context_ttft compares with repository context on and off)."""
    mock.configure(text="sqrt(2)\n", ttft_ms=250)
    async with kestrel(mock_options(mock)) as client:
        d = await client.protocol.send_request_async("kestrel/diagnostics", {})
        assert getattr(d, "lastGenerationTtftMs", None) is None  # nothing asked yet: left out
        open_doc(client, URI, "import math\nvalue = math.\n")
        assert await complete(client, URI, 1, 13) == "sqrt(2)"
        d = await client.protocol.send_request_async("kestrel/diagnostics", {})
        assert d.generationsStarted == 1 and 250 <= d.lastGenerationTtftMs < 5000


async def test_preparing_the_next_suggestion_can_be_turned_off(mock):
    mock.configure(text="sqrt(2)\n")
    async with kestrel(mock_options(mock)) as client:  # the tests' default: completion.prepareNext false
        open_doc(client, URI, "import math\nvalue = math.\n")
        assert await complete(client, URI, 1, 13) == "sqrt(2)"
        await asyncio.sleep(0.3)
        assert mock.stats()["requests"].get("/v1/chat/completions") == 1
        d = await client.protocol.send_request_async("kestrel/diagnostics", {})
        assert d.preparedGenerations == 0


async def test_a_suggestion_prepared_in_another_document_is_dropped_when_the_user_types_elsewhere(mock):
    """The user leaves the file whose next suggestion is being prepared and types in another: that
    preparation is cancelled (a local server runs one stream at a time), never adopted later."""
    other = "file:///work/other.py"
    mock.configure(text="sqrt(2)\n", rules=[{"match": "math.sqrt(2)", "text": " + 1\n", "ttft_ms": 3000}])
    async with kestrel(mock_options(mock, completion={"prepareNext": True})) as client:
        open_doc(client, URI, "import math\nvalue = math.\n")
        open_doc(client, other, "import math\nangle = math.\n")
        assert await complete(client, URI, 1, 13) == "sqrt(2)"
        await wait_for(lambda: mock.stats()["requests"].get("/v1/chat/completions") == 2, what="the preparation")
        assert await complete(client, other, 1, 13) == "sqrt(2)"  # typed elsewhere: a new generation there
        await wait_for(lambda: mock.stats()["streams_cancelled"] >= 1, what="the preparation to be cancelled")
        d = await client.protocol.send_request_async("kestrel/diagnostics", {})
        assert d.preparedUsed == 0


async def test_characters_typed_go_after_the_prompt_the_model_read(mock):
    """Typing on past a suggestion (a new generation): the last prompt is sent again with what was typed
    since written as the start of the model's answer, so a fill-in-the-middle server reads only those
    characters, not the suffix behind a changed prefix; across Enter too. A change after the cursor
    starts afresh; the setting turns it off."""
    head, tail = "import math\nvalue = math.", "\nprint(value)\n"
    mock.configure(text="sqrt(2)")

    async def prompts(continue_typed: bool) -> list[str]:
        sent = []
        async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b",
                                        completion={"continueTyped": continue_typed})) as client:
            open_doc(client, URI, head + tail)
            steps = (("", tail), ("p", tail), ("pi", tail), ("pi\nx = ", tail), ("pi\nx = ", "\nprint(x)\n"))
            for version, (typed, after) in enumerate(steps, start=1):
                if version > 1:
                    change_doc(client, URI, head + typed + after, version)
                line, col = (2, 4) if "\n" in typed else (1, 13 + len(typed))
                await complete(client, URI, line, col)
                sent.append(mock.stats()["last_request"]["prompt"])
        return sent

    first, p, pi, new_line, edited = await prompts(True)
    assert first.endswith("<|fim_prefix|>" + head + "<|fim_suffix|>" + tail + "<|fim_middle|>")
    assert p == first + "p" and pi == first + "pi" and new_line == first + "pi\nx = "
    assert edited.endswith("<|fim_prefix|>" + head + "pi\nx = <|fim_suffix|>\nprint(x)\n<|fim_middle|>")
    off = await prompts(False)
    assert off[2].endswith("value = math.pi<|fim_suffix|>" + tail + "<|fim_middle|>")
    assert off[3].endswith("value = math.pi\nx = <|fim_suffix|>" + tail + "<|fim_middle|>")


async def test_a_slow_endpoint_is_sent_windows_its_first_token_fits_the_latency_budget(mock):
    """A server that reads 4,000 prompt tokens a second (a CPU): after a few streams of different
    sizes Kestrel knows its pace, and the next prompt is cut to what it reads in the budget (here
    250 ms), the lines right before the cursor kept. The same documents with no budget: whole windows."""
    mock.configure(text="x", prefill_tps=4000)
    files = {f"file:///work/m{i}.py": "".join(f"value_{i}_{k} = {k}\n" for k in range(lines))
             for i, lines in enumerate((40, 120, 260, 420, 600, 700))}

    async def last_prompt(budget: int) -> str:
        async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b",
                                        completion={"latencyBudgetMs": budget})) as client:
            for uri, text in files.items():
                open_doc(client, uri, text + "total = ")
                await complete(client, uri, text.count("\n"), 8)
            return mock.stats()["last_request"]["prompt"]

    whole, budgeted = await last_prompt(0), await last_prompt(250)
    assert "value_5_450 = 450\n" in whole  # the last 1,500 tokens: about 300 of the 700 lines
    assert "value_5_699 = 699\ntotal = <|fim_suffix|>" in budgeted
    assert len(budgeted) < 0.75 * len(whole) and "value_5_450 = 450\n" not in budgeted


async def test_a_one_line_suggestion_the_model_gave_little_chance_is_not_shown(mock):
    """`y + 1` streamed as 5 tokens at 50 % each (the mock gives another token the other half): the
    line at 3 % is under the 5 % floor and nothing is shown; under a 2 % floor, or at full
    confidence, it is. The request asked the fim endpoint for the chosen tokens' log probabilities."""
    uri, doc = "file:///work/unsure.go", "package main\n\nfunc f(y int) int {\n\tx := \n\treturn x\n}\n"

    async def shown(alternatives: dict, **completion) -> str:
        mock.configure(text="y + 1\n", rules=[{"match": "func f(y", "text": "y + 1\n", "alternatives": alternatives}])
        async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b", completion=completion)) as client:
            open_doc(client, uri, doc, language="go")
            text = await complete(client, uri, 3, 6)
            assert mock.stats()["last_request"]["logprobs"] == 1
            return text

    unsure = {"z": math.log(0.5)}
    assert not await shown(unsure)  # no item
    assert await shown(unsure, minLineProbability=0.02) == "y + 1"
    assert await shown({}) == "y + 1"
    mock.configure(text="y + 1\n", rules=[{"match": "func f(y", "text": "y + 1\n", "alternatives": unsure}])
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b", completion={"minLineProbability": 0})) as client:
        open_doc(client, uri, doc, language="go")
        assert await complete(client, uri, 3, 6) == "y + 1"
        assert "logprobs" not in mock.stats()["last_request"]  # off: not asked for
    # Python: its guards and cuts were measured without the floor; not applied there yet
    mock.configure(text="y + 1\n", rules=[{"match": "def f(y)", "text": "y + 1\n", "alternatives": unsure}])
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b")) as client:
        open_doc(client, "file:///work/unsure.py", "def f(y):\n    x = \n")
        assert await complete(client, "file:///work/unsure.py", 1, 8) == "y + 1"
        assert "logprobs" not in mock.stats()["last_request"]


STEP = ("from graph import GraphRunContext\n\n\nclass Step:\n    async def run(self, ctx: \n"
        "        return None\n")


async def test_an_invented_name_is_written_again_from_a_name_the_code_has(mock):
    """The model's line reads `StepRunContext`, which nothing binds (the name guard would hide it);
    among its alternatives for that token, `Graph` begins a name the file imports: the token is asked
    for again with its alternatives, and the rest is written after `Graph`."""
    mock.configure(text="1\n", rules=[
        {"match": "<|fim_middle|>Graph", "text": "RunContext) -> None:\n"},
        {"match": "async def run(self, ctx: ", "text": "StepRunContext) -> None:\n",
         "alternatives": {"Graph": -0.9, "Any": -1.5}},
    ])
    uri = "file:///work/step.py"
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b")) as client:
        open_doc(client, uri, STEP)
        assert await complete(client, uri, 4, 29) == "GraphRunContext) -> None:"
        sent = [r["body"] for r in mock.stats()["request_log"] if r["endpoint"] == "/v1/completions"]
    assert [b.get("logprobs") for b in sent] == [None, 5, None]  # the answer, its first token again, the rest
    assert sent[1]["max_tokens"] == 1 and sent[1]["prompt"].endswith("<|fim_middle|>")
    assert sent[2]["prompt"].endswith("<|fim_middle|>Graph")


async def test_no_alternative_that_begins_a_known_name_shows_nothing(mock):
    mock.configure(text="1\n", rules=[{"match": "async def run(self, ctx: ", "text": "StepRunContext) -> None:\n",
                                       "alternatives": {"Steps": -0.9, ")": -1.5}}])
    uri = "file:///work/step.py"
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b")) as client:
        open_doc(client, uri, STEP)
        assert await complete(client, uri, 4, 29) is None
        sent = [r["body"] for r in mock.stats()["request_log"] if r["endpoint"] == "/v1/completions"]
    assert [b.get("logprobs") for b in sent] == [None, 5]  # asked once more for the token, then nothing


MAKE = "from graph import GraphRunContext\n\n\ndef make():\n    \n"


async def test_a_retry_after_a_capped_stream_is_cut_as_its_own_stream(mock):
    """The first block stops at the token cap (finish reason `length`) mid-line and reads an invented
    name; the retry from `Graph` then ends by itself under the cap. Its last line is the retry's own,
    complete, and is shown: the first stream's cap does not carry over to the stream that replaced it."""
    mock.configure(text="1\n", rules=[
        {"match": "<|fim_middle|>ctx = Graph", "text": "RunContext()\n    return ctx\n"},
        {"match": "<|fim_middle|>ctx = ", "text": "StepRunContext()\n", "alternatives": {"Graph": -0.9}},
        {"match": "def make():", "text": "ctx = StepRunContext()\n    ctx.start()\n    ctx.wait()\n    return ctx\n"},
    ])
    uri = "file:///work/make.py"
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b", completion={"maxTokens": 16})) as client:
        open_doc(client, uri, MAKE)
        shown = await complete(client, uri, 4, 4)
        sent = [r["body"] for r in mock.stats()["request_log"] if r["endpoint"] == "/v1/completions"]
    assert sent[0]["max_tokens"] == 16  # 16 of the first answer's 24 tokens: cut at `ctx.`
    assert [b.get("logprobs") for b in sent] == [None, 5, None]
    assert shown == "ctx = GraphRunContext()\n    return ctx"
