"""Which API key may go to which endpoint.

A key is bound to what it was given for: a provider (a preset's name, or "custom" for a raw
transport such as `chat` or `fim`) and the origin of its endpoint (scheme, host and port). A key
goes only to the endpoint it is bound to, so settings that point `kestrel.baseUrl` at another host
or switch the provider (a hostile workspace, a mistaken change) never receive it: the provider then
runs without a key and the status says which key is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable
from urllib.parse import urlsplit

CUSTOM = "custom"  # what raw transports on one origin share: any of them may use a key entered for it
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


# A URL that parsers read differently is bound to nothing: Node's URL (the extension, which picks the
# stored key) reads `\` as `/`, Python's urlsplit (this server, httpx) does not, so
# `https://gateway:443\@evil/v1` is `gateway` to one and `evil` to the other. User info (`user@`),
# spaces and control characters are refused for the same reason.
_AMBIGUOUS = re.compile(r"[\\\s\x00-\x1f\x7f]")


def origin(url: str | None) -> str | None:
    """`scheme://host:port` with the default port spelled out, or None when `url` has no host or
    is one that URL parsers read differently (see `_AMBIGUOUS`)."""
    if url and (_AMBIGUOUS.search(url) or "@" in url.split("://", 1)[-1].split("/", 1)[0]):
        return None
    try:
        parts = urlsplit(url or "")
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number, an unbalanced IPv6 bracket
        return None
    scheme = parts.scheme.lower()
    if not host or scheme not in _DEFAULT_PORTS:
        return None
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or _DEFAULT_PORTS[scheme]}"


@dataclass(frozen=True)
class Endpoint:
    """What a key is bound to."""

    provider: str  # a preset's name, or CUSTOM
    origin: str

    def describe(self) -> str:
        return f"{self.provider} at {self.origin}"


def endpoint(preset: str | None, base_url: str | None) -> Endpoint | None:
    where = origin(base_url)
    return Endpoint(preset or CUSTOM, where) if where else None


@dataclass(frozen=True)
class BoundKey:
    secret: str = field(repr=False)
    endpoint: Endpoint
    source: str  # where it came from, for messages: "kestrel/setApiKey", "GROQ_API_KEY", ...


def pick(keys: Iterable[BoundKey | None], target: Endpoint | None) -> BoundKey | None:
    """The first key bound to `target`, or None."""
    if target is None:
        return None
    return next((k for k in keys if k is not None and k.endpoint == target), None)
