"""The embedded model's child process: llama_cpp.server's app, served on the socket Kestrel bound.

    python -m kestrel.local.launcher --fd N --port P
    stdin: the per-start secret (a line), then {"model", "n_ctx", "n_threads", "require_key", "speculative"}
    (a JSON line)

It imports between the two lines: Kestrel spawns it before the model is named (`runtime.prestart`).
Every request must carry the secret. Why: docs/design-notes.md#pyserverkestrellocallauncherpy
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import socket
import sys
from typing import Any, Awaitable, Callable

from .endpoint import CHALLENGE_HEADER, IDENTITY_PATH, proof

Asgi = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


def guarded(app: Asgi, secret: str, require_key: bool = True) -> Asgi:
    """`app` behind the secret: the identity challenge is answered, everything else needs the key
    (unless `require_key` is off: benchmarks only)."""
    expected = f"Bearer {secret}".encode()
    challenge = CHALLENGE_HEADER.lower().encode()

    async def reply(send: Callable[[dict], Awaitable[None]], status: int, body: bytes, kind: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def asgi(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return await app(scope, receive, send)
        if scope["type"] != "http":
            return None  # websockets: closed unanswered
        headers = dict(scope.get("headers") or [])
        if scope.get("path") == IDENTITY_PATH:
            nonce = headers.get(challenge, b"").decode("latin-1")
            return await reply(send, 200, proof(secret, nonce).encode(), b"text/plain")
        if require_key and not hmac.compare_digest(headers.get(b"authorization", b""), expected):
            body = json.dumps({"error": {"message": "Invalid API key", "type": "invalid_request_error"}}).encode()
            return await reply(send, 401, body, b"application/json")
        return await app(scope, receive, send)

    return asgi


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kestrel.local.launcher")
    parser.add_argument("--fd", type=int, required=True, help="the listening socket Kestrel bound")
    parser.add_argument("--port", type=int, required=True, help="the port that socket is bound to (checked)")
    return parser.parse_args(argv)


def model_line(line: str) -> tuple[str, int, int, bool, bool]:
    """(model path, n_ctx, n_threads, require_key, speculative) from the JSON line Kestrel sends; SystemExit
    if malformed."""
    try:
        spec = json.loads(line)
        model, n_ctx, n_threads = spec["model"], spec["n_ctx"], spec["n_threads"]
        require_key, speculative = spec.get("require_key", True), spec.get("speculative", False)
    except (ValueError, KeyError, TypeError, AttributeError):
        sys.exit("kestrel.local.launcher: the model line on stdin is not the JSON expected")
    if not (isinstance(model, str) and model and type(n_ctx) is int and n_ctx > 0 and type(n_threads) is int
            and n_threads > 0 and isinstance(require_key, bool) and isinstance(speculative, bool)):
        sys.exit("kestrel.local.launcher: the model line on stdin is not the JSON expected")
    return model, n_ctx, n_threads, require_key, speculative


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    secret = sys.stdin.readline().strip()
    if len(secret) < 32:
        sys.exit("kestrel.local.launcher: no secret on stdin")
    sock = socket.socket(fileno=args.fd)  # family and type come from the descriptor
    host, port = sock.getsockname()[:2]
    if host != "127.0.0.1" or port != args.port:
        sys.exit(f"kestrel.local.launcher: the inherited socket is bound to {host}:{port}, not 127.0.0.1:{args.port}")

    os.environ.pop("CONFIG_FILE", None)  # create_app would read its settings from it (Kestrel passes none)
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    from . import last_logits, lookup_draft

    last_logits.install()  # no logits for prompt tokens nobody reads: a quarter off every prompt pass
    lookup_draft.install()  # a speculative draft, when asked for, is Kestrel's prompt lookup

    line = sys.stdin.readline()
    if not line.strip():
        sys.exit(0)  # Kestrel did not need the model after all (a remote provider was configured)
    model, n_ctx, n_threads, require_key, speculative = model_line(line)
    draft = {"draft_model": "prompt-lookup", "draft_model_num_pred_tokens": lookup_draft.MAX_DRAFT} if speculative else {}
    app = create_app(
        server_settings=ServerSettings(host=host, port=port, api_key=secret if require_key else None),
        model_settings=[ModelSettings(model=model, n_ctx=n_ctx, n_threads=n_threads, **draft)],
    )
    # Access lines go to stdout (discarded); errors to stderr, which Kestrel keeps a tail of.
    uvicorn.Server(uvicorn.Config(guarded(app, secret, require_key), host=host, port=port)).run(sockets=[sock])


if __name__ == "__main__":
    main()
