"""python -m bench.tool_calls [--full] [--model-path X.gguf] [--base-url URL --model-name M]: tool calls on
BFCL's simple and multiple categories, the endpoint's native tool calling against Kestrel's parsing.

Each question goes to one model endpoint (the embedded runtime's llama.cpp server started here, or
an OpenAI-compatible endpoint) twice, greedy, through the official openai SDK:
- with the tools as the request's `tools` parameter (names made legal there: `math.factorial` goes
  as `math_factorial`). **native** scores only `message.tool_calls`: what a client that relies on the
  endpoint's tool calling gets. **kestrel** scores Kestrel's reading of the same answer
  (kestrel.agent.tool_calls.parse: the native calls, else calls printed in the text, repaired);
- with no `tools` parameter and the tools described in the model's own text format in the system
  prompt (Toolbox.text_protocol): **kestrel-text**, Kestrel's reading of that answer.
Scored by BFCL's own AST checker (bench/tool_calls/data.py). Writes bench/out/tool-calls[-<model>].json
and the section in bench/AGENT.md."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
SYSTEMS = ("native", "kestrel", "kestrel-text")
N_CTX = 4096


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.tool_calls", description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="every question of both categories (600)")
    p.add_argument("--sample", type=int, default=None, help="questions per category (default 100, seeded)")
    p.add_argument("--model-path", default=None)
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint (…/v1) instead of the local model")
    p.add_argument("--model-name", default=None)
    p.add_argument("--api-key-env", default=None, help="the environment variable holding the endpoint's key")
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--out", default=None)
    p.add_argument("--md", default=None, help="markdown output (default bench/AGENT.md; `none`: no markdown)")
    p.add_argument("--report-only", action="store_true")
    return p


async def _ask(client: Any, model: str, messages: list[dict], tools: list[dict] | None) -> tuple[Any, float, str]:
    t0 = time.perf_counter()
    try:
        kw: dict[str, Any] = {"tools": tools, "tool_choice": "auto"} if tools else {}
        r = await client.chat.completions.create(model=model, messages=messages, temperature=0, max_tokens=256, **kw)
        return r.choices[0].message, (time.perf_counter() - t0) * 1000, ""
    except Exception as exc:  # an endpoint that rejects `tools` is a result, not a crash
        return None, (time.perf_counter() - t0) * 1000, f"{type(exc).__name__}: {str(exc)[:200]}"


def _as_bfcl(calls: list[Any]) -> list[dict[str, Any]]:
    return [{c.name: c.arguments} for c in calls]


async def run(questions: list[Any], base_url: str, model: str, api_key: str, say: Any) -> list[dict[str, Any]]:
    from openai import AsyncOpenAI

    from kestrel.agent.tool_calls import Toolbox, parse

    from .data import checker

    check = checker()
    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=300)
    records = []
    t0 = time.perf_counter()
    for k, q in enumerate(questions):
        box = Toolbox(q.functions)
        native_msg, native_ms, native_err = await _ask(client, model, q.messages, box.wire())
        text_msg, text_ms, text_err = await _ask(
            client, model, [{"role": "system", "content": box.text_protocol()}, *q.messages], None)
        rec: dict[str, Any] = {"id": q.id, "category": q.category}
        for system, msg, ms, err in (("native", native_msg, native_ms, native_err),
                                     ("kestrel", native_msg, native_ms, native_err),
                                     ("kestrel-text", text_msg, text_ms, text_err)):
            content = getattr(msg, "content", None) if msg is not None else None
            native_calls = getattr(msg, "tool_calls", None) if msg is not None else None
            calls = parse(None if system == "native" else content, native_calls, box) if msg is not None else []
            ok, why = check(q, _as_bfcl(calls))
            rec[system] = {"valid": ok, "why": why, "paths": [c.path for c in calls], "latency_ms": round(ms, 1),
                           "calls": _as_bfcl(calls), "content": (content or "")[:400], "error": err}
        records.append(rec)
        if (k + 1) % 10 == 0:
            el = time.perf_counter() - t0
            say(f"tool calls: {k + 1}/{len(questions)} {el:.0f}s elapsed, ~{el / (k + 1) * (len(questions) - k - 1):.0f}s left")
    return records


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.kestrel_src:
        sys.path.insert(0, args.kestrel_src)
    from . import data, summary

    stem = Path(args.model_path).stem.split("-instruct")[0] if args.model_path else ""
    out = Path(args.out) if args.out else BENCH / "out" / (f"tool-calls-{stem}.json" if stem else "tool-calls.json")
    md = None if args.md == "none" else Path(args.md) if args.md else BENCH / "AGENT.md"
    if args.report_only:
        doc = json.loads(out.read_text())
    else:
        sample = None if args.full else (args.sample or data.SAMPLE)
        qs = data.questions(sample=sample)
        say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
        t0 = time.perf_counter()
        info, records = asyncio.run(_endpoint_and_run(args, qs, say))
        doc = {**info, "sample": sample, "categories": list(data.CATEGORIES), "wheel": data.WHEEL,
               "wall_seconds": round(time.perf_counter() - t0, 1),
               "kestrel_src": args.kestrel_src or "working tree", "records": records}
        doc["summary"] = summary.summarize(records)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1))
    print(summary.table(doc))
    if md is not None:
        summary.write_section(md, doc)
        print(f"wrote {out} and {md}")


async def _endpoint_and_run(args: argparse.Namespace, qs: list[Any], say: Any) -> tuple[dict[str, Any], list]:
    if args.base_url:
        key = os.environ.get(args.api_key_env, "") if args.api_key_env else "none"
        info = {"model": args.model_name or "model", "endpoint": args.base_url}
        return info, await run(qs, args.base_url, args.model_name or "model", key or "none", say)
    from kestrel.local.models import resolve_model
    from kestrel.local.runtime import LocalModelServer

    model = resolve_model(args.model_path, allow_download=False)
    server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
    say(f"tool calls: starting llama.cpp with {model.path} ...")
    await server.start()
    try:
        info = {"model": model.name, "endpoint": "local llama.cpp (the embedded runtime)", "n_ctx": N_CTX}
        return info, await run(qs, server.base_url, model.name, "local", say)
    finally:
        await server.stop()


if __name__ == "__main__":
    main()
