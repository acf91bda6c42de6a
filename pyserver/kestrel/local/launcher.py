"""The embedded model's child process: llama_cpp.server's app, served on the socket Kestrel bound.

    python -m kestrel.local.launcher --fd N --port P --model M.gguf --n_ctx C --n_threads T
    (the per-start secret arrives as one line on stdin)

Every request must carry the secret (checked in constant time, before llama_cpp.server's own
`api_key` check, which is set as well).
Why not `python -m llama_cpp.server`: docs/design-notes.md#pyserverkestrellocallauncherpy
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
    parser.add_argument("--model", required=True)
    parser.add_argument("--n_ctx", type=int, required=True)
    parser.add_argument("--n_threads", type=int, required=True)
    parser.add_argument("--no-key", action="store_true", help="serve requests without the key (benchmarks only)")
    return parser.parse_args(argv)


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

    app = create_app(
        server_settings=ServerSettings(host=host, port=port, api_key=None if args.no_key else secret),
        model_settings=[ModelSettings(model=args.model, n_ctx=args.n_ctx, n_threads=args.n_threads)],
    )
    # Access lines go to stdout (discarded); errors to stderr, which Kestrel keeps a tail of.
    uvicorn.Server(uvicorn.Config(guarded(app, secret, not args.no_key), host=host, port=port)).run(sockets=[sock])


if __name__ == "__main__":
    main()
