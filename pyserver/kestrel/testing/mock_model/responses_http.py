"""``POST /v1/responses``: the Responses API over HTTP, SSE events or one JSON body."""

from __future__ import annotations

from typing import Any

from .responses_events import ResponseRun, function_call_item, function_calls, message_item, usage_responses
from .script import Plan, haystack
from .streaming import HttpGeneration
from .wire import MALFORMED, new_id, sse_event

_DELTA = "response.output_text.delta"


class ResponsesHttp(HttpGeneration):
    malformed = sse_event(_DELTA, MALFORMED)

    def __init__(self, body: dict, model: str, plan: Plan) -> None:
        super().__init__(body, model, plan)
        self.incomplete = "max_output_tokens" if plan.finish_reason == "length" else None
        self.run = ResponseRun(
            rid=new_id("resp_"),
            model=model,
            previous_response_id=body.get("previous_response_id"),
            instructions=body.get("instructions"),
            stream_id=None,
        )

    @staticmethod
    def plan_inputs(body: dict) -> tuple[str, Any, Any]:
        return haystack(body.get("instructions"), body.get("input")), None, body.get("max_output_tokens")

    def json_body(self, tokens: list[str]) -> dict:
        incomplete = self.incomplete
        item = message_item(self.run.msg_id, "".join(tokens), "incomplete" if incomplete else "completed")
        calls = [] if incomplete else [function_call_item(c, "completed") for c in function_calls(self.plan)]
        return self.run.response(
            "incomplete" if incomplete else "completed",
            [item, *calls],
            usage_responses(self.plan, len(tokens)),
            incomplete,
        )

    def open_stream(self) -> list[bytes]:
        return [sse_event(etype, data) for etype, data in self.run.head()]

    def token(self, tok: str) -> bytes:
        return sse_event(_DELTA, self.run.delta(tok))

    def tail(self, sent: list[str]) -> list[bytes]:
        events = self.run.tail("".join(sent), self.plan, len(sent), self.incomplete)
        return [sse_event(etype, data) for etype, data in events]
