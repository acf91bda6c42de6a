"""`kestrel-lsp --tcp` gives no other local user the editor's replies, its key, its code or control.

Each attack runs as another local user (uid 65534 via setpriv) against a real `kestrel-lsp --tcp`
process while the test plays the user's editor, which reads the token from the user's token file.
Before the fix (pygls's `start_tcp`) every new connection took over the reply socket, any
connection could reconfigure the server, and any disconnect stopped it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import clean_env, mock_options, wait_for
from kestrel.testing.mock_model import MockModelServer
from lsp_wire import (ATTACKER_PYTHON, Attacker, as_other_user, frame, free_port, listening, notification,
                      request, require_other_user, tcp_server)

CANARY_KEY = "sk-canary-tcp-0123456789abcdef"
SECRET_CODE = "PASSWORD = 'canary-code-5f1e'\nx = \n"
URI = "file:///work/project/app.py"


@pytest.fixture
def runtime_dir():
    """An $XDG_RUNTIME_DIR that other users may traverse (0755, in /tmp), so that only the
    permissions kestrel itself sets protect the token file."""
    path = Path(tempfile.mkdtemp(prefix="kestrel-run-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def evil_configuration(evil: MockModelServer) -> dict:
    return {"settings": {"kestrel": {"provider": "chat", "baseUrl": evil.base_url, "model": "mock-model"}}}


def completion_params() -> dict:
    return {"textDocument": {"uri": URI}, "position": {"line": 1, "character": 4}, "context": {"triggerKind": 2}}


def completion_text(response: dict | None) -> str | None:
    result = (response or {}).get("result") or {}
    items = result.get("items", result) if isinstance(result, dict) else result
    return items[0]["insertText"] if items else None


def nothing_reached(evil: MockModelServer) -> bool:
    stats = evil.stats()
    return not stats["requests"] and stats["connections_opened"] == 0


async def test_a_second_connection_is_refused_and_the_editor_keeps_its_replies(runtime_dir):
    require_other_user()
    async with tcp_server(runtime_dir) as server:
        editor = await server.editor()
        attacker = await Attacker.start(server.port, frame(request("attacker-1", "kestrel/getStatus")), listen=20)
        await wait_for(attacker.answered, what="the server to react to the attacker")
        try:
            answer = await editor.request("kestrel/getStatus", timeout=10)
        except (asyncio.TimeoutError, ConnectionError):
            answer = None
        await attacker.finish()
        assert attacker.received == b"", f"another user received: {attacker.received[:300]!r}"
        assert answer is not None and "state" in answer["result"], "the editor lost its reply"
        assert server.proc.returncode is None


async def test_an_attached_editor_cannot_be_reconfigured_by_another_user(runtime_dir):
    """The attack from the issue: while the editor is attached, another user points `baseUrl` at
    their own endpoint; the next completion would carry the API key and the code to it."""
    require_other_user()
    with MockModelServer() as legit, MockModelServer() as evil:
        legit.configure(text="print('legit')\n")
        async with tcp_server(runtime_dir) as server:
            editor = await server.editor(mock_options(legit, apiKey=CANARY_KEY))
            await editor.open(URI, SECRET_CODE)
            payload = (frame(notification("workspace/didChangeConfiguration", evil_configuration(evil)))
                       + frame(request("probe", "kestrel/getStatus")))
            attacker = await Attacker.start(server.port, payload, listen=20)
            await wait_for(attacker.answered, what="the server to react to the attacker")
            try:
                answer = await editor.request("textDocument/inlineCompletion", completion_params(), timeout=15)
            except (asyncio.TimeoutError, ConnectionError):
                answer = None
            await attacker.finish()
        assert nothing_reached(evil), f"the attacker's endpoint was called: {evil.stats()['request_log']}"
        assert attacker.received == b"", f"another user received: {attacker.received[:300]!r}"
        assert completion_text(answer) == "print('legit')", f"the editor's completion: {answer}"


@pytest.mark.parametrize("attack", ["initialize without token", "initialize with a wrong token",
                                    "configuration before initialize"])
async def test_no_token_no_session(runtime_dir, attack):
    """Before any editor: without the token nothing is read and nothing is answered, and the
    attempt leaves the server ready for the real editor, whose settings stand."""
    require_other_user()
    with MockModelServer() as legit, MockModelServer() as evil:
        legit.configure(text="print('legit')\n")
        async with tcp_server(runtime_dir) as server:
            options = {"kestrel": {"provider": "chat", "baseUrl": evil.base_url, "model": "mock-model"}}
            if attack == "initialize with a wrong token":
                options["kestrel"]["authToken"] = "x" * 43
            payload = frame(notification("workspace/didChangeConfiguration", evil_configuration(evil)))
            if attack != "configuration before initialize":
                payload = frame(request(1, "initialize", {"capabilities": {}, "initializationOptions": options})) \
                    + frame(notification("initialized", {})) + payload
            attacker = await Attacker.start(server.port, payload + frame(request(2, "kestrel/getStatus")), listen=20)
            await wait_for(attacker.answered, what="the server to react to the attacker")
            await attacker.finish()
            assert attacker.received == b"", f"an unauthenticated connection was answered: {attacker.received[:300]!r}"

            editor = await server.editor(mock_options(legit, apiKey=CANARY_KEY))
            await editor.open(URI, SECRET_CODE)
            answer = await editor.request("textDocument/inlineCompletion", completion_params(), timeout=15)
        assert nothing_reached(evil), f"the attacker's endpoint was called: {evil.stats()['request_log']}"
        assert completion_text(answer) == "print('legit')"


async def test_connections_that_never_authenticate_do_not_stop_the_server(runtime_dir):
    require_other_user()
    with MockModelServer() as legit:
        legit.configure(text="print('legit')\n")
        async with tcp_server(runtime_dir) as server:
            for payload in (b"", b"Content-Length: 10\r\n\r\n{", b"garbage\r\n\r\n",
                            frame(request(1, "initialize", {"capabilities": {}}))):
                attacker = await Attacker.start(server.port, payload, listen=0)  # send, then disconnect
                await attacker.exited()
                assert attacker.events and "refused" not in attacker.events[0], "the server had stopped"
            editor = await server.editor(mock_options(legit))
            await editor.open(URI, "import os\nx = \n")
            answer = await editor.request("textDocument/inlineCompletion", completion_params(), timeout=15)
            assert completion_text(answer) == "print('legit')"


async def test_the_token_file_is_private_to_the_user(runtime_dir):
    require_other_user()
    control = runtime_dir / "control.txt"  # proves the attacker reaches the directory at all
    control.write_text("readable")
    control.chmod(0o644)
    async with tcp_server(runtime_dir) as server:
        assert server.token_path.exists(), "no token file was written"
        # stderr is read by a task: under load the line can arrive after the file exists
        await wait_for(lambda: f"token file: {server.token_path}" in "".join(server.stderr), 10,
                       "the token path to be printed")
        file_info, dir_info = server.token_path.stat(), server.token_path.parent.stat()
        assert stat.S_IMODE(file_info.st_mode) == 0o600 and file_info.st_uid == os.geteuid()
        assert stat.S_IMODE(dir_info.st_mode) == 0o700 and dir_info.st_uid == os.geteuid()
        assert len(server.token) >= 32
        probe = ("import sys\nfor p in sys.argv[1:]:\n"
                 "    try:\n        open(p).read(); print('read', p)\n"
                 "    except OSError as e:\n        print('denied', p, type(e).__name__)\n")
        proc = await asyncio.create_subprocess_exec(
            *as_other_user(ATTACKER_PYTHON, "-c", probe, str(control), str(server.token_path)),
            stdout=asyncio.subprocess.PIPE, cwd="/")
        out = (await proc.communicate())[0].decode()
        assert f"read {control}" in out, out
        assert f"denied {server.token_path} PermissionError" in out, out
        token_path = server.token_path
    assert not token_path.exists(), "the token file outlived the server"


async def test_the_server_stops_with_its_editor_and_removes_the_token(runtime_dir):
    async with tcp_server(runtime_dir) as server:
        editor = await server.editor()
        assert server.token_path.exists()
        await editor.request("shutdown")
        await editor.send(notification("exit", None))
        await asyncio.wait_for(server.proc.wait(), 15)
        assert not server.token_path.exists()


async def test_a_host_other_machines_can_reach_needs_allow_remote(runtime_dir):
    port = free_port()
    env = clean_env(XDG_RUNTIME_DIR=str(runtime_dir))
    command = [sys.executable, "-m", "kestrel", "--tcp", f"0.0.0.0:{port}"]
    refused = await asyncio.create_subprocess_exec(*command, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        stderr = (await asyncio.wait_for(refused.communicate(), 20))[1].decode()
    finally:
        if refused.returncode is None:
            refused.kill()
            await refused.wait()
    assert refused.returncode != 0 and "--allow-remote" in stderr, stderr
    assert not listening(port)

    allowed = await asyncio.create_subprocess_exec(*command, "--allow-remote", env=env, stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    lines: list[str] = []
    try:
        while not any("token file:" in line for line in lines):
            line = await asyncio.wait_for(allowed.stderr.readline(), 30)
            assert line, f"the server exited: {''.join(lines)}"
            lines.append(line.decode())
        assert any("WARNING" in line and "other machines" in line for line in lines), "".join(lines)
        assert listening(port)
    finally:
        allowed.kill()
        await allowed.wait()
