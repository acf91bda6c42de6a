"""`keystroke_storm`: type 20 chars/s into a line like VS Code does: per keystroke a
didChange, `$/cancelRequest` for the previous pending inline request, then a new inline
request. The mock streams slowly enough (ttft 30 ms, 400 tok/s) that requests overlap.

A result is *stale* if its text does not continue the document as it is when the result
arrives: the request's line prefix + the inserted text must start with the line prefix the
user has now (typing-through is fine), and the user must still be on that line."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from .common import MOCK_TEXT, MockProcess, init_options, summary
from .lsp_client import kestrel_server, result_text
from .inline_added import HEADER

TYPED = [
    "total = compute(alpha, beta) + offset_value * 2",
    "result = compute(x)",  # the suggestion itself: typing-through
    "if total > limit:",
    "    scale = compute(total / limit)",
]
COMPLETION_ENDPOINTS = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "ws_create")


async def run_kind(label: str, kind: str, http2: str, seconds: float, cps: float, out: Path) -> dict[str, Any]:
    with MockProcess(out / "mock.log", text=MOCK_TEXT) as mock:
        async with kestrel_server(init_options(kind, mock.base_url, http2), out / "server.log") as client:
            lines: list[str] = [""]
            client.open(HEADER + "\n")
            base_line = HEADER.count("\n")
            mock.reset()
            mock.configure(ttft_ms=30, tps=400)
            c = {"keystrokes": 0, "requests": 0, "cancels_sent": 0, "results": 0, "empty_results": 0,
                 "cancelled_errors": 0, "other_errors": 0, "stale": 0, "stale_live": 0, "stale_cancelled": 0,
                 "late_results_for_cancelled": 0, "typed_through_results": 0}
            live_latency: list[float] = []
            # Keystrokes that type the next character of the suggestion on screen (the last answer shown
            # on this line continues with it): what typing-through must answer at once.
            through_latency: list[float] = []
            on_screen: list[Any] = [None]  # (line, prefix, text) of the last answer shown
            stale_examples: list[dict] = []
            cancelled: dict[Any, float] = {}  # msg id -> when $/cancelRequest was sent
            late_after_cancel_ms: list[float] = []
            pending: Any = None
            arrived: dict[Any, tuple[float, int, str]] = {}  # msg id -> (when, line, prefix) at arrival

            def on_response(msg_id: Any) -> None:
                arrived[msg_id] = (time.perf_counter(), base_line + len(lines) - 1, lines[-1])

            if hasattr(client, "on_response"):
                client.on_response = on_response

            def on_done(msg_id: Any, line_no: int, prefix: str, t_sent: float, through: bool,
                        fut: asyncio.Future) -> None:
                exc = fut.exception()
                if exc is not None:
                    if getattr(exc, "code", None) == -32800:  # RequestCancelled (either client's error type)
                        c["cancelled_errors"] += 1
                    else:
                        c["other_errors"] += 1
                    return
                t_arrived, now_line, now_prefix = arrived.pop(
                    msg_id, (time.perf_counter(), base_line + len(lines) - 1, lines[-1]))
                text = result_text(fut.result())
                was_cancelled = msg_id in cancelled and cancelled[msg_id] < t_arrived
                if was_cancelled:
                    c["late_results_for_cancelled"] += 1
                    late_after_cancel_ms.append((t_arrived - cancelled[msg_id]) * 1000)
                else:
                    live_latency.append((t_arrived - t_sent) * 1000)
                    if through:
                        through_latency.append((t_arrived - t_sent) * 1000)
                if not text:
                    c["empty_results"] += 1
                    return
                c["results"] += 1
                ok = line_no == now_line and (prefix + text).startswith(now_prefix)
                if ok and not was_cancelled:
                    on_screen[0] = (line_no, prefix, text)
                if ok and now_prefix != prefix:
                    c["typed_through_results"] += 1
                if not ok:
                    c["stale"] += 1
                    c["stale_cancelled" if was_cancelled else "stale_live"] += 1
                    if len(stale_examples) < 5:
                        stale_examples.append({"request_prefix": prefix, "text": text, "prefix_now": now_prefix,
                                               "same_line": line_no == now_line, "request_cancelled": was_cancelled})

            script = "\n".join(TYPED) + "\n"
            n_keys = int(seconds * cps)
            t0 = time.perf_counter()
            for k in range(n_keys):
                due = t0 + k / cps
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                ch = script[k % len(script)]
                if ch == "\n":
                    lines.append("")
                else:
                    lines[-1] += ch
                c["keystrokes"] += 1
                client.change(HEADER + "\n".join(lines) + "\n")
                if pending is not None and not pending[1].done() and pending[0] not in arrived:
                    client.cancel(pending[0])
                    cancelled[pending[0]] = time.perf_counter()
                    c["cancels_sent"] += 1
                line_no = base_line + len(lines) - 1
                prefix = lines[-1]
                shown = on_screen[0]
                through = (shown is not None and shown[0] == line_no and len(prefix) > len(shown[1])
                           and (shown[1] + shown[2]).startswith(prefix))
                msg_id, fut = client.send_inline(line_no, len(prefix))
                c["requests"] += 1
                fut.add_done_callback(
                    lambda f, a=(msg_id, line_no, prefix, time.perf_counter(), through): on_done(*a, f))
                pending = (msg_id, fut)
            if pending is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(pending[1]), 5)
                except Exception:
                    pass
            await asyncio.sleep(1.5)  # adoption grace (1 s) + stream tails
            stats = mock.stats()
    upstream = sum(v for k, v in (stats.get("requests") or {}).items() if k in COMPLETION_ENDPOINTS)
    res = {
        "kind": kind,
        "http2": http2,
        "seconds": seconds,
        "chars_per_s": cps,
        "client": c,
        "visible_latency_ms": summary(live_latency, 1),
        "typed_through_latency_ms": summary(through_latency, 2),
        "late_result_after_cancel_ms": summary(late_after_cancel_ms, 2),
        "stale_examples": stale_examples,
        "upstream_requests": upstream,
        "upstream_per_keystroke": round(upstream / max(c["keystrokes"], 1), 3),
        "streams_completed": stats.get("streams_completed"),
        "streams_cancelled": stats.get("streams_cancelled"),
        "tokens_sent": stats.get("tokens_sent"),
        "tokens_after_cancel": stats.get("tokens_after_cancel"),
        "connections_opened": stats.get("connections_opened"),
        "ws_connections": stats.get("ws_connections"),
        "active_streams_at_end": stats.get("active_streams"),
        "http_versions": stats.get("http_versions"),
    }
    print(f"  {label:14s} keys {c['keystrokes']}, upstream {upstream}, cancelled {res['streams_cancelled']}, "
          f"tokens_after_cancel {res['tokens_after_cancel']}, conns {res['connections_opened']}"
          f"/{res['ws_connections']}ws, stale {c['stale']} (live {c['stale_live']})", flush=True)
    return res


async def run(kinds: list[str], seconds: float, out: Path, cps: float = 20.0) -> dict[str, Any]:
    res = {}
    for kind in kinds:
        name, http2 = (kind[:-3], "off") if kind.endswith("-h1") else (kind, "on")
        res[kind] = await run_kind(kind, name, http2, seconds, cps, out)
    return res
