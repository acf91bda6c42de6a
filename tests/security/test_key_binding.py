"""A key goes only to the provider and host it was given for (issue #20, finding 5).

Attacks, each against a real kestrel-lsp process and model endpoints that record the
Authorization header of every request they get:
- a client clears its key (`kestrel/setApiKey` null) while a third-party preset is selected: the
  OpenAI key from the environment must not go to it;
- a workspace (`.vscode/settings.json` in a trusted workspace: VS Code sends its values in
  `workspace/didChangeConfiguration`) points `kestrel.baseUrl` at its own host, as a raw transport
  and as a preset: neither the stored key nor the environment's may reach that host;
- "Switch provider": the key entered for one provider must not go to the next one; the status says
  which key is missing; each provider's own key reaches it, also after switching back.
The environment-only set-up (`KESTREL_PROVIDER=chat OPENAI_BASE_URL=… OPENAI_API_KEY=…`, `make demo`)
keeps working.
"""

from __future__ import annotations

from lsprotocol import types

from conftest import change_doc, clean_env, complete, kestrel, open_doc, wait_for
from hostile_endpoint import RecordingEndpoint

URI = "file:///work/keys.py"
OPENAI_CANARY = "sk-openai-canary-5e1f0a9b8c7d6e5f4a3b"
STORED_CANARY = "stored-canary-key-0a1b2c3d4e5f6a7b"
GROQ_CANARY = "gsk_groqcanary0a1b2c3d4e5f6a7b8c9d"
CEREBRAS_CANARY = "csk-cerebrascanary0a1b2c3d4e5f6a7b"


def configure(client, settings: dict) -> None:
    """What VS Code sends when a setting changes: the whole merged `kestrel` section."""
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"kestrel": settings}))


async def complete_at(client, endpoint: RecordingEndpoint, version: int) -> None:
    """One inline completion, and proof that it reached `endpoint`."""
    before = len(endpoint.authorizations)
    change_doc(client, URI, f"x{version} = \n", version)
    await complete(client, URI, 0, 4 + len(str(version)))
    await wait_for(lambda: len(endpoint.authorizations) > before, what="a request at the endpoint")


def status_says(client, *words: str) -> bool:
    return any(all(w in (e.get("message") or "") for w in words) for e in client.status_events)


async def test_clearing_the_client_key_never_hands_the_openai_key_to_a_third_party_preset():
    with RecordingEndpoint() as groq:
        env = clean_env(OPENAI_API_KEY=OPENAI_CANARY)
        async with kestrel({"kestrel": {"provider": "groq", "baseUrl": groq.base_url, "model": "m"}}, env=env) as client:
            open_doc(client, URI, "x = \n")
            client.protocol.notify("kestrel/setApiKey", {"apiKey": None})
            await complete_at(client, groq, 2)
            assert not groq.saw(OPENAI_CANARY), groq.authorizations
            await wait_for(lambda: status_says(client, "no API key for groq", "GROQ_API_KEY"), what="the missing key")


async def test_a_workspace_pointing_base_url_at_its_host_gets_no_key():
    with RecordingEndpoint() as legit, RecordingEndpoint() as attacker:
        env = clean_env(OPENAI_API_KEY=OPENAI_CANARY, KESTREL_PROVIDER="chat", OPENAI_BASE_URL=legit.base_url)
        user = {"provider": "chat", "baseUrl": legit.base_url, "model": "m"}  # the user's own settings
        async with kestrel({"kestrel": {**user, "apiKey": STORED_CANARY}}, env=env) as client:
            open_doc(client, URI, "x = \n")
            await complete_at(client, legit, 2)
            assert legit.saw(STORED_CANARY)  # the key works where it was given for

            configure(client, {**user, "baseUrl": attacker.base_url})  # the workspace's settings.json
            await complete_at(client, attacker, 3)
            configure(client, {"provider": "groq", "baseUrl": attacker.base_url, "model": "m"})  # as a preset
            await complete_at(client, attacker, 4)
            # A key handed over while the workspace's endpoint is active, but bound to the user's.
            client.protocol.notify("kestrel/setApiKey", {"apiKey": STORED_CANARY, "provider": "chat",
                                                         "baseUrl": legit.base_url})
            await complete_at(client, attacker, 5)
            assert not attacker.saw(STORED_CANARY) and not attacker.saw(OPENAI_CANARY), attacker.authorizations
            attacker_port = attacker.base_url.split(":")[2].split("/")[0]
            await wait_for(lambda: status_says(client, "no API key for groq", attacker_port),
                           what="the status naming the key the endpoint lacks")

            configure(client, user)  # back to the user's endpoint: the key is used again
            await complete_at(client, legit, 6)
            assert legit.authorizations[-1] == f"Bearer {STORED_CANARY}"


