"""``WS /v1/responses``: Responses WebSocket mode.

Lanes via ``stream_id`` (FIFO within a lane, lanes run concurrently),
``generate: false`` prewarm, a per-connection ``previous_response_id`` cache and
native ``response.steer`` (see :mod:`.steering`).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Optional

from .faults import HTTP_STATUS_FAULTS, fault_error, refuse_websocket
from .responses_events import Events, ResponseRun
from .script import Plan, haystack, input_text
from .steering import Active, on_steer
from .streaming import Stop, pump, wait_first
from .wire import JSON, MALFORMED, new_id

if TYPE_CHECKING:  # pragma: no cover
    from .app import MockModelApp


async def serve_websocket(app: "MockModelApp", scope: dict, receive: Callable, send: Callable) -> None:
    """Handshake (or the "refuse_ws" fault), then one :class:`WsConnection` until disconnect."""
    st = app.state
    fault, cfg = st.take_fault("ws_handshake")
    if fault == "refuse_ws":
        await refuse_websocket(scope, send, cfg)
        return
    await send({"type": "websocket.accept"})
    st.count("ws_connections")
    conn = WsConnection(app, send)
    app.ws_conns.add(conn)
    if app.closing.is_set():
        await conn.close(1001)
    try:
        while True:
            msg = await receive()
            mt = msg["type"]
            if mt == "websocket.disconnect":
                break
            if mt != "websocket.receive":
                continue
            data = msg.get("text")
            if data is None:
                data = msg.get("bytes") or b""
            await conn.on_message(data)
            if conn.closed:
                break
    finally:
        app.ws_conns.discard(conn)
        await conn.shutdown()


class WsConnection:
    """Per-WebSocket-connection state: lanes, response cache, active responses."""

    def __init__(self, app: "MockModelApp", send: Callable) -> None:
        self.app = app
        self.state = app.state
        self._send = send
        self.send_lock = asyncio.Lock()
        self.cache: set[str] = set()
        self.lanes: dict[Optional[str], deque] = {}
        self.lane_tasks: dict[Optional[str], asyncio.Task] = {}
        self.active: dict[str, Active] = {}
        self.closed = False
        self.closed_event = asyncio.Event()

    # -- outbound -------------------------------------------------------------
    async def send_text(self, text: str) -> None:
        if self.closed:
            raise Stop()
        try:
            async with self.send_lock:
                await self._send({"type": "websocket.send", "text": text})
        except Stop:
            raise
        except Exception as e:
            self.mark_closed()
            raise Stop() from e

    async def send_events(self, events: Events) -> None:
        for _etype, data in events:
            await self.send_text(data)

    def mark_closed(self) -> None:
        if not self.closed:
            self.closed = True
            self.closed_event.set()
            for act in self.active.values():
                act.interrupt.set()

    async def close(self, code: int) -> None:
        if self.closed:
            return
        try:
            async with self.send_lock:
                await self._send({"type": "websocket.close", "code": code})
        except Exception:
            pass
        self.mark_closed()

    async def shutdown(self) -> None:
        self.mark_closed()
        tasks = [t for t in self.lane_tasks.values() if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def send_error(
        self,
        code: str,
        message: str,
        *,
        status: int = 400,
        etype: str = "invalid_request_error",
        param: Optional[str] = None,
        stream_id: Optional[str] = None,
        headers: Optional[dict] = None,
    ) -> None:
        ev: dict[str, Any] = {
            "type": "error",
            "status": status,
            "error": {"type": etype, "code": code, "message": message, "param": param},
        }
        if headers:
            ev["error"]["headers"] = headers
        if stream_id is not None:
            ev["stream_id"] = stream_id
        await self.send_text(JSON(ev))

    # -- inbound ------------------------------------------------------------
    async def on_message(self, data: Any) -> None:
        try:
            msg = json.loads(data)
            if not isinstance(msg, dict):
                raise ValueError("event must be a JSON object")
        except ValueError as e:
            await self.send_error("invalid_json", f"Invalid JSON: {e}")
            return
        mtype = msg.get("type")
        try:
            if mtype == "response.create":
                self.state.record("ws_create", msg)
                await self.on_create(msg)
            elif mtype == "response.steer":
                self.state.record("ws_steer", msg)
                await on_steer(self, msg)
            else:
                self.state.record("ws_other", msg)
                await self.send_error("unknown_event_type", f"Unsupported event type: {mtype!r}", param="type")
        except Stop:
            pass

    async def on_create(self, msg: dict) -> None:
        sid = msg.get("stream_id")
        if sid is not None and not isinstance(sid, str):
            await self.send_error("invalid_value", "stream_id must be a string", param="stream_id")
            return
        lane = self.lanes.get(sid)
        if lane is not None:
            lane.append(msg)  # FIFO within a busy lane
            return
        max_lanes = int(self.state.get_config().get("max_lanes") or 16)
        if len(self.lanes) >= max_lanes:
            await self.send_error(
                "too_many_active_streams",
                f"Too many concurrently active streams on this connection (limit {max_lanes}).",
                param="stream_id",
                stream_id=sid,
            )
            return
        lane = deque([msg])
        self.lanes[sid] = lane
        self.lane_tasks[sid] = asyncio.ensure_future(self._lane_worker(sid, lane))

    async def _lane_worker(self, sid: Optional[str], lane: deque) -> None:
        try:
            while lane and not self.closed:
                msg = lane.popleft()
                await self._process_create(msg, sid)
        except Stop:
            pass
        finally:
            if self.lanes.get(sid) is lane:
                del self.lanes[sid]
                self.lane_tasks.pop(sid, None)

    async def _process_create(self, msg: dict, sid: Optional[str]) -> None:
        st = self.state
        prev = msg.get("previous_response_id")
        if prev is not None and prev not in self.cache:
            await self.send_error(
                "previous_response_not_found",
                f"Previous response with id '{prev}' not found.",
                param="previous_response_id",
                stream_id=sid,
            )
            return
        fault, cfg = st.take_fault("ws_create")
        if fault in HTTP_STATUS_FAULTS:
            status, err, headers = fault_error(fault, cfg.get("retry_after", 1))
            e = err["error"]
            await self.send_error(
                e["code"],
                e["message"],
                status=status,
                etype=e["type"],
                stream_id=sid,
                headers={k.decode(): v.decode() for k, v in headers} or None,
            )
            return
        model = str(msg.get("model") or cfg.get("model") or "mock-model")
        instructions = msg.get("instructions")
        rid = new_id("resp_")
        if msg.get("generate") is False:
            run = ResponseRun(rid=rid, model=model, previous_response_id=prev, instructions=instructions, stream_id=sid)
            self.cache.add(rid)
            await self.send_events(run.head(generate=False))
            await self.send_events(run.finish([], None, 0, None))
            return
        mot = msg.get("max_output_tokens")
        plan = st.plan(
            haystack(instructions, msg.get("input")),
            msg,
            fault=fault,
            max_tokens=mot if isinstance(mot, int) else None,
        )
        while True:
            steers = await self._generate(rid, plan, model, prev, instructions, sid)
            if not steers:
                return
            # Successor: continues from the steered response with the queued input.
            steer_text = "\n".join(input_text(inp) for _, inp in steers)
            prev, rid = rid, new_id("resp_")
            plan = st.steer_plan(steer_text, msg)

    async def _generate(
        self, rid: str, plan: Plan, model: str, prev: Optional[str], instructions: Any, sid: Optional[str]
    ) -> list[tuple[str, Any]]:
        """Stream one response. Returns steering input accepted for it (successor needed)."""
        st = self.state
        run = ResponseRun(rid=rid, model=model, previous_response_id=prev, instructions=instructions, stream_id=sid)
        act = Active(rid, sid, run)
        self.app.interrupts.add(act.interrupt)
        self.active[rid] = act
        self.cache.add(rid)
        st.stream_started()
        outcome = "cancelled"
        sent: list[str] = []
        closing = self.app.closing

        async def write_tok(tok: str) -> None:
            await self.send_text(run.delta(tok))
            sent.append(tok)

        def should_stop() -> Optional[str]:
            if self.closed:
                return "closed"
            if closing.is_set():
                return "closing"
            if act.steers:
                return "steered"
            return None

        async def on_fault(kind: str) -> Optional[str]:
            if kind == "malformed":
                await self.send_text(MALFORMED)
                return None
            if kind == "drop":
                await self.close(1011)
                return "closed"
            if kind == "stall":
                await wait_first(closing.wait(), self.closed_event.wait())
                return "closed"
            return None

        try:
            await self.send_events(run.head())
            n, reason = await pump(st, plan, write_tok, act.interrupt, should_stop, on_fault)
            if reason in ("closed", "closing"):
                return []
            incomplete = None
            if reason == "steered":
                incomplete = "steered"
            elif plan.finish_reason == "length":
                incomplete = "max_output_tokens"
            await self.send_events(run.tail("".join(sent), plan, n, incomplete))
            outcome = "completed"
        finally:
            self.app.interrupts.discard(act.interrupt)
            self.active.pop(rid, None)
            st.stream_ended(outcome == "completed")
        return act.steers
