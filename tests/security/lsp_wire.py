"""Raw LSP for the transport attack tests: what a well-behaved client library cannot send (invalid
JSON, lying `Content-Length` headers), `kestrel-lsp` over stdio or `--tcp` as a real process, and
code run as another local user (uid 65534 via `setpriv`).

Deliberately independent of `kestrel.transport`: the tests must not trust the framing they test.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import socket
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from conftest import clean_env, wait_for

OTHER_UID = 65534  # `nobody`: the other local user
ATTACKER_PYTHON = "/usr/bin/python3"  # the test's own interpreter lives under /root, which nobody can enter


def require_other_user() -> None:
    """Skip unless this test can run code as another local user."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run the attacker as another user (uid 65534) with setpriv")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    if not os.access(ATTACKER_PYTHON, os.X_OK):
        pytest.skip(f"{ATTACKER_PYTHON} is needed to run the attacker's script")


def as_other_user(*argv: str) -> list[str]:
    return ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", *argv]


def frame(message: Any) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: Any, method: str, params: Any = None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params if params is not None else {}}


def notification(method: str, params: Any) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params}


class Wire:
    """A JSON-RPC peer over a pair of asyncio streams (a pipe or a socket)."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self._reader, self._writer = reader, writer
        self._ids = itertools.count(1)
        self.responses: dict[Any, list[dict]] = {}  # id None: errors about unreadable messages
        self.notifications: list[dict] = []

    async def send_raw(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def send(self, message: Any) -> None:
        await self.send_raw(frame(message))

    async def read_message(self) -> dict | None:
        length = None
        while True:
            line = await self._reader.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    break
                continue
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        message = json.loads(await self._reader.readexactly(length))
        if "method" in message and "id" in message:  # a request from the server: accept it
            await self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)
        else:
            self.responses.setdefault(message.get("id"), []).append(message)
        return message

    async def response_to(self, msg_id: Any, timeout: float = 15.0) -> dict:
        """The response with this id (id None: an error the server could not attach to a request)."""
        async def until() -> dict:
            while not self.responses.get(msg_id):
                if await self.read_message() is None:
                    raise ConnectionError("the server closed the connection")
            return self.responses[msg_id].pop(0)

        return await asyncio.wait_for(until(), timeout)

    async def notification(self, method: str, where: Any = lambda params: True, timeout: float = 15.0) -> dict:
        """The first notification `method` whose params satisfy `where`."""
        def match() -> dict | None:
            return next((n for n in self.notifications if n["method"] == method and where(n.get("params"))), None)

        async def until() -> dict:
            while match() is None:
                if await self.read_message() is None:
                    raise ConnectionError("the server closed the connection")
            found = match()
            self.notifications.remove(found)
            return found

        return await asyncio.wait_for(until(), timeout)

    async def request(self, method: str, params: Any = None, timeout: float = 15.0) -> dict:
        msg_id = f"req-{next(self._ids)}"
        await self.send(request(msg_id, method, params))
        return await self.response_to(msg_id, timeout)

    async def initialize(self, init_options: dict | None = None) -> dict:
        params = {"processId": os.getpid(), "rootUri": None, "capabilities": {},
                  "initializationOptions": init_options or {}}
        result = await self.request("initialize", params)
        await self.send(notification("initialized", {}))
        return result

    async def open(self, uri: str, text: str) -> None:
        await self.send(notification("textDocument/didOpen", {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}))

    def close(self) -> None:
        self._writer.close()


# -- kestrel-lsp over stdio -----------------------------------------------------------------
@asynccontextmanager
async def stdio_server(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[tuple[Wire, Any]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kestrel", "--log-level", "INFO", *args, env=env or clean_env(),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        yield Wire(proc.stdout, proc.stdin), proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


# -- kestrel-lsp --tcp --------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port or 0.0.0.0:port, without connecting to it (an
    empty connection is itself one of the attacks)."""
    wanted = {f"0100007F:{port:04X}", f"00000000:{port:04X}"}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] in wanted and fields[3] == "0A":  # 0A: LISTEN
            return True
    return False