async def test_switching_provider_asks_for_its_own_key_and_never_reuses_another():
    with RecordingEndpoint() as groq, RecordingEndpoint() as cerebras:
        groq_at = {"provider": "groq", "baseUrl": groq.base_url}
        cerebras_at = {"provider": "cerebras", "baseUrl": cerebras.base_url}
        async with kestrel({"kestrel": {**groq_at, "model": "m"}}, env=clean_env()) as client:
            open_doc(client, URI, "x = \n")
            client.protocol.notify("kestrel/setApiKey", {"apiKey": GROQ_CANARY, **groq_at})
            await complete_at(client, groq, 2)
            assert groq.saw(GROQ_CANARY)

            configure(client, {**cerebras_at, "model": "m"})  # "Switch provider"
            await complete_at(client, cerebras, 3)
            assert not cerebras.saw(GROQ_CANARY), cerebras.authorizations
            await wait_for(lambda: status_says(client, "no API key for cerebras", "CEREBRAS_API_KEY"),
                           what="the status asking for the Cerebras key")
            client.protocol.notify("kestrel/setApiKey", {"apiKey": CEREBRAS_CANARY, **cerebras_at})
            await complete_at(client, cerebras, 4)
            assert cerebras.authorizations[-1] == f"Bearer {CEREBRAS_CANARY}"

            configure(client, {**groq_at, "model": "m"})  # and back: each keeps its own key
            await complete_at(client, groq, 5)
            assert groq.authorizations[-1] == f"Bearer {GROQ_CANARY}"
    assert not cerebras.saw(GROQ_CANARY), cerebras.authorizations
    assert not groq.saw(CEREBRAS_CANARY), groq.authorizations


async def test_the_environment_alone_still_configures_an_endpoint_and_its_key():
    """`make demo` and the README: the environment's key goes to the environment's endpoint, also
    when the editor repeats the same endpoint in its settings; an older client's bare setApiKey
    binds to the endpoint configured when it arrives."""
    with RecordingEndpoint() as ep:
        env = clean_env(KESTREL_PROVIDER="chat", OPENAI_BASE_URL=ep.base_url, OPENAI_API_KEY="env-key-0123456789",
                        KESTREL_MODEL="m")
        async with kestrel({}, env=env) as client:
            open_doc(client, URI, "x = \n")
            await complete_at(client, ep, 2)
            assert ep.authorizations[-1] == "Bearer env-key-0123456789"
            configure(client, {"provider": "chat", "baseUrl": ep.base_url, "model": "m"})  # the same endpoint
            await complete_at(client, ep, 3)
            assert ep.authorizations[-1] == "Bearer env-key-0123456789"
            client.protocol.notify("kestrel/setApiKey", {"apiKey": "bare-key-0123456789"})
            await complete_at(client, ep, 4)
            assert ep.authorizations[-1] == "Bearer bare-key-0123456789"


def test_origins_and_endpoints_compare_scheme_host_and_port():
    from kestrel.keys import Endpoint, origin

    assert origin("https://API.openai.com/v1") == origin("https://api.openai.com:443/other") == "https://api.openai.com:443"
    assert origin("http://api.openai.com/v1") != origin("https://api.openai.com/v1")  # no key in clear text
    assert origin("http://127.0.0.1:8765/v1") != origin("http://127.0.0.1:8766/v1")
    assert origin("https://api.openai.com.evil.example/v1") != origin("https://api.openai.com/v1")
    # Read differently by two URL parsers (the extension's Node URL, this server's urlsplit): bound to nothing.
    assert origin("https://api.openai.com@evil.example/v1") is None
    assert origin("https://gateway.corp.example:443\\@evil.example/v1") is None
    assert origin("https://gateway.corp.example\\.evil.example/v1") is None
    assert origin("https://gateway.corp.example /v1") is None and origin("https://gateway\t.example/v1") is None
    assert origin("https://api.openai.com/v1?from=a@b") == "https://api.openai.com:443"
    assert origin("http://[::1]:8000/v1") == "http://[::1]:8000"
    assert origin("not a url") is None and origin("http://host:notaport/") is None
    assert Endpoint("groq", "https://api.groq.com:443") != Endpoint("custom", "https://api.groq.com:443")


def test_a_url_two_parsers_read_differently_gets_no_key():
    """The extension picks the stored key with Node's URL, which reads `\\` as `/`; this server and
    httpx read `https://gateway:443\\@evil/v1` as `evil`. Neither the key handed over for it nor one
    inside the settings is bound to it, so no request carries a key there."""
    from kestrel import config

    ambiguous = "https://gateway.corp.example:443\\@evil.example/v1"
    for provider in ("openai", "responses-ws", "chat"):
        options = {"kestrel": {"provider": provider, "baseUrl": ambiguous, "model": "m"}}
        assert config.bind_key(STORED_CANARY, options, "kestrel/setApiKey", environ={}) is None
        settings, _ = config.load_settings_and_keys({"kestrel": {**options["kestrel"], "apiKey": STORED_CANARY}},
                                                    None, environ={"OPENAI_API_KEY": OPENAI_CANARY})
        assert not settings.api_key, provider


async def test_the_sdk_s_ambient_headers_never_reach_a_configured_endpoint():
    """The openai SDK would add `OPENAI_CUSTOM_HEADERS` (an `Authorization` header among them),
    `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` to every request, wherever a workspace points the client."""
    gateway = "sk-gateway-canary-77aa66bb55cc"
    with RecordingEndpoint() as attacker:
        env = clean_env(OPENAI_CUSTOM_HEADERS=f"Authorization: Bearer {gateway}\nx-gateway-token: {gateway}-t",
                        OPENAI_ORG_ID=f"org-{gateway}", OPENAI_PROJECT_ID=f"proj-{gateway}")
        async with kestrel({"kestrel": {"provider": "chat", "baseUrl": attacker.base_url, "model": "m"}}, env=env) as client:
            open_doc(client, URI, "x = \n")
            await complete_at(client, attacker, 2)
        assert not attacker.saw(gateway), attacker.headers[-1]
