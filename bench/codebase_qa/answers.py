"""python -m bench.codebase_qa.answers [--per-project N] [--model-path X.gguf] [--kestrel-src DIR]

Codebase-Q&A answers (issue 28): SWE-QA questions asked through `kestrel-lsp`'s chat (a real server
process over stdio, the model a local llama.cpp server through the `chat` provider), as the VS Code
chat sends them with its file chip on: the system prompt, then the active file (the project's main
module: not an answer to most questions) and the question. Two systems on the same model, prompt and
questions, asked in an order that alternates question by question: **file only** (`codebase: false`,
the model given only the active file: the baseline) and **kestrel** (`codebase: true`: the workspace
sources within the embedded model's 1,200-token budget, numbered). Scores: *grounded* = the answer names
one of the question's reference files (as a path, a file name, or the number of a source that is one);
*cites a source*; citations (`[path:L-L]`, `[n]`) and path-like mentions that name no file of the project
or no source (*invented*); time to sources and to the first
token, p50/p95. Writes bench/out/codebase-answers[-<model>].json and a section of bench/CODEBASE.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types

from bench.lsp_client import KestrelClient, client_capabilities, server_command, stop_server, wait_ready
from bench.quality.lsp import server_env

from . import sources, tasks

BENCH = Path(__file__).resolve().parent.parent
SYSTEM = ("You are Kestrel, a concise coding assistant inside VS Code. Answer in Markdown; put code in fenced blocks "
          "with a language. When a block changes a file of the workspace, write its path after the language "
          "(```python src/models.py) and show whole functions.")  # extension/src/chat/transcript.ts
ACTIVE = {"requests": "src/requests/api.py", "flask": "src/flask/app.py", "pytest": "src/_pytest/main.py"}
ACTIVE_CHARS = 4000  # the chat's "open file" share; the whole file would not fit the 0.5B's window with sources
N_CTX = 8192
MAX_ANSWER_TOKENS = 400  # kestrel.chat.maxTokens for both systems: a bound on the eval's time
_PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)+[\w-]+\.py|[\w-]+\.py)\b")
_CITATION = re.compile(r"\[`?([\w./\\-]+\.[A-Za-z0-9]{1,8})`?(?::(\d+)(?:\s*[-–]\s*(\d+))?)?\]")
# `[2]` in prose: the answer's 2nd source (the eval's own reading, not the server's); code blocks left out
_NUMBER = re.compile(r"(?<![\w`])\[(\d{1,2})\](?!\()")
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)


def numbered(answer: str, sources: list[str]) -> tuple[list[str], int]:
    """The source paths the answer's `[n]` citations name, and how many numbers name none."""
    numbers = [int(m.group(1)) for m in _NUMBER.finditer(_CODE_BLOCK.sub("", answer))]
    return [sources[n - 1] for n in numbers if 1 <= n <= len(sources)], sum(not 1 <= n <= len(sources) for n in numbers)


def mentions(answer: str) -> list[str]:
    return list(dict.fromkeys(m.group(1) for m in _PATHLIKE.finditer(answer)))


def exists(root: Path, files: set[str], path: str) -> bool:
    path = path.removeprefix("./")
    return path in files or any(f.endswith("/" + path) for f in files)


def grounded(answer: str, refs: tuple[str, ...], sources: list[str] = ()) -> bool:
    named = mentions(answer) + [m.group(1) for m in _CITATION.finditer(answer)] + numbered(answer, list(sources))[0]
    return any(n == r or r.endswith("/" + n.removeprefix("./")) for n in named for r in refs)


async def ask(client: KestrelClient, notes: dict, turn: str, messages: list[dict], codebase: bool) -> dict:
    notes[turn] = None
    started = time.perf_counter()
    result = await client.protocol.send_request_async(
        "kestrel/chat", {"id": turn, "messages": messages, "codebase": codebase})
    sources_at = notes.get(turn)
    field = lambda name: getattr(result, name, None)  # noqa: E731 (pygls answers with attribute objects)
    return {"text": field("text") or "", "error": field("error"), "ttftMs": field("ttftMs"),
            "sourcesMs": round((sources_at - started) * 1000, 1) if sources_at else None,
            "sources": [s.path for s in field("sources") or []], "stopped": bool(field("stopped")),
            "seconds": round(time.perf_counter() - started, 2)}


async def ask_agent(client: KestrelClient, turn: str, messages: list[dict]) -> dict:
    """The same question to the read-only agent (`kestrel/agent`): its own system prompt, the user's
    message as the chat would send it; it reads the workspace through tools until it answers."""
    started = time.perf_counter()
    user = [m for m in messages if m["role"] != "system"]
    result = await client.protocol.send_request_async("kestrel/agent", {"id": turn, "messages": user, "maxSteps": 4})
    field = lambda name: getattr(result, name, None)  # noqa: E731
    steps = field("steps") or []
    calls = [c for st in steps for c in st.calls]
    read = [c.arguments.get("path", "") for c in calls if c.name == "read_file" and c.ok]
    return {"text": field("text") or "", "error": field("error"), "ttftMs": None, "sourcesMs": None,
            "sources": [str(p).removeprefix("./") for p in read], "stopped": bool(field("stopped")),
            "seconds": round(time.perf_counter() - started, 2), "steps": len(steps), "toolCalls": len(calls),
            "failedCalls": sum(not c.ok for c in calls), "stepLimit": bool(field("stepLimit"))}


