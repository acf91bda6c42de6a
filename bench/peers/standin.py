"""A stand-in for the GitHub endpoints the Copilot language server talks to (HTTPS, HTTP/1.1).

Token exchange, user, experiment config, models, telemetry, and the legacy completions endpoint
`POST /v1/engines/<engine>/completions`, answered as SSE with the same scripted behaviour as
Kestrel's mock (`kestrel.testing.mock_model.script`: text, TTFT, tokens/s, `stop`, `max_tokens`),
paced like the mock's `pump` (first token at TTFT, token i at TTFT + i / tps).

`GET /telemetry` (the experiment config) answers `Parameters: {}` unless the config sets
`exp_parameters` (e.g. `{"copilotcompletionsdelay": 0}`). Every response carries
`x-github-request-id`. Unknown paths are logged (stderr and the stats).
Control endpoints for the bench: `GET /_standin/stats`, `POST /_standin/config`, `POST /_standin/reset`.

Run it on its own: `python -m bench.peers.standin --certfile C --keyfile K [--port 0] [--config JSON]`
prints `STANDIN_READY https://127.0.0.1:PORT/`.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import re
import ssl
import sys
import time
import uuid
from typing import Any, Optional

from kestrel.testing.mock_model.script import DEFAULT_CONFIG, haystack, make_plan, select_script

COMPLETIONS_PREFIX = "/v1/engines/"
# FIM prompt of the upstream model's family (config `fim`), built from Copilot's prompt and suffix.
FIM_TEMPLATES = {
    "qwen": ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
    "starcoder": ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
}
# The models' own end markers (special tokens), sent as llama.cpp `stop` next to the request's own.
MODEL_STOPS = ["<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>", "<|fim_prefix|>"]
# Copilot's isContinuationLine: a line at the block's indentation that still belongs to it.
_CONTINUATION = re.compile(r"^(\{|\}|\[|\]|\(|\)|(then|else|elseif|elif|catch|finally|fi|done|end|loop|until|where|when)\b)")


def fim_prompt(prompt: str, suffix: str, family: str = "qwen") -> str:
    """The whole Copilot prompt (its `# Path: ...` line included) as the model's FIM prompt."""
    begin, hole, end = FIM_TEMPLATES[family]
    return f"{begin}{prompt}{hole}{suffix}{end}"


def _indent(line: str) -> Optional[int]:
    """Indentation of a line with content (None for a blank line), as Copilot's indentationOfLine."""
    stripped = line.lstrip()
    return len(line) - len(stripped) if stripped else None


def current_indent(prompt: str, language: str = "python") -> int:
    """Indentation of the last non-blank line before the cursor (Copilot's contextIndentation
    `current`, computed from the prompt's end): in Python a closing docstring line counts as the
    line before its opening quotes (a function's docstring -> the `def` line)."""
    lines = prompt.split("\n")
    g = len(lines) - 1
    while g >= 0 and _indent(lines[g]) is None:
        g -= 1
    if g < 0:
        return 0
    found = _indent(lines[g])
    if language == "python":
        e = lines[g].strip()
        if e.endswith('"""') and not (e.startswith('"""') and e != '"""'):
            g -= 1
            while g >= 0 and not lines[g].strip().startswith('"""'):
                g -= 1
            if g >= 0:
                g -= 1
                found = None
                while found is None and g >= 0:
                    found = _indent(lines[g])
                    g -= 1
    return found or 0


def indentation_cut(text: str, current: int, next_indent: Optional[int]) -> Optional[int]:
    """`trim_by_indentation`: where the completion leaves its block, or None (go on). The rule of
    Copilot's own client-side indentation trimming (completionCutOrContinue, no preview text):
    after the first line, the first line with content whose indentation is below
    max(current, next_indent), or equal to it and not a continuation (`else`, `elif`, `)` ...),
    ends the completion just before that line's newline."""
    lines = text.split("\n")
    limit = max(current, next_indent or 0)
    pos = len(lines[0])
    for line in lines[1:]:
        ind = _indent(line)
        if ind is not None and (ind < limit or (ind == limit and not _CONTINUATION.match(line.lstrip().lower()))):
            return pos
        pos += 1 + len(line)
    return None
