"""LSP base-protocol framing (`Content-Length: N` headers, a blank line, N bytes of JSON) with limits.

Holds at most `max_body` bytes of one body plus a chunk; a larger body is read and thrown away in
chunks, keeping its first bytes so the caller can tell which request to answer. A `Content-Length:`
header line inside an announced body means the announced length was wrong: the body stops there and
the next message starts. Why: docs/design-notes.md#pyserverkestreltransportframingpy
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Awaitable, Callable, Union

MAX_HEADER_BYTES = 8 * 1024  # a real header is ~60 bytes (Content-Length, maybe Content-Type)
HEAD_BYTES = 4 * 1024  # what is kept of a discarded body: enough to find its `id` and `method`
CHUNK_BYTES = 64 * 1024

_HEADER = re.compile(rb"Content-Length: *\d{1,20}\r\n")
_OVERLAP = 40  # longer than any `_HEADER` match, so a header split across two reads is still found
_END_OF_HEADERS = re.compile(rb"\r?\n\r?\n")
_BLANK = b"\r\n"


@dataclass(frozen=True)
class Message:
    """A complete body (not yet known to be JSON)."""

    body: bytes


@dataclass(frozen=True)
class Oversized:
    """A body over the limit, already discarded. `size` is what the header announced."""

    size: int
    head: bytes


@dataclass(frozen=True)
class Malformed:
    """Bytes that are not a message header; the reader skips to the next header."""

    reason: str


Frame = Union[Message, Oversized, Malformed]


class FrameReader:
    """Reads frames from `read(n)`, an awaitable returning up to n bytes (b"" at end of stream)."""

    def __init__(self, read: Callable[[int], Awaitable[bytes]], max_body: int) -> None:
        self._read = read
        self.max_body = max_body  # may be raised after a TCP client authenticates
        self._buf = bytearray()
        self._eof = False
        self._resync = False

    async def next(self) -> Frame | None:
        """The next frame, or None at the end of the stream."""
        if self._resync:
            self._resync = False
            if not await self._skip_to_header():
                return None
        length = await self._header()
        if length is None or isinstance(length, Malformed):
            return length
        if length > self.max_body:
            return await self._discard(length)
        return Message(await self._body(length))

    # -- reading -------------------------------------------------------------------------
    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read(CHUNK_BYTES)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def _header(self) -> int | Malformed | None:
        while True:
            blank = 0
            while blank < len(self._buf) and self._buf[blank] in _BLANK:  # stray blank lines between messages
                blank += 1
            del self._buf[:blank]
            end = _END_OF_HEADERS.search(self._buf, 0, MAX_HEADER_BYTES + 4) if self._buf else None
            if end is not None:
                block = bytes(self._buf[: end.start()])
                del self._buf[: end.end()]
                return self._content_length(block)
            if len(self._buf) > MAX_HEADER_BYTES:
                del self._buf[:1]  # so that skipping to the next header cannot land on this one again
                return self._malformed(f"header longer than {MAX_HEADER_BYTES} bytes")
            if not await self._fill():
                return None  # end of stream (a partial header is dropped: no one is left to answer)

    def _content_length(self, block: bytes) -> int | Malformed:
        length = None
        for line in block.split(b"\n"):
            name, sep, value = line.rstrip(b"\r").partition(b":")
            if not sep:
                return self._malformed("header line without ':'")
            if name.strip().lower() == b"content-length":
                value = value.strip()
                if not value.isdigit():
                    return self._malformed("Content-Length is not a number")
                length = int(value) if len(value) <= 18 else 10**18  # int() refuses > 4300 digits
        if length is None:
            return self._malformed("no Content-Length header")
        return length

    def _malformed(self, reason: str) -> Malformed:
        self._resync = True  # the next call first skips to the next header
        return Malformed(reason)

    async def _skip_to_header(self) -> bool:
        """Drop bytes up to the next `Content-Length:` header, holding at most a chunk."""
        while True:
            found = _HEADER.search(self._buf)
            if found is not None:
                del self._buf[: found.start()]
                return True
            if len(self._buf) > _OVERLAP:
                del self._buf[: len(self._buf) - _OVERLAP]
            if not await self._fill():
                return False

    async def _body(self, length: int) -> bytes:
        """`length` bytes, fewer if a header inside shows the length was wrong or the stream ended."""
        scanned = 0
        while True:
            end = min(len(self._buf), length)
            found = _HEADER.search(self._buf, max(0, scanned - _OVERLAP), end)
            if found is not None:
                end = found.start()
            if found is not None or end == length or (end == len(self._buf) and not await self._fill()):
                body = bytes(self._buf[:end])
                del self._buf[:end]
                return body
            scanned = end

    async def _discard(self, length: int) -> Oversized:
        head = bytearray()
        left = length
        while True:
            end = min(len(self._buf), left)
            found = _HEADER.search(self._buf, 0, end)
            if found is not None:
                end = found.start()
            done = found is not None or end == left
            # Keep the last bytes unless done: a header may start there and end in the next read.
            drop = end if done else max(0, end - _OVERLAP)
            if len(head) < HEAD_BYTES:
                head += self._buf[: min(drop, HEAD_BYTES - len(head))]
            del self._buf[:drop]
            left -= drop
            if done or not await self._fill():
                if not done:  # end of stream: what is left belonged to this body
                    head += self._buf[: max(0, HEAD_BYTES - len(head))]
                    self._buf.clear()
                return Oversized(size=length, head=bytes(head))
