"""`kestrel.effort` reaches the model where the model takes it, and the status says where it does not.

Chat Completions takes a top-level `reasoning_effort` on reasoning models only (gpt-oss on any host,
OpenAI's o-series and GPT-5): the server decides by model id, sends the configured effort on chat
turns and fixes, never more than "low" on ghost text, and reports `effortSupported`/`effortNote` in
its status so the chat panel's effort picker never pretends.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from conftest import complete, kestrel, mock_options, open_doc, wait_for
from kestrel.providers.reasoning import chat_completions_effort, takes_reasoning_effort

URI = "file:///work/effort.py"


def chat_bodies(mock, since: int = 0) -> list[dict]:
    """The Chat Completions requests the mock received (after the first `since` log entries)."""
    return [e["body"] for e in mock.stats()["request_log"][since:] if e["endpoint"].endswith("/chat/completions")]


async def chat_turn(client, turn_id: str = "t1") -> None:
    result = await client.protocol.send_request_async(
        "kestrel/chat", {"id": turn_id, "messages": [{"role": "user", "content": "why is the sky blue?"}]})
    assert not getattr(result, "error", None), result


async def status(client) -> dict:
    from kestrel.core.payload import plain

    await wait_for(lambda: any(ev["state"] in ("ready", "busy") for ev in client.status_events), what="provider ready")
    return plain(await client.protocol.send_request_async("kestrel/getStatus", {}))


@pytest.mark.parametrize("model", ["gpt-oss-20b", "openai/gpt-oss-120b", "o4-mini"])
async def test_a_reasoning_model_gets_the_configured_effort_on_chat(mock, model):
    mock.configure(text="Rayleigh scattering.")
    async with kestrel(mock_options(mock, model=model, effort="high")) as client:
        snapshot = await status(client)
        assert snapshot["effortSupported"] is True
        assert "reasoning_effort" in snapshot["effortNote"]
        await chat_turn(client)
        (body,) = chat_bodies(mock)
        assert body["model"] == model and body["reasoning_effort"] == "high"


async def test_a_model_without_reasoning_gets_no_effort_and_the_status_says_so(mock):
    mock.configure(text="Rayleigh scattering.")
    async with kestrel(mock_options(mock, model="qwen2.5-coder", effort="high")) as client:
        snapshot = await status(client)
        assert snapshot["effortSupported"] is False
        assert "qwen2.5-coder" in snapshot["effortNote"] and "no effect" in snapshot["effortNote"]
        assert client.status_events[-1]["effortSupported"] is False  # the pushed status says it too
        await chat_turn(client)
        (body,) = chat_bodies(mock)
        assert "reasoning_effort" not in body


async def test_ghost_text_never_runs_at_a_high_effort(mock):
    mock.configure(text="42\n")
    async with kestrel(mock_options(mock, model="gpt-oss-20b", effort="xhigh")) as client:
        open_doc(client, URI, "answer = \n")
        assert await complete(client, URI, 0, 9) == "42"
        completions = chat_bodies(mock)
        assert completions and all(b.get("reasoning_effort") == "low" for b in completions)
        seen = len(mock.stats()["request_log"])
        await chat_turn(client)
        (body,) = chat_bodies(mock, since=seen)
        assert body["reasoning_effort"] == "high"  # xhigh: Chat Completions' highest is "high"


async def test_fim_ghost_text_carries_no_effort_and_its_chat_turns_do(mock):
    mock.configure(text="42\n")
    async with kestrel(mock_options(mock, "fim", model="gpt-oss-20b", effort="high")) as client:
        open_doc(client, URI, "answer = \n")
        assert await complete(client, URI, 0, 9) == "42"
        fim = [e["body"] for e in mock.stats()["request_log"] if e["endpoint"].endswith("/v1/completions")]
        assert fim and all("reasoning_effort" not in b for b in fim)  # /v1/completions has no effort
        await chat_turn(client)
        (body,) = chat_bodies(mock)
        assert body["reasoning_effort"] == "high"


async def test_a_quick_fix_uses_the_configured_effort(mock):
    mock.configure(text="```python\n    print('hello', name)\n```\n")
    source = "def greet(name):\n    pritn('hello', name)\n"
    problem = types.Diagnostic(range=types.Range(start=types.Position(line=1, character=4),
                                                 end=types.Position(line=1, character=9)),
                               message="undefined name 'pritn'", source="pyflakes")
    async with kestrel(mock_options(mock, model="gpt-oss-20b", effort="medium")) as client:
        open_doc(client, URI, source)
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI), range=problem.range,
            context=types.CodeActionContext(diagnostics=[problem])))
        resolved = await client.code_action_resolve_async(actions[0])
        assert resolved.edit is not None
        bodies = chat_bodies(mock)
        assert bodies and all(b["reasoning_effort"] == "medium" for b in bodies)


async def test_changing_the_effort_reaches_the_next_request_without_a_restart(mock):
    mock.configure(text="Rayleigh scattering.")
    async with kestrel(mock_options(mock, model="gpt-oss-20b", effort="low")) as client:
        await status(client)
        await chat_turn(client, "t1")
        # The chat panel's picker writes kestrel.effort: the client sends its whole section again.
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=mock_options(mock, model="gpt-oss-20b", effort="high")))
        await chat_turn(client, "t2")
        assert [b["reasoning_effort"] for b in chat_bodies(mock)] == ["low", "high"]


async def test_openai_reasoning_models_get_the_token_cap_and_sampling_they_accept(mock):
    mock.configure(text="42\n")
    async with kestrel(mock_options(mock, model="o4-mini", effort="high")) as client:
        open_doc(client, URI, "answer = \n")
        assert await complete(client, URI, 0, 9) == "42"
        body = chat_bodies(mock)[0]
        # o-series / GPT-5 refuse max_tokens and a temperature (HTTP 400); gpt-oss takes both.
        assert "max_completion_tokens" in body and "max_tokens" not in body and "temperature" not in body


async def test_responses_providers_take_the_effort_and_say_so(mock):
    mock.configure(text="Rayleigh scattering.")
    async with kestrel(mock_options(mock, "responses", model="mock-model", effort="high")) as client:
        snapshot = await status(client)
        assert snapshot["effortSupported"] is True and "reasoning.effort" in snapshot["effortNote"]
        await chat_turn(client)
        assert mock.stats()["last_request"]["reasoning"] == {"effort": "high"}


@pytest.mark.parametrize("model,takes", [
    ("gpt-oss-20b", True), ("openai/gpt-oss-120b", True), ("gpt-oss:20b", True), ("GPT-OSS-120B", True),
    ("o1", True), ("o3", True), ("o3-mini", True), ("o4-mini", True), ("o1-2024-12-17", True),
    ("gpt-5", True), ("gpt-5-mini", True), ("gpt-5.1-codex", True),
    ("o1-mini", False), ("o1-preview", False), ("gpt-5-chat-latest", False),
    ("qwen2.5-coder", False), ("qwen-3-coder-480b", False), ("gpt-4o", False), ("gpt-4.1-mini", False),
    ("llama-3.3-70b-versatile", False), ("olmo-2", False), ("mock-model", False), ("", False),
])
def test_which_models_take_reasoning_effort(model, takes):
    assert takes_reasoning_effort(model) is takes


def test_xhigh_is_sent_as_high_and_nothing_where_the_model_takes_no_effort():
    assert [chat_completions_effort("gpt-oss-20b", e) for e in ("low", "medium", "high", "xhigh")] == \
        ["low", "medium", "high", "high"]
    assert chat_completions_effort("qwen2.5-coder", "high") is None
