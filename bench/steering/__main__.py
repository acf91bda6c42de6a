"""python -m bench.steering [--model-path X.gguf] [--kestrel-src DIR] [--limit N] [--out FILE]

Steering a running chat answer (issue 29), on a real model: each scripted request (bench/steering:
24 small coding requests) is asked through `kestrel-lsp`'s chat (a server process over stdio, the
model a local llama.cpp server through the `chat` provider) twice: once as is, and once with a steer
(`kestrel/steer`) sent while the answer's first code block streams (STEER_AFTER characters into it).
Scores: *obeyed* = the last code block written after the steer landed does what the steer asked (a
checker per request); *already* = the unsteered answer's code did so anyway (what the steer is
measured against); *kept* = everything streamed before the steer is still the start of the final
answer; steer-to-effect = steer sent → the first streamed character under the steer (p50/p95), and
the server's own commit time. Writes bench/out/steering[-<model>].json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types

from bench.lsp_client import KestrelClient, client_capabilities, server_command, stop_server, wait_ready
from bench.quality.lsp import server_env

from . import SCENARIOS, Scenario, last_code

BENCH = Path(__file__).resolve().parent.parent
SYSTEM = "You are Kestrel, a concise coding assistant inside VS Code. Answer in Markdown; put code in fenced blocks."
STEER_AFTER = 30  # characters of the first code block streamed before the steer is sent
MAX_ANSWER_TOKENS = 300
N_CTX = 4096


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))], 1)


class Turns:
    """What the server streamed for each turn: (time, method, params) in arrival order."""

    def __init__(self) -> None:
        self.heard: dict[str, list[tuple[float, str, dict]]] = {}

    def __call__(self, method: str, params: dict, at: float) -> None:
        if method in ("kestrel/chatDelta", "kestrel/chatSteered") and isinstance(params, dict):
            self.heard.setdefault(params.get("id", ""), []).append((at, method, params))

    def first_after(self, turn: str, at: int, since: float) -> float | None:
        """ms from `since` to the first streamed character past `at` (the first one under the steer:
        deltas the server held back before the steer may still arrive after its mark)."""
        written = 0
        for when, method, params in self.heard.get(turn, []):
            if method == "kestrel/chatDelta":
                if written >= at and params.get("delta"):
                    return round((when - since) * 1000, 1)
                written += len(params.get("delta", ""))
        return None

    def text(self, turn: str) -> str:
        return "".join(p.get("delta", "") for _, m, p in self.heard.get(turn, []) if m == "kestrel/chatDelta")


async def ask(client: KestrelClient, turns: Turns, turn: str, request: str, steer: str | None) -> dict:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request}]
    answer = asyncio.ensure_future(client.protocol.send_request_async("kestrel/chat", {"id": turn, "messages": messages}))
    rec: dict = {"steered": False}
    if steer is not None:
        while not answer.done():
            seen = turns.text(turn)
            fence = seen.find("```")
            if fence >= 0 and len(seen) - fence >= 3 + STEER_AFTER:
                rec["before"], rec["sentAt"] = seen, time.perf_counter()
                got = await client.protocol.send_request_async("kestrel/steer", {"id": turn, "text": steer})
                rec["steered"] = bool(getattr(got, "accepted", False))
                rec["steerError"] = getattr(got, "error", None)
                break
            await asyncio.sleep(0.005)
    result = await answer
    field = lambda name: getattr(result, name, None)  # noqa: E731 (pygls answers with attribute objects)
    rec.update(text=field("text") or "", error=field("error"))
    marks = field("steers") or []
    if rec["steered"] and marks:
        mark = marks[0]
        rec.update(at=mark.at, mode=mark.mode, commitMs=round(getattr(mark, "commitMs", getattr(mark, "commit_ms", 0.0)), 1))
        rec["effectMs"] = turns.first_after(turn, mark.at, rec["sentAt"])
        rec["kept"] = rec["text"].startswith(rec["before"])
        rec["underSteer"] = rec["text"][mark.at:]
    rec.pop("sentAt", None)
    return rec


async def run(args: argparse.Namespace) -> dict:
    from kestrel.local.models import resolve_model
    from kestrel.local.runtime import LocalModelServer

    model = resolve_model(args.model_path, allow_download=False)
    server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
    print(f"steering: starting llama.cpp with {model.path} ...", file=sys.stderr, flush=True)
    await server.start()
    env = server_env(server.base_url, model.name, None, args.kestrel_src)
    env.update(KESTREL_PROVIDER="chat")
    turns = Turns()
    client = KestrelClient("kestrel-steering")
    client.on_notification = turns
    records: list[dict] = []
    started = time.perf_counter()
    out_dir = Path(args.out).parent
    out_dir.mkdir(parents=True, exist_ok=True)
    log = open(out_dir / "steering-server.log", "ab")
    workspace = Path(tempfile.mkdtemp(prefix="kestrel-steering-"))
    try:
        await client.spawn(server_command(console_script=not args.kestrel_src), env, log, workspace)
        folder = types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)
        options = {"kestrel": {"chat": {"maxTokens": MAX_ANSWER_TOKENS}}}
        await client.initialize_async(types.InitializeParams(
            capabilities=client_capabilities(), process_id=os.getpid(), root_uri=folder.uri,
            workspace_folders=[folder], initialization_options=options))
        client.initialized(types.InitializedParams())
        await wait_ready(client, 120.0, connected=False, strict=False)
        for n, sc in enumerate(SCENARIOS[: args.limit]):
            records.append(await scenario(client, turns, n, sc))
            print(f"steering: {len(records)} requests, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    finally:
        await stop_server(client, timeout=10.0)
        log.close()
        await server.stop()
    return {"model": model.name, "records": records, "summary": summarize(records),
            "wallSeconds": round(time.perf_counter() - started, 1), "kestrel": args.kestrel_src or "installed",
            "config": {"steerAfterChars": STEER_AFTER, "maxAnswerTokens": MAX_ANSWER_TOKENS},
            "command": "python -m bench.steering " + " ".join(sys.argv[1:])}


async def scenario(client: KestrelClient, turns: Turns, n: int, sc: Scenario) -> dict:
    plain = await ask(client, turns, f"{n}-plain", sc.request, None)
    steered = await ask(client, turns, f"{n}-steered", sc.request, sc.steer)
    rec = {"name": sc.name, "request": sc.request, "steer": sc.steer, "plain": plain, "steered": steered,
           "already": sc.obeys(*last_code(plain["text"]))}
    if steered["steered"] and "underSteer" in steered:
        rec["obeyed"] = sc.obeys(*last_code(steered["underSteer"]))
    return rec


def summarize(records: list[dict]) -> dict:
    landed = [r for r in records if "obeyed" in r]
    effect = [r["steered"]["effectMs"] for r in landed if r["steered"].get("effectMs") is not None]
    commit = [r["steered"]["commitMs"] for r in landed]
    modes: dict[str, int] = {}
    for r in landed:
        modes[r["steered"]["mode"]] = modes.get(r["steered"]["mode"], 0) + 1
    return {"requests": len(records), "steered": len(landed), "missed": len(records) - len(landed),
            "obeyed": sum(r["obeyed"] for r in landed), "already": sum(r["already"] for r in landed),
            "obeyedNotAlready": sum(r["obeyed"] and not r["already"] for r in landed),
            "kept": sum(r["steered"]["kept"] for r in landed), "modes": modes,
            "effectMs": {"p50": pct(effect, 0.5), "p95": pct(effect, 0.95), "n": len(effect)},
            "commitMs": {"p50": pct(commit, 0.5), "p95": pct(commit, 0.95)}}


def rescored(result: dict) -> dict:
    """A recorded run scored again by the current checkers (the answers are what the model wrote)."""
    by_name = {sc.name: sc for sc in SCENARIOS}
    for rec in result["records"]:
        sc = by_name[rec["name"]]
        rec["already"] = sc.obeys(*last_code(rec["plain"]["text"]))
        if "obeyed" in rec:
            rec["obeyed"] = sc.obeys(*last_code(rec["steered"]["underSteer"]))
    result["summary"] = summarize(result["records"])
    return result


def markdown(result: dict) -> str:
    s = result["summary"]
    n = s["steered"] or 1
    rows = "\n".join(
        f"| {r['name']} | {r['steer']} | {'yes' if r.get('obeyed') else ('—' if 'obeyed' not in r else 'no')} | "
        f"{'yes' if r['already'] else 'no'} | {'yes' if r['steered'].get('kept') else '—'} | "
        f"{r['steered'].get('effectMs', '—')} |" for r in result["records"])
    return (f"`{result['command']}` on {result['model']} (Kestrel {result['kestrel']}), wall time {result['wallSeconds']} s.\n\n"
            f"| steered | obeyed | already so unsteered | obeyed, not already so | work kept | steer → first token under it, p50 / p95 ms | server commit p50 / p95 ms | modes |\n"
            f"|---|---|---|---|---|---|---|---|\n"
            f"| {s['steered']} of {s['requests']} | {s['obeyed']} ({100 * s['obeyed'] / n:.0f} %) | {s['already']} | "
            f"{s['obeyedNotAlready']} | {s['kept']} of {s['steered']} | {s['effectMs']['p50']} / {s['effectMs']['p95']} | "
            f"{s['commitMs']['p50']} / {s['commitMs']['p95']} | "
            + ", ".join(f"{k} {v}" for k, v in s["modes"].items()) + " |\n\n"
            "| request | steer | obeyed | already so unsteered | work kept | steer → effect ms |\n|---|---|---|---|---|---|\n"
            + rows + "\n")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.steering", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-path", default=None)
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--limit", type=int, default=None, help="the first N requests only")
    p.add_argument("--out", default=str(BENCH / "out" / "steering.json"))
    p.add_argument("--report-only", action="store_true", help="score the run in --out again with the current checkers")
    args = p.parse_args(argv)
    if args.kestrel_src:
        sys.path.insert(0, str(Path(args.kestrel_src).resolve()))
    out = Path(args.out)
    result = rescored(json.loads(out.read_text())) if args.report_only else asyncio.run(run(args))
    if not args.report_only:
        out.write_text(json.dumps(result, indent=1))
    print(markdown(result))


if __name__ == "__main__":
    main()
