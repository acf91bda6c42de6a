"""Wire helpers shared by every protocol: compact JSON, ids, SSE framing, error bodies."""

from __future__ import annotations

import json
import uuid
from typing import Optional

JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
MALFORMED = "this is not json {"


def new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def sse_data(data: str) -> bytes:
    """One ``data:``-only SSE frame (Chat Completions / legacy Completions)."""
    return ("data: " + data + "\n\n").encode()


def sse_event(etype: str, data: str) -> bytes:
    """One named SSE event (Responses API)."""
    return ("event: " + etype + "\ndata: " + data + "\n\n").encode()


def error_body(status: int, message: str, code: Optional[str] = None, param: Optional[str] = None) -> dict:
    etype = {
        400: "invalid_request_error",
        404: "invalid_request_error",
        429: "rate_limit_error" if code != "insufficient_quota" else "insufficient_quota",
        500: "server_error",
        503: "server_error",
    }.get(status, "server_error")
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}
