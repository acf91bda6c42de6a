"""``response.steer`` on the Responses WebSocket: queue input for an active response.

An accepted steer interrupts the response (it ends ``incomplete`` with reason
``steered``) and the connection then streams a successor answering the input.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Optional

from .responses_events import ResponseRun
from .wire import JSON, new_id

if TYPE_CHECKING:  # pragma: no cover
    from .responses_ws import WsConnection


class Active:
    """A response being generated on a WebSocket connection."""

    __slots__ = ("rid", "stream_id", "run", "interrupt", "steers")

    def __init__(self, rid: str, stream_id: Optional[str], run: ResponseRun) -> None:
        self.rid = rid
        self.stream_id = stream_id
        self.run = run
        self.interrupt = asyncio.Event()
        self.steers: list[tuple[str, Any]] = []  # (steer id, input)


async def on_steer(conn: "WsConnection", msg: dict) -> None:
    st = conn.state
    target = msg.get("previous_response_id")
    inp = msg.get("input")
    act = conn.active.get(target) if isinstance(target, str) else None
    lane_sid = act.stream_id if act is not None else None

    async def fail(code: str, message: str, steer_id: Optional[str] = None) -> None:
        st.count("steers_failed")
        steer: dict[str, Any] = {"input": inp, "previous_response_id": target}
        if steer_id is not None:
            steer["id"] = steer_id
        ev: dict[str, Any] = {
            "type": "response.steer.failed",
            "sequence_number": act.run.next_seq() if act is not None else 0,
            "error": {"code": code, "message": message, "type": "invalid_request_error"},
            "steer": steer,
        }
        if lane_sid is not None:
            ev["stream_id"] = lane_sid
        await conn.send_text(JSON(ev))

    extra = set(msg) - {"type", "previous_response_id", "input"}
    if not isinstance(target, str) or not target:
        await fail("invalid_input", "previous_response_id is required.")
        return
    if inp is None or inp == "" or inp == [] or extra:
        why = f"unsupported fields: {sorted(extra)}" if extra else "input must be non-empty"
        await fail("invalid_input", f"Invalid steering event: {why}.")
        return
    if not st.get_config().get("steering", True):
        await fail("steering_not_supported", "Steering is not supported for this model.")
        return
    if act is None:
        if target in conn.cache:
            await fail("response_already_completed", f"Response '{target}' already completed.")
        else:
            await fail("response_not_found", f"Response '{target}' not found on this connection.")
        return
    max_pending = int(st.get_config().get("max_pending_steers") or 4)
    if len(act.steers) >= max_pending:
        await fail("too_many_pending_steers", "Too much steering input is pending for this response.")
        return
    steer_id = new_id("steer_")
    act.steers.append((steer_id, inp))
    st.count("steers_accepted")
    ev = {
        "type": "response.steer.accepted",
        "sequence_number": act.run.next_seq(),
        "steer": {"id": steer_id, "previous_response_id": target},
    }
    if act.stream_id is not None:
        ev["stream_id"] = act.stream_id
    await conn.send_text(JSON(ev))
    act.interrupt.set()