MAX_BODIES = 20  # completion request bodies kept for the report


def _now() -> int:
    return int(time.time())


class StandIn:
    def __init__(self, config: Optional[dict[str, Any]] = None, log: Any = None) -> None:
        self.cfg: dict[str, Any] = copy.deepcopy(DEFAULT_CONFIG)
        self.cfg.update(config or {})
        self.log = log if log is not None else sys.stderr
        self.base_url = ""
        self.server: Optional[asyncio.base_events.Server] = None
        self._upstream: Any = None  # an AsyncOpenAI client when `upstream` is configured
        self.reset()

    # --- bookkeeping ---------------------------------------------------------------------
    def reset(self) -> None:
        self.stats: dict[str, Any] = {
            "requests": {}, "unknown": [], "completion_bodies": [], "completion_requests": 0,
            "streams_completed": 0, "streams_cancelled": 0, "tokens_sent": 0, "connections_opened": 0,
        }

    def _count(self, key: str) -> None:
        self.stats["requests"][key] = self.stats["requests"].get(key, 0) + 1

    def _log(self, msg: str) -> None:
        try:
            print(f"[standin {time.strftime('%H:%M:%S')}] {msg}", file=self.log, flush=True)
        except Exception:
            pass

    # --- server --------------------------------------------------------------------------
    async def start(self, certfile: str, keyfile: str, host: str = "127.0.0.1", port: int = 0) -> str:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certfile, keyfile)
        ctx.set_alpn_protocols(["http/1.1"])
        self.server = await asyncio.start_server(self._conn, host, port, ssl=ctx)
        port = self.server.sockets[0].getsockname()[1]
        self.base_url = f"https://{host}:{port}/"
        return self.base_url

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            try:
                await asyncio.wait_for(self.server.wait_closed(), 2)
            except Exception:
                pass

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stats["connections_opened"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _version = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for ln in lines[1:]:
                    if ":" in ln:
                        k, v = ln.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = b""
                if headers.get("transfer-encoding", "").lower() == "chunked":
                    while True:
                        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
                        if size == 0:
                            await reader.readuntil(b"\r\n")
                            break
                        body += await reader.readexactly(size)
                        await reader.readexactly(2)
                elif headers.get("content-length"):
                    body = await reader.readexactly(int(headers["content-length"]))
                keep = await self._handle(method, target, headers, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError, ValueError, asyncio.LimitOverrunError):
            pass
        except Exception as exc:  # never let one connection kill the server
            self._log(f"connection error: {type(exc).__name__}: {exc}")
        finally:
            try:
                writer.close()
            except Exception:
                pass

    # --- responses -----------------------------------------------------------------------
    @staticmethod
    def _head(status: int, headers: dict[str, str]) -> bytes:
        reason = {200: "OK", 204: "No Content", 404: "Not Found", 400: "Bad Request"}.get(status, "OK")
        h = {"x-github-request-id": uuid.uuid4().hex, "date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()),
             **headers}
        return (f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n").encode()

    async def _send(self, writer: asyncio.StreamWriter, status: int, obj: Any) -> bool:
        data = b"" if obj is None else json.dumps(obj).encode()
        writer.write(self._head(status, {"content-type": "application/json", "content-length": str(len(data))}) + data)
        await writer.drain()
        return True

    def token_object(self) -> dict[str, Any]:
        base = self.base_url.rstrip("/")
        return {
            "token": "tid=standin;exp=4102444800;sku=free_limited_copilot;proxy-ep=127.0.0.1;8kp=1",
            "expires_at": 4102444800,  # 2100-01-01
            "refresh_in": 1500,
            "sku": "free_limited_copilot",
            "chat_enabled": True,
            "annotations_enabled": False,
            "endpoints": {"api": base, "proxy": base, "telemetry": base + "/telemetry",
                          "origin-tracker": base},
            "tracking_id": "standin",
            "individual": True,
            "limited_user_quotas": None,
            "limited_user_reset_date": None,
        }

    async def _handle(self, method: str, target: str, headers: dict[str, str], body: bytes,
                      writer: asyncio.StreamWriter) -> bool:
        path = target.split("?", 1)[0]
        if path.startswith(COMPLETIONS_PREFIX) and path.endswith("/completions") and method == "POST":
            self._count("completions")
            return await self._completions(path, headers, body, writer)
        key = f"{method} {path}"
        if method == "GET" and path == "/_standin/stats":
            return await self._send(writer, 200, self.stats)
        if method == "POST" and path == "/_standin/config":
            self.cfg.update(json.loads(body or b"{}"))
            return await self._send(writer, 200, self.cfg)
        if method == "POST" and path == "/_standin/reset":
            self.reset()
            return await self._send(writer, 200, {})
        self._count(key)
        if method == "GET" and path == "/copilot_internal/v2/token":
            return await self._send(writer, 200, self.token_object())
        if method == "GET" and path == "/copilot_internal/user":
            return await self._send(writer, 200, {
                "login": "standin", "access_type_sku": "free_limited_copilot", "copilot_plan": "individual",
                "chat_enabled": True, "analytics_tracking_id": "standin", "assigned_date": None,
                "can_signup_for_limited": False, "organization_list": [], "endpoints": self.token_object()["endpoints"],
                "quota_reset_date": "2100-01-01", "quota_snapshots": {}})
        if method == "GET" and path in ("/telemetry", "/telemetry/"):
            params = self.cfg.get("exp_parameters") or {}  # e.g. {"copilotcompletionsdelay": 0}
            return await self._send(writer, 200, {"Configs": [{"Id": "vscode", "Parameters": params}],
                                                  "AssignmentContext": ""})
        if method == "GET" and path == "/models":
            return await self._send(writer, 200, {"data": []})
        if method == "GET" and path == "/embeddings/models":
            return await self._send(writer, 200, {"models": []})
        if method == "POST" and path.startswith("/telemetry"):
            return await self._send(writer, 200, {"itemsReceived": 1, "itemsAccepted": 1, "errors": []})
        self.stats["unknown"].append(key)
        self._log(f"unknown path: {key}")
        return await self._send(writer, 404, {"message": "Not Found (stand-in)"})

    async def _completions(self, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter) -> bool:
        self.stats["completion_requests"] += 1
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return await self._send(writer, 400, {"message": "bad json"})
        if len(self.stats["completion_bodies"]) < MAX_BODIES:
            shown = {k: ("<redacted>" if k == "authorization" else v) for k, v in headers.items()}
            self.stats["completion_bodies"].append({"path": path, "headers": shown, "body": body})
        if self.cfg.get("upstream"):  # a real model (llama.cpp) behind the stand-in
            return await self._forward(path, body, writer)
        hay = haystack(body.get("prompt"), body.get("suffix"))
        plan = make_plan(select_script(self.cfg, hay), hay, fault=None, stop=body.get("stop"),
                         max_tokens=body.get("max_tokens"))
        ids = {"id": "cmpl-" + uuid.uuid4().hex[:12], "created": _now(), "model": path.split("/")[3]}
        if not body.get("stream", True):
            await asyncio.sleep(plan.ttft + (len(plan.tokens) / plan.tps if plan.tps > 0 else 0))
            return await self._send(writer, 200, {**ids, "object": "text_completion", "choices": [
                {"text": "".join(plan.tokens), "index": 0, "finish_reason": plan.finish_reason, "logprobs": None}]})
        writer.write(self._head(200, {"content-type": "text/event-stream", "cache-control": "no-cache",
                                      "transfer-encoding": "chunked"}))

        def chunk(payload: bytes) -> bytes:
            return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"

        def event(choice: dict[str, Any]) -> bytes:
            return chunk(b"data: " + json.dumps({**ids, "choices": [choice]}).encode() + b"\n\n")

        loop = asyncio.get_running_loop()
        start = loop.time() + plan.ttft
        try:
            await writer.drain()
            for i, tok in enumerate(plan.tokens):  # the mock's pacing (mock_model.streaming.pump)
                delay = (start + i / plan.tps if plan.tps > 0 else start) - loop.time()
                if delay > 0.0005:
                    await asyncio.sleep(delay)
                if writer.is_closing():
                    raise ConnectionResetError
                writer.write(event({"text": tok, "index": 0, "finish_reason": None, "logprobs": None}))
                await writer.drain()
                self.stats["tokens_sent"] += 1
            writer.write(event({"text": "", "index": 0, "finish_reason": plan.finish_reason, "logprobs": None})
                         + chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            await writer.drain()
        except (ConnectionError, ssl.SSLError):
            self.stats["streams_cancelled"] += 1
            return False
        self.stats["streams_completed"] += 1
        return True

    async def _forward(self, path: str, body: dict[str, Any], writer: asyncio.StreamWriter) -> bool:
        """Answer a completion from the upstream llama.cpp server (config `upstream`: its /v1 base URL,
        `upstream_model`, `fim`): the FIM prompt of Copilot's prompt and suffix, `max_tokens`, `stop`
        (plus the model's own end markers), temperature 0, streamed back as Copilot's SSE. With
        `extra.trim_by_indentation` the stream ends where the completion leaves its block
        (indentation_cut) and the upstream stream is closed there."""
        from openai import AsyncOpenAI

        if self._upstream is None:
            self._upstream = AsyncOpenAI(base_url=self.cfg["upstream"], api_key="local", max_retries=0, timeout=300)
        extra = body.get("extra") or {}
        prompt, suffix = body.get("prompt") or "", body.get("suffix") or ""
        stop = body.get("stop")
        stop = [stop] if isinstance(stop, str) else list(stop or [])
        trim = bool(extra.get("trim_by_indentation"))
        current = current_indent(prompt, extra.get("language") or "") if trim else 0
        ids = {"id": "cmpl-" + uuid.uuid4().hex[:12], "created": _now(), "model": path.split("/")[3]}
        writer.write(self._head(200, {"content-type": "text/event-stream", "cache-control": "no-cache",
                                      "transfer-encoding": "chunked"}))

        def chunk(payload: bytes) -> bytes:
            return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"

        def event(text: str, finish: Optional[str]) -> bytes:
            choice = {"text": text, "index": 0, "finish_reason": finish, "logprobs": None}
            return chunk(b"data: " + json.dumps({**ids, "choices": [choice]}).encode() + b"\n\n")

        text, sent, finish = "", 0, "stop"
        stream: Any = None
        try:
            await writer.drain()
            stream = await self._upstream.completions.create(
                model=self.cfg.get("upstream_model") or "model",
                prompt=fim_prompt(prompt, suffix, self.cfg.get("fim") or "qwen"),
                max_tokens=int(body.get("max_tokens") or 500), temperature=0, stream=True,
                stop=stop + [s for s in MODEL_STOPS if s not in stop])
            async for part in stream:
                if not part.choices:
                    continue
                choice = part.choices[0]
                text += choice.text or ""
                if choice.finish_reason:
                    finish = choice.finish_reason
                cut = indentation_cut(text, current, extra.get("next_indent")) if trim else None
                if cut is not None:
                    text, finish = text[:cut], "stop"
                    break
                # hold back the last (unfinished) line's newline: the next line may still end the block
                safe = text.rfind("\n") if trim else len(text)
                if safe > sent:
                    if writer.is_closing():
                        raise ConnectionResetError
                    writer.write(event(text[sent:safe], None))
                    await writer.drain()
                    self.stats["tokens_sent"] += 1
                    sent = safe
            if len(text) > sent:
                writer.write(event(text[sent:], None))
            writer.write(event("", finish) + chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            await writer.drain()
        except (ConnectionError, ssl.SSLError):
            self.stats["streams_cancelled"] += 1
            return False
        finally:
            if stream is not None:
                await stream.close()  # closes the HTTP stream: llama.cpp stops generating
        self.stats["streams_completed"] += 1
        return True


async def _main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--certfile", required=True)
    p.add_argument("--keyfile", required=True)
    p.add_argument("--config", default="{}", help="JSON, as the mock model's --config")
    a = p.parse_args(argv)
    s = StandIn(json.loads(a.config))
    url = await s.start(a.certfile, a.keyfile, port=a.port)
    print(f"STANDIN_READY {url}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(_main())
    except KeyboardInterrupt:
        pass
