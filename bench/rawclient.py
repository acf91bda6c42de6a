"""A minimal JSON-RPC/LSP client over the server's stdio: hand-built dicts, one json.dumps
per message, Content-Length framing. Kept on purpose beside bench/lsp_client.py's KestrelClient
(the client for everything else): it is the latency benches' measuring instrument. It costs a
few µs per message, so timings measure the server (and the pipe), not a client library (pygls
structures every message into lsprotocol types first), and its hooks run as a message's bytes
are read: `on_response` before the awaiting code resumes (the keystroke storm timestamps
responses with it; a pygls future wakes its awaiter a loop iteration later), `on_notification`
before any parsing beyond json (relay, steer_ms, transports and edits timestamp chat and edit
deltas with it). The latency benches use it by default (`python -m bench.run --client pygls`
swaps in KestrelClient where a bench allows it); the ones above always do (`raw=True`).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from .constants import REPO, URI
from .lsp_client import result_text

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class RpcError(Exception):
    def __init__(self, error: dict) -> None:
        super().__init__(error.get("message"))
        self.code = error.get("code")
        self.error = error


class RawClient:
    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.status_events: list[dict] = []
        self.notifications: dict[str, int] = {}
        self.version = 1
        self._next_id = 0
        self._pending: dict[Any, asyncio.Future] = {}
        self._reader: asyncio.Task | None = None
        # called synchronously when a response arrives, before any other task runs
        # (future callbacks run a loop iteration later, after the caller may have moved on)
        self.on_response: Any = None
        # called synchronously as on_notification(method, params, perf_counter()) when a
        # notification arrives (relay / steer benchmarks timestamp chat deltas with it)
        self.on_notification: Any = None

    async def spawn(self, cmd: list[str], env: dict[str, str], stderr: Any) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env,
            cwd=str(REPO), limit=1 << 24,
        )
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = await out.readline()
                    if not line:
                        raise EOFError
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if length is None:
                    continue
                msg = json.loads(await out.readexactly(length))
                self._dispatch(msg)
        except (EOFError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(EOFError("server closed"))

    def _dispatch(self, msg: dict) -> None:
        if "method" in msg:
            method = msg["method"]
            if "id" in msg:  # a request from the server: answer with null
                self._write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                return
            self.notifications[method] = self.notifications.get(method, 0) + 1
            if self.on_notification is not None:
                self.on_notification(method, msg.get("params"), time.perf_counter())
            if method == "kestrel/status":
                self.status_events.append(msg.get("params") or {})
            return
        fut = self._pending.pop(msg.get("id"), None)
        if fut is None or fut.done():
            return
        if self.on_response is not None:
            self.on_response(msg.get("id"))
        if "error" in msg:
            fut.set_exception(RpcError(msg["error"]))
        else:
            fut.set_result(msg.get("result"))

    def _write(self, msg: dict) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        body = _dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    # --- JSON-RPC ---
    def send_request(self, method: str, params: Any = None, msg_id: Any = None) -> tuple[Any, asyncio.Future]:
        if msg_id is None:
            self._next_id += 1
            msg_id = self._next_id
        fut = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def request(self, method: str, params: Any = None) -> Any:
        _, fut = self.send_request(method, params)
        return await fut

    def notify(self, method: str, params: Any = None) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def cancel(self, msg_id: Any) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    # --- LSP session ---
    async def initialize(self, options: dict) -> dict:
        result = await self.request("initialize", {
            "processId": os.getpid(),
            "rootUri": None,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"inlineCompletion": {"dynamicRegistration": False},
                                 "synchronization": {"didSave": True},
                                 "codeAction": {"resolveSupport": {"properties": ["edit"]}}},
                "window": {"workDoneProgress": False},
            },
            "initializationOptions": options,
        })
        self.notify("initialized", {})
        return result

    async def shutdown(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)

    async def stop(self, timeout: float = 10) -> None:
        """Shut the server down in order (killed if it does not answer in `timeout` s), then close."""
        try:
            await asyncio.wait_for(self.shutdown(), timeout)
        except Exception:
            self.proc.kill()
        await self.close()

    async def get_status(self) -> dict:
        return await self.request("kestrel/getStatus", None)

    def open(self, text: str, uri: str = URI) -> None:
        self.version = 1
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                              "text": text}})

    def change(self, text: str, uri: str = URI) -> None:
        self.version += 1
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": self.version},
                                               "contentChanges": [{"text": text}]})

    def send_inline(self, line: int, character: int, uri: str = URI, msg_id: Any = None) -> tuple[Any, asyncio.Future]:
        return self.send_request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
            "context": {"triggerKind": 2},  # Automatic
        }, msg_id)

    async def inline(self, line: int, character: int, uri: str = URI) -> str | None:
        _, fut = self.send_inline(line, character, uri)
        return result_text(await fut)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except BaseException:
                pass