class TcpServer:
    def __init__(self, proc: Any, port: int, token_path: Path) -> None:
        self.proc, self.port, self.token_path = proc, port, token_path
        self.stderr: list[str] = []

    @property
    def token(self) -> str | None:
        return self.token_path.read_text() if self.token_path.exists() else None

    async def connect(self) -> Wire:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        return Wire(reader, writer)

    async def editor(self, settings: dict | None = None) -> Wire:
        """Connect and initialize as the user's editor: the token comes from the user's file."""
        wire = await self.connect()
        section = dict((settings or {}).get("kestrel", {}))
        if self.token is not None:
            section["authToken"] = self.token
        await wire.initialize({"kestrel": section})
        return wire


@asynccontextmanager
async def tcp_server(runtime_dir: Path, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[TcpServer]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kestrel", "--log-level", "INFO", "--tcp", f"127.0.0.1:{port}", *args,
        env=env or clean_env(XDG_RUNTIME_DIR=str(runtime_dir)), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    server = TcpServer(proc, port, runtime_dir / "kestrel" / f"tcp-{port}.token")

    async def drain() -> None:  # keep the pipe flowing, keep the lines for assertions
        async for line in proc.stderr:
            server.stderr.append(line.decode(errors="replace"))

    drainer = asyncio.create_task(drain())
    try:
        await wait_for(lambda: listening(port) or proc.returncode is not None, 30, "the server to listen")
        try:  # the token is written right after binding; a server without tokens never writes one
            await wait_for(lambda: server.token_path.exists(), 5, "the token file")
        except AssertionError:
            pass
        yield server
    finally:
        if proc.returncode is None:
            proc.terminate()  # a clean stop: the server removes its token file
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except asyncio.TimeoutError:
                proc.kill()
        await proc.wait()
        await drainer


# -- the attacker: another local user with a socket -----------------------------------------
_ATTACKER = r"""
import base64, json, socket, sys
port, payload, listen = int(sys.argv[1]), base64.b64decode(sys.argv[2]), float(sys.argv[3])
def say(**event):
    print(json.dumps(event), flush=True)
try:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
except OSError as exc:
    say(refused=str(exc)); sys.exit(0)
say(connected=True)
try:
    if payload:
        s.sendall(payload)
    if listen <= 0:
        s.close(); say(closed="by attacker"); sys.exit(0)
    s.settimeout(listen)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            say(closed="by server"); break
        say(data=base64.b64encode(chunk).decode())
except socket.timeout:
    say(timeout=True)
except OSError as exc:
    say(closed=str(exc))
"""


class Attacker:
    """A process of another local user that connects to the port, sends `payload`, then reports
    what it receives for up to `listen` seconds (0: disconnects at once)."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.events: list[dict] = []
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, port: int, payload: bytes = b"", listen: float = 0) -> "Attacker":
        proc = await asyncio.create_subprocess_exec(
            *as_other_user(ATTACKER_PYTHON, "-c", _ATTACKER, str(port), base64.b64encode(payload).decode(), str(listen)),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd="/")
        return cls(proc)

    async def _read(self) -> None:
        async for line in self.proc.stdout:
            self.events.append(json.loads(line))

    def answered(self) -> bool:
        """Something came back from the server: a reply, or the connection's end."""
        return any(set(e) & {"data", "closed", "refused", "timeout"} for e in self.events) or self._reader.done()

    @property
    def received(self) -> bytes:
        return b"".join(base64.b64decode(e["data"]) for e in self.events if "data" in e)

    async def exited(self, timeout: float = 20.0) -> None:
        """Wait until the attacker's script ends by itself (listen=0: once it has disconnected)."""
        await asyncio.wait_for(self.proc.wait(), timeout)
        await self._reader

    async def finish(self) -> None:
        """Stop listening now."""
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
        await self._reader
