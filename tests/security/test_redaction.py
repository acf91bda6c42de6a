"""No key leaves the server in any message it sends, even when an endpoint echoes it back
(issue #20, finding 6).

The attack: a hostile endpoint answers every completion with an error that quotes the key it was
sent, whole, truncated the way OpenAI does and as a bearer token. The editor asks for an inline
completion (status, error message), a chat answer (resumes, error) and the status; every JSON-RPC
message the client receives, and the server's stderr, must be free of the key and of any 8
characters of its start or end. Once with a key the server was given (not key-shaped), once with a
Groq `gsk_` key from the environment.

The redactor itself is pinned by `redaction_cases.json`, the same table the extension's
`extension/test/redact.test.ts` runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import clean_env, complete, kestrel, open_doc, wait_for
from hostile_endpoint import RecordingEndpoint
from kestrel.redact import redact

CASES = json.loads((Path(__file__).parent / "redaction_cases.json").read_text())["cases"]
CLIENT_CANARY = "kestrel-canary-0d1e2f3a4b5c6d7e8f90"
GROQ_CANARY = "gsk_CanaryGroq0a1b2c3d4e5f6a7b8c9dXYZ"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_redaction_table(case):
    out = redact(case["text"], case["secrets"])
    assert not [a for a in case["absent"] if a in out], out
    assert not [p for p in case["present"] if p not in out], out


def test_code_the_editor_inserts_keeps_key_shaped_literals_but_never_a_held_key():
    """An edit or completion is code going into the user's file: a fixture like `sk-test-…` that
    the file already has must arrive unchanged (else accepting the edit corrupts it); a key
    Kestrel holds is still removed everywhere."""
    from kestrel.redact import redact_payload, register_secret

    held = "kestrel-held-key-5f6e7d8c9b0a"
    register_secret(held)
    fixture = 'FAKE = "sk-test-0123456789abcdef"'
    message = {"result": {"edits": [{"newText": fixture}], "items": [{"insertText": f"{fixture} # {held}"}],
                          "error": f"the model said {fixture}"}}
    out = redact_payload(message)["result"]
    assert out["edits"][0]["newText"] == fixture
    assert out["items"][0]["insertText"] == f"{fixture} # [REDACTED]"
    assert "sk-test-0123456789abcdef" not in out["error"]


def test_a_held_key_used_as_a_name_in_a_message_is_removed_too():
    """Keys of a JSON object are names, left alone, except a key Kestrel holds: a map keyed by
    credential (a per-key rate-limit table echoed in an error's data) must not carry it out."""
    from kestrel.redact import redact_payload, register_secret

    held = "kestrel-held-key-as-name-1a2b3c"
    register_secret(held)
    out = redact_payload({"error": {"data": {held: {"remaining": 0}, "apiKey": "x"}}})
    assert held not in repr(out)
    assert out["error"]["data"]["[REDACTED]"] == {"remaining": 0}
    assert "apiKey" in out["error"]["data"]  # a name that is no key stays


def leaks(text: str, key: str) -> bool:
    return key in text or key[:8] in text or key[-8:] in text


def record_every_message(client) -> list[str]:
    """Every JSON-RPC message the client receives from now on, as the JSON the server sent."""
    received: list[str] = []
    structure = client.protocol.structure_message

    def recording(data):
        if isinstance(data, dict) and "jsonrpc" in data:
            received.append(json.dumps(data))
        return structure(data)

    client.protocol.structure_message = recording
    return received


@pytest.mark.parametrize(
    "key, options, env",
    [
        pytest.param(CLIENT_CANARY, lambda url: {"provider": "chat", "baseUrl": url, "model": "m", "apiKey": CLIENT_CANARY},
                     lambda url: clean_env(), id="the client's key"),
        pytest.param(GROQ_CANARY, lambda url: {},
                     lambda url: clean_env(KESTREL_PROVIDER="groq", KESTREL_BASE_URL=url, KESTREL_MODEL="m",
                                           GROQ_API_KEY=GROQ_CANARY), id="a gsk_ key from the environment"),
    ],
)
async def test_a_key_echoed_by_a_hostile_endpoint_reaches_no_message(key, options, env, capsys):
    with RecordingEndpoint(echo_key=True) as hostile:
        async with kestrel({"kestrel": options(hostile.base_url)}, env=env(hostile.base_url), log_level="DEBUG") as client:
            received = record_every_message(client)
            uri = "file:///work/echo.py"
            open_doc(client, uri, "x = \n")
            await complete(client, uri, 0, 4)  # fails: status "error" and an error message
            await wait_for(lambda: any(e.get("state") == "error" for e in client.status_events), what="the error status")
            chat = await client.protocol.send_request_async("kestrel/chat", {"id": "t1", "prompt": "hello"})
            status = await client.protocol.send_request_async("kestrel/getStatus", {})
            await wait_for(lambda: client.messages, what="the error message")
            assert any('"kestrel/chatResumed"' in m for m in received)  # the echo went through every path
        assert hostile.saw(key)  # the endpoint did get the key, and echoed it
    stderr = capsys.readouterr().err
    assert "Incorrect API key provided" in " ".join(received)
    outputs = [*received, str(chat), str(status), *(str(e) for e in client.status_events),
               *(m.message for m in client.messages), *(m.message for m in client.log_messages)]
    assert not [text for text in outputs if leaks(text, key)]
    assert not leaks(stderr, key)


def test_redaction_of_known_and_shaped_keys(caplog):
    import logging

    from kestrel.redact import RedactingFilter, register_secret

    register_secret("my-canary-key-123456")
    assert "canary" not in redact("key=my-canary-key-123456")
    assert "sk-proj" not in redact("Authorization: Bearer sk-proj-abcdefghijklmnop")
    logger = logging.getLogger("t")
    logger.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO):
        logger.info("using %s", "my-canary-key-123456")
    assert "my-canary-key-123456" not in caplog.text
