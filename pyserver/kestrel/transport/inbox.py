"""From frames to pygls: valid JSON-RPC messages go to the protocol, everything else gets an error.

Not JSON, or a broken header → `-32700 Parse error`, id null; JSON that is not a JSON-RPC 2.0
message → `-32600 Invalid Request`; over the size limit → a request is answered `-32600` with its
own id when the first bytes of the body name it, a notification is reported with
`window/showMessage`. Nothing else is lost: the server keeps its state and reads the next message.
Why: docs/design-notes.md#pyserverkestreltransportinboxpy
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .framing import FrameReader, Malformed, Message, Oversized

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
ANSWERED = object()  # a frame already answered with an error: nothing to deliver


async def pump(frames: FrameReader, protocol: Any, stop: threading.Event, first: dict | None = None) -> None:
    """Deliver frames until the stream ends (or the server is shut down). `first` is a message
    already read and decoded (the TCP handshake's `initialize`)."""
    if first is not None:
        _guarded(protocol, deliver_object, protocol, first)
    shutdown_id = None
    while not stop.is_set():
        frame = await frames.next()
        if frame is None:
            return
        data = _guarded(protocol, decode, protocol, frame, frames.max_body)
        if data is ANSWERED:
            continue
        method = data.get("method") if isinstance(data, dict) else None
        if method == "shutdown":
            shutdown_id = data.get("id")
        elif method == "exit":
            await _answered(protocol, shutdown_id)
        _guarded(protocol, deliver_object, protocol, data)
        # Let the handlers just started run a step before the next buffered message (pygls's reader
        # yielded on every line): a burst of messages cannot starve them.
        await asyncio.sleep(0)


def _guarded(protocol: Any, handle: Any, *args: Any) -> Any:
    try:
        return handle(*args)
    except Exception as exc:  # a handler's failure must not end the session (pygls does the same)
        log.exception("Unable to handle message")
        protocol._server._report_server_error(exc, JsonRpcException)
        return ANSWERED


async def _answered(protocol: Any, msg_id: Any, timeout: float = 5.0) -> None:
    """Wait (briefly) until request `msg_id` is answered: `exit` sent right behind `shutdown`
    closes the output, and shutdown's answer must be out before that."""
    future = protocol._request_futures.get(msg_id) if msg_id is not None else None
    if future is None or future.done():
        return
    try:
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), timeout)
    except Exception:  # timed out or failed: exit anyway
        pass
    await asyncio.sleep(0)  # the done-callback that writes the answer runs next


def decode(protocol: Any, frame: Message | Oversized | Malformed, limit: int) -> Any:
    """The JSON value in `frame`, or ANSWERED when the frame was answered with an error."""
    if isinstance(frame, Oversized):
        _refuse_oversized(protocol, frame, limit)
        return ANSWERED
    if isinstance(frame, Malformed):
        log.warning("malformed message header (%s): skipped to the next message", frame.reason)
        protocol.send_error(None, PARSE_ERROR, f"Parse error: malformed message header ({frame.reason})")
        return ANSWERED
    try:
        data = json.loads(frame.body)
    except ValueError as exc:  # includes bytes that are not UTF-8
        log.warning("a message is not valid JSON (%d bytes): %s", len(frame.body), exc)
        protocol.send_error(None, PARSE_ERROR, f"Parse error: the message is not valid JSON ({exc})")
        return ANSWERED
    return data


def deliver_object(protocol: Any, data: Any) -> None:
    if not _is_jsonrpc(data):
        msg_id = data.get("id") if isinstance(data, dict) else None
        protocol.send_error(_valid_id(msg_id), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
        return
    protocol.handle_message(protocol.structure_message(data))


def _is_jsonrpc(data: Any) -> bool:
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return False
    if "method" in data:
        return isinstance(data["method"], str)
    return "id" in data and ("result" in data or "error" in data)  # a response to a server request


def _valid_id(value: Any) -> int | str | None:
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _refuse_oversized(protocol: Any, frame: Oversized, limit: int) -> None:
    fields = peek_fields(frame.head, ("id", "method"))
    method = fields.get("method") if isinstance(fields.get("method"), str) else None
    msg_id = _valid_id(fields.get("id"))
    what = f"{method} message" if method else "message"
    text = (f"Kestrel ignored a {what} of {frame.size:,} bytes: the limit is {limit:,} bytes "
            f"(kestrel-lsp --max-message-mb)")
    log.warning("%s", text)
    if msg_id is not None or method is None:
        protocol.send_error(msg_id, INVALID_REQUEST, text)
    else:  # a notification has no one to answer: tell the user
        protocol.notify(types.WINDOW_SHOW_MESSAGE, types.ShowMessageParams(type=types.MessageType.Error, message=text))


def peek_fields(head: bytes, names: tuple[str, ...]) -> dict[str, Any]:
    """The top-level members `names` of a JSON object of which only the first bytes are known.

    Stops at the first member that does not fit in `head` (usually `params`): clients that write
    `id` and `method` first (vscode-jsonrpc does) get their request answered with its own id.
    """
    text = head.decode("utf-8", "ignore")
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}

    def skip_ws(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    i = skip_ws(0)
    if not text.startswith("{", i):
        return found
    i += 1
    try:
        while True:
            i = skip_ws(i)
            key, i = decoder.raw_decode(text, i)
            i = skip_ws(i)
            if not isinstance(key, str) or not text.startswith(":", i):
                return found
            value, i = decoder.raw_decode(text, skip_ws(i + 1))
            if key in names:
                found[key] = value
            i = skip_ws(i)
            if not text.startswith(",", i):
                return found
            i += 1
    except ValueError:  # a member cut off by the end of `head`
        return found