async def run(args: argparse.Namespace) -> dict:
    from kestrel.local.models import resolve_model
    from kestrel.local.runtime import LocalModelServer

    model = resolve_model(args.model_path, allow_download=False)
    server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
    print(f"codebase answers: starting llama.cpp with {model.path} ...", file=sys.stderr, flush=True)
    await server.start()
    roots = {p.name: sources.workspace(p) for p in sources.load_manifest()}
    env = server_env(server.base_url, model.name, None, args.kestrel_src)
    env.update(KESTREL_PROVIDER="chat", KESTREL_CACHE_DIR=tempfile.mkdtemp(prefix="kestrel-answers-cache-"))
    notes: dict[str, float | None] = {}
    records: list[dict] = []
    started = time.perf_counter()
    log = open(BENCH / "out" / "codebase-answers-server.log", "ab")
    try:
        for name, root in roots.items():  # one server per project: the project is the workspace, as a user opens it
            client = await _session(args, env, log, name, root, notes)
            try:
                await _ask_project(client, notes, name, root, args, records, started)
            finally:
                await stop_server(client, timeout=10.0)
    finally:
        log.close()
        await server.stop()
    return {"model": model.name, "modelPath": str(model.path), "records": records,
            "wallSeconds": round(time.perf_counter() - started, 1), "kestrel": args.kestrel_src or "installed",
            "config": {"perProject": args.per_project, "seed": args.seed, "active": ACTIVE, "activeChars": ACTIVE_CHARS,
                       "maxAnswerTokens": MAX_ANSWER_TOKENS, "codebaseTokens": 1200},
            "command": "python -m bench.codebase_qa.answers " + " ".join(sys.argv[1:])}


async def _session(args: argparse.Namespace, env: dict, log, name: str, root: Path, notes: dict) -> KestrelClient:
    client = KestrelClient("kestrel-codebase-answers")

    def heard(method: str, params: dict, at: float) -> None:
        if method == "kestrel/chatSources":
            notes[params["id"]] = at

    client.on_notification = heard
    await client.spawn(server_command(console_script=not args.kestrel_src), env, log, Path(tempfile.mkdtemp()))
    folder = types.WorkspaceFolder(uri=root.as_uri(), name=name)
    options = {"kestrel": {"chat": {"codebaseTokens": 1200, "maxTokens": MAX_ANSWER_TOKENS}}}
    await client.initialize_async(types.InitializeParams(capabilities=client_capabilities(), process_id=os.getpid(),
                                                         root_uri=folder.uri, workspace_folders=[folder],
                                                         initialization_options=options))
    client.initialized(types.InitializedParams())
    await wait_ready(client, 120.0, connected=False, strict=False)
    return client


async def _ask_project(client: KestrelClient, notes: dict, name: str, root: Path, args: argparse.Namespace,
                       records: list[dict], started: float) -> None:
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    questions = [q for q in tasks.swe_qa(name, root) if ACTIVE[name] not in q.files]
    random.Random(args.seed).shuffle(questions)
    active = (root / ACTIVE[name]).read_text()[:ACTIVE_CHARS]
    for q in questions[:args.per_project]:
        content = f"File {ACTIVE[name]}:\n```python\n{active}\n```\n\n{q.question}"
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": content}]
        n = len(records)
        systems = args.systems.split(",")
        order = tuple(systems[n % len(systems):] + systems[:n % len(systems)])  # who goes first rotates
        rec = {"id": q.id, "question": q.question, "files": list(q.files), "order": list(order), "systems": {}}
        for system in order:
            if system == "agent":
                got = await ask_agent(client, f"{q.id}/{system}", messages)
            else:
                got = await ask(client, notes, f"{q.id}/{system}", messages, system == "kestrel")
            cited = [m.group(1) for m in _CITATION.finditer(got["text"])]
            by_number, past = numbered(got["text"], got["sources"])
            named = mentions(got["text"])
            got.update(grounded=grounded(got["text"], q.files, got["sources"]), citations=len(cited) + len(by_number) + past,
                       numbered=len(by_number) + past,
                       inventedCitations=sum(not exists(root, files, c) for c in cited) + past,
                       paths=len(named), inventedPaths=sum(not exists(root, files, p) for p in named),
                       citesSource=bool(by_number) or any(c.removeprefix("./") in got["sources"] for c in cited))
            rec["systems"][system] = got
        records.append(rec)
        print(f"codebase answers: {len(records)} questions, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.codebase_qa.answers", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--per-project", type=int, default=8)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--systems", default="file-only,kestrel",
                   help="comma-separated: file-only, kestrel (codebase chat), agent (kestrel/agent, read-only tools)")
    p.add_argument("--model-path", default=None)
    p.add_argument("--kestrel-src", default=None)
    p.add_argument("--out", default=None)
    p.add_argument("--md", default=str(BENCH / "CODEBASE.md"),
                   help="the markdown whose answers section for this model is written (none: only print)")
    p.add_argument("--report-only", action="store_true", help="re-render from --out")
    args = p.parse_args()
    stem = Path(args.model_path).stem if args.model_path else None
    out = Path(args.out) if args.out else BENCH / "out" / (f"codebase-answers-{stem}.json" if stem else "codebase-answers.json")
    if args.report_only:
        result = json.loads(out.read_text())
    else:
        result = asyncio.run(run(args))
        out.write_text(json.dumps(result, indent=1))
    from .report import answers_markdown, write_answers

    text = answers_markdown(result)
    if args.md != "none":
        write_answers(Path(args.md), result["model"], text)
    print(text)


if __name__ == "__main__":
    main()
