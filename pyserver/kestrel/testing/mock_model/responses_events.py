"""Responses API objects and the streaming event sequence of one response.

Shared by the HTTP (SSE) and WebSocket transports.  Event methods are
generators of ``(event_type, json_text)``; each event's ``sequence_number`` is
taken when the generator reaches it, so a transport that sends each event
before asking for the next keeps the numbering in wire order.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator, Optional

from .script import Plan
from .wire import JSON, new_id

Events = Iterator[tuple[str, str]]


def usage_responses(plan: Optional[Plan], n: int) -> dict[str, Any]:
    p = plan.prompt_tokens if plan else 0
    return {
        "input_tokens": p,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": p + n,
    }


def response_obj(
    rid: str,
    *,
    model: str,
    created_at: int,
    status: str,
    output: list,
    usage: Optional[dict],
    previous_response_id: Optional[str],
    instructions: Any,
    incomplete_reason: Optional[str] = None,
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "instructions": instructions,
        "max_output_tokens": None,
        "metadata": {},
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": previous_response_id,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
    }


def message_item(msg_id: str, text: Optional[str], status: str) -> dict[str, Any]:
    content = [] if text is None else [text_part(text)]
    return {"id": msg_id, "type": "message", "role": "assistant", "status": status, "content": content}


def function_call_item(call: dict[str, Any], status: str) -> dict[str, Any]:
    return {"id": call["id"], "type": "function_call", "status": status, "call_id": call["call_id"],
            "name": call["name"], "arguments": call["arguments"] if status == "completed" else ""}


def function_calls(plan: Optional[Plan]) -> list[dict[str, Any]]:
    """The plan's native calls with their ids, for one response's `function_call` items."""
    return [{"id": new_id("fc_"), "call_id": new_id("call_"), "name": c["name"],
             "arguments": json.dumps(c.get("arguments") or {})} for c in (plan.tool_calls if plan else [])]


def text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


class ResponseRun:
    """The Responses streaming event sequence for one response."""

    def __init__(
        self,
        *,
        rid: str,
        model: str,
        previous_response_id: Optional[str],
        instructions: Any,
        stream_id: Optional[str],
    ) -> None:
        self.rid = rid
        self.model = model
        self.prev = previous_response_id
        self.instructions = instructions
        self.stream_id = stream_id
        self.created_at = int(time.time())
        self.msg_id = new_id("msg_")
        self.seq = 0
        sid_json = ',"stream_id":' + JSON(stream_id) if stream_id is not None else ""
        self._delta_pre = (
            '{"type":"response.output_text.delta","item_id":"' + self.msg_id + '",'
            '"output_index":0,"content_index":0,"delta":'
        )
        self._delta_mid = ',"logprobs":[],"sequence_number":'
        self._delta_post = sid_json + "}"

    def next_seq(self) -> int:
        s = self.seq
        self.seq += 1
        return s

    def event(self, event: dict[str, Any]) -> tuple[str, str]:
        event["sequence_number"] = self.next_seq()
        if self.stream_id is not None:
            event["stream_id"] = self.stream_id
        return event["type"], JSON(event)

    def response(self, status: str, output: list, usage: Optional[dict], reason: Optional[str] = None) -> dict:
        return response_obj(
            self.rid,
            model=self.model,
            created_at=self.created_at,
            status=status,
            output=output,
            usage=usage,
            previous_response_id=self.prev,
            instructions=self.instructions,
            incomplete_reason=reason,
        )

    def head(self, generate: bool = True) -> Events:
        yield self.event({"type": "response.created", "response": self.response("in_progress", [], None)})
        yield self.event({"type": "response.in_progress", "response": self.response("in_progress", [], None)})
        if generate:
            yield self.event(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": message_item(self.msg_id, None, "in_progress"),
                }
            )
            yield self.event(
                {
                    "type": "response.content_part.added",
                    "item_id": self.msg_id,
                    "output_index": 0,
                    "content_index": 0,
                    "part": text_part(""),
                }
            )

    def delta(self, tok: str) -> str:
        """JSON text of one ``response.output_text.delta`` event (the hot path, prebuilt)."""
        s = self.seq
        self.seq = s + 1
        return self._delta_pre + JSON(tok) + self._delta_mid + str(s) + self._delta_post

    def tail(self, text: str, plan: Optional[Plan], n: int, incomplete_reason: Optional[str]) -> Events:
        item_status = "incomplete" if incomplete_reason else "completed"
        yield self.event(
            {
                "type": "response.output_text.done",
                "item_id": self.msg_id,
                "output_index": 0,
                "content_index": 0,
                "text": text,
                "logprobs": [],
            }
        )
        yield self.event(
            {
                "type": "response.content_part.done",
                "item_id": self.msg_id,
                "output_index": 0,
                "content_index": 0,
                "part": text_part(text),
            }
        )
        item = message_item(self.msg_id, text, item_status)
        yield self.event({"type": "response.output_item.done", "output_index": 0, "item": item})
        output = [item]
        for k, call in enumerate(function_calls(plan) if not incomplete_reason else (), start=1):
            # A native call: announced, its arguments streamed in pieces, then done (as the API sends it).
            yield self.event({"type": "response.output_item.added", "output_index": k, "item": function_call_item(call, "in_progress")})
            args = call["arguments"]
            for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
                yield self.event({"type": "response.function_call_arguments.delta", "item_id": call["id"], "output_index": k, "delta": piece})
            yield self.event({"type": "response.function_call_arguments.done", "item_id": call["id"], "output_index": k, "arguments": args})
            done = function_call_item(call, "completed")
            yield self.event({"type": "response.output_item.done", "output_index": k, "item": done})
            output.append(done)
        yield from self.finish(output, plan, n, incomplete_reason)

    def finish(self, output: list, plan: Optional[Plan], n: int, incomplete_reason: Optional[str]) -> Events:
        if incomplete_reason:
            resp = self.response("incomplete", output, usage_responses(plan, n), incomplete_reason)
            yield self.event({"type": "response.incomplete", "response": resp})
        else:
            resp = self.response("completed", output, usage_responses(plan, n))
            yield self.event({"type": "response.completed", "response": resp})
