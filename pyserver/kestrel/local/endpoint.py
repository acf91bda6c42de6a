"""The embedded model's private endpoint: a loopback socket Kestrel binds itself, a per-start
secret, and the check that the server behind the socket is Kestrel's own child.

Kestrel binds 127.0.0.1:0 and hands the listening socket to the child (inherited), so the port is
never free; the child rejects requests without `Authorization: Bearer <secret>` (the secret goes on
its stdin and is registered with the redactor); before Kestrel sends anything, the server must
answer HMAC(secret, random nonce) on IDENTITY_PATH. Why: docs/design-notes.md#pyserverkestrellocalendpointpy
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import socket

IDENTITY_PATH = "/kestrel/identity"
CHALLENGE_HEADER = "X-Kestrel-Challenge"
_MAX_ANSWER = 16 * 1024


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def proof(secret: str, nonce: str) -> str:
    """What only a holder of `secret` can answer to `nonce`."""
    return hmac.new(secret.encode(), b"kestrel-local-identity:" + nonce.encode(), hashlib.sha256).hexdigest()


def listen_on_loopback() -> socket.socket:
    """A listening TCP socket on 127.0.0.1 and a free port, ready to hand to the child.

    No SO_REUSEADDR/SO_REUSEPORT: nobody else may share the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)  # connections wait in the backlog until the child serves them
    except OSError:
        sock.close()
        raise
    return sock


async def proves_identity(port: int, secret: str, timeout: float) -> bool:
    """Ask the server on 127.0.0.1:`port` to prove it knows `secret`; sends no secret and no code.

    The connection waits in the listen backlog until the child serves it, so this returns once
    the model has loaded (or `timeout` passes: asyncio.TimeoutError)."""
    nonce = secrets.token_hex(32)
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        writer.write(
            f"GET {IDENTITY_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{CHALLENGE_HEADER}: {nonce}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        await writer.drain()
        answer = await asyncio.wait_for(_read_to_end(reader), timeout)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0]
    return status.startswith(b"HTTP/1.1 200 ") and hmac.compare_digest(body.strip(), proof(secret, nonce).encode())


async def _read_to_end(reader: asyncio.StreamReader) -> bytes:
    answer = b""
    while len(answer) <= _MAX_ANSWER and (chunk := await reader.read(4096)):
        answer += chunk
    return answer
