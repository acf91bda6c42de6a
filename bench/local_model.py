"""`local_model`: the embedded default on this CPU.

1. The llama.cpp server alone, through the openai SDK: time to first token and tokens/s for a
   typical completion prompt, cold (a prompt it has never seen) and warm (the same prompt plus
   one typed character: llama.cpp reuses its KV cache for the unchanged prefix).
2. Kestrel on top: inline completion through LSP (kestrel-lsp with no provider configured,
   so it starts its own llama.cpp child) vs the same kind of warm request made directly with
   the SDK to an identical child (the one from 1: Kestrel's own child answers only Kestrel, which
   holds its per-start key). Both paths type one character per sample, alternating, so each
   request finds its child's KV cache in the same state; the SDK clock stops at the first newline
   (when the server can answer a single-line completion).
3. The first completion after a start, side by side in alternating runs: the server as editors start it
   (the model's process spawned at process start, `runtime.prestart`) against the same server with
   `--no-prestart-local` (spawned once the settings arrive, as before): spawn -> `initialize`,
   `initialize` -> first completion, spawn -> first completion.
4. The prompt pass, side by side in one process, alternating: the model as Kestrel's launcher builds it
   (`local.last_logits`: logits of each batch's last token only) against stock `llama_cpp.Llama` as
   llama_cpp.server builds it (`logits_all=True`), on cold FIM prompts of the embedded windows (384 +
   96 tokens) cut from Kestrel's own source files; time to the first token, and whether the answers match.
5. Speculative drafts looked up in the prompt (`kestrel.local.speculative`), side by side in one process,
   alternating: inline-edit rewrites and cold FIM prompts, time to the whole answer, and whether they match.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from .common import paired_ratio_p50, summary
from .lsp_client import SERVER_CMD, clean_env
from .rawclient import RawClient

PREFIX = (
    "import math\n\n\n"
    "def circle_area(radius):\n"
    "    \"\"\"Area of a circle with the given radius.\"\"\"\n"
    "    return "
)


async def _sdk_request(client: Any, model: str, prompt: str, max_tokens: int = 48,
                       stop: tuple[str, ...] = ("\n\n\n", "<|endoftext|>")) -> tuple[float, float | None, str]:
    """(ms to the first token, tokens/s after it, text) for one streamed greedy /v1/completions call."""
    t0 = time.perf_counter()
    first = None
    n = 0
    text = ""
    stream = await client.completions.create(model=model, prompt=prompt, max_tokens=max_tokens, temperature=0,
                                             stream=True, stop=list(stop) or None)
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].text:
            n += 1
            text += chunk.choices[0].text
            if first is None:
                first = time.perf_counter()
    end = time.perf_counter()
    tps = (n - 1) / (end - first) if first and n > 1 and end > first else None
    return ((first or end) - t0) * 1000, tps, text


async def _sdk_first_line_ms(client: Any, model: str, prompt: str) -> float:
    t0 = time.perf_counter()
    stream = await client.completions.create(model=model, prompt=prompt, max_tokens=48, temperature=0, stream=True)
    elapsed = None
    text = ""
    async for chunk in stream:
        text += chunk.choices[0].text if chunk.choices else ""
        if elapsed is None and "\n" in text:
            elapsed = (time.perf_counter() - t0) * 1000
    return elapsed if elapsed is not None else (time.perf_counter() - t0) * 1000


async def _first_completion(flags: list[str], log: Any) -> tuple[float, float, str | None]:
    """(spawn -> initialize result, initialize result -> first completion answered) in ms, the text."""
    client = RawClient()
    t0 = time.perf_counter()
    await client.spawn([*SERVER_CMD, *flags], clean_env(KESTREL_LOCAL="1"), log)
    try:
        await client.initialize({"kestrel": {"completion": {"prepareNext": False}}})
        t_init = time.perf_counter()
        uri = "file:///bench/first.py"
        client.open(PREFIX, uri)
        text = await client.inline(5, 11, uri)  # waits for the model to load
        return (t_init - t0) * 1000, (time.perf_counter() - t_init) * 1000, text
    finally:
        await client.stop()


async def first_completion_side_by_side(runs: int, logs: Path) -> dict[str, Any]:
    """The first completion after a start, with and without the early spawn, alternating run by run
    (which goes first alternates too); one unmeasured run of each warms the page cache first."""
    variants = {"early_spawn": [], "spawn_after_settings": ["--no-prestart-local"]}
    times: dict[str, dict[str, list[float]]] = {k: {"init": [], "first": [], "total": []} for k in variants}
    empty = dict.fromkeys(variants, 0)
    with open(logs / "first-completion.log", "ab") as log:
        for flags in variants.values():
            await _first_completion(flags, log)
        for i in range(runs):
            for name in (list(variants) if i % 2 == 0 else list(reversed(variants))):
                init, first, text = await _first_completion(variants[name], log)
                times[name]["init"].append(init)
                times[name]["first"].append(first)
                times[name]["total"].append(init + first)
                empty[name] += not (text or "").strip()
    return {name: {"spawn_to_initialize_ms": summary(t["init"], 1), "initialize_to_first_completion_ms": summary(t["first"], 1),
                   "spawn_to_first_completion_ms": summary(t["total"], 1), "empty_answers": empty[name], "runs": runs}
            for name, t in times.items()}


def _window_prompts(model_name: str, n: int) -> list[str]:
    """n cold FIM prompts in the embedded windows: the middle of Kestrel's own larger source files."""
    from kestrel.config import LocalSettings
    from kestrel.context.window import CHARS_PER_TOKEN
    from kestrel.providers.base import CompletionPrompt
    from kestrel.providers.prompts import fim_template_for

    local = LocalSettings()
    template = fim_template_for(model_name)
    root = Path(__file__).resolve().parents[1] / "pyserver" / "kestrel"
    files = sorted((p for p in root.rglob("*.py") if p.stat().st_size > 8000), key=lambda p: str(p))[:n]
    prompts = []
    for path in files:
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        cut = sum(len(line) for line in lines[: len(lines) // 2])
        cut += len(lines[len(lines) // 2]) - len(lines[len(lines) // 2].lstrip())  # after the indentation
        prefix = text[max(0, cut - int(local.prefix_tokens * CHARS_PER_TOKEN)) : cut]
        suffix = text[cut : cut + int(local.suffix_tokens * CHARS_PER_TOKEN)]
        prompts.append(template.render(CompletionPrompt(prefix=prefix, suffix=suffix, language="python",
                                                        path=str(path))))
    return prompts


def _in_process_model() -> dict[str, Any]:
    """`llama_cpp.Llama` arguments as llama_cpp.server builds the model for Kestrel's launcher."""
    from kestrel.local.runtime import thread_count

    return {"n_ctx": 2048, "n_threads": thread_count(None), "logits_all": True, "verbose": False}


def prompt_pass_side_by_side(model_path: str, model_name: str, samples: int) -> dict[str, Any]:
    """Section 4: cold time to the first token, stock llama_cpp.Llama (as llama_cpp.server builds it)
    vs `LastTokenLogitsLlama` (as Kestrel's launcher builds it), alternating which goes first."""
    import llama_cpp

    from kestrel.local.last_logits import LastTokenLogitsLlama

    kw = _in_process_model()
    models = {"llama_cpp_server_default": llama_cpp.Llama(model_path, **kw),
              "kestrel_last_token_logits": LastTokenLogitsLlama(model_path, **kw)}
    ttft: dict[str, list[float]] = {k: [] for k in models}
    answers: dict[str, list[str]] = {k: [] for k in models}
    for i, prompt in enumerate(_window_prompts(model_name, samples)):
        for name in (list(models) if i % 2 == 0 else list(reversed(models))):
            llm = models[name]
            llm.reset()  # cold: nothing of the prompt cached
            t0 = time.perf_counter()
            first, text = None, ""
            for chunk in llm.create_completion(prompt, max_tokens=16, temperature=0, stream=True):
                first = first or time.perf_counter()
                text += chunk["choices"][0]["text"]
            ttft[name].append(((first or time.perf_counter()) - t0) * 1000)
            answers[name].append(text)
    a, b = ttft["llama_cpp_server_default"], ttft["kestrel_last_token_logits"]
    return {**{f"{k}_ttft_ms": summary(v, 1) for k, v in ttft.items()},
            "ratio_per_prompt_p50": paired_ratio_p50(a, b),
            "same_answers": sum(x == y for x, y in zip(*answers.values())), "prompts": len(a)}


def _rewrite_messages(n: int) -> list[list[dict]]:
    """Inline-edit requests as Kestrel sends them ("Add type hints." over a whole QuixBugs program)."""
    from kestrel.edits.inline_edit import Target, edit_messages

    root = Path(__file__).resolve().parent / "data" / "quixbugs" / "python_programs"
    out = []
    for path in sorted(root.glob("*.py"))[:n]:
        text = path.read_text()
        out.append(edit_messages(text, Target(0, len(text), text), "Add type hints.", "python", path.name))
    return out


def speculative_side_by_side(model_path: str, model_name: str, samples: int) -> dict[str, Any]:
    """Section 5: the model as the launcher builds it, with and without prompt-lookup drafts
    (`kestrel.local.speculative`, local/lookup_draft.py), alternating which goes first; greedy. Inline-edit
    rewrites (chat answers, up to 400 tokens: drafted) and cold FIM prompts of the embedded windows (48
    tokens: completions are not drafted, so the same cost is expected): time to the end of the answer, and
    whether both wrote the same text."""
    from kestrel.local.last_logits import LastTokenLogitsLlama
    from kestrel.local.lookup_draft import PromptLookupDraft

    kw = _in_process_model()
    draft = PromptLookupDraft()
    models = {"plain": LastTokenLogitsLlama(model_path, **kw),
              "speculative": LastTokenLogitsLlama(model_path, draft_model=draft, **kw)}
    jobs = [("rewrite", m) for m in _rewrite_messages(max(2, samples // 2))] + \
           [("fim", p) for p in _window_prompts(model_name, samples)]
    times: dict[str, dict[str, list[float]]] = {kind: {k: [] for k in models} for kind in ("rewrite", "fim")}
    same = {"rewrite": 0, "fim": 0}
    for i, (kind, job) in enumerate(jobs):
        texts = {}
        for name in (list(models) if i % 2 == 0 else list(reversed(models))):
            llm = models[name]
            llm.reset()  # cold: nothing of the prompt cached
            t0 = time.perf_counter()
            if kind == "fim":
                text = "".join(c["choices"][0]["text"] for c in
                               llm.create_completion(job, max_tokens=48, temperature=0, stream=True))
            else:
                text = "".join(c["choices"][0]["delta"].get("content") or "" for c in
                               llm.create_chat_completion(job, max_tokens=400, temperature=0, stream=True))
            times[kind][name].append((time.perf_counter() - t0) * 1000)
            texts[name] = text
        same[kind] += texts["plain"] == texts["speculative"]
    out: dict[str, Any] = {"drafted_tokens": draft.proposed, "drafted_tokens_kept": draft.accepted}
    for kind, t in times.items():
        out[kind] = {**{f"{k}_ms": summary(v, 1) for k, v in t.items()}, "prompts": len(t["plain"]),
                     "ratio_per_prompt_p50": paired_ratio_p50(t["plain"], t["speculative"]),
                     "ratio_of_sums": round(sum(t["speculative"]) / sum(t["plain"]), 3) if t["plain"] else None,
                     "same_answers": same[kind]}
    return out


async def run(samples: int, logs: Path) -> dict[str, Any]:
    from openai import AsyncOpenAI

    from kestrel.local.models import resolve_model, runtime_available
    from kestrel.local.runtime import LocalModelServer

    if not runtime_available():
        return {"skipped": "llama-cpp-python is not installed"}
    model = resolve_model(allow_download=False)
    out: dict[str, Any] = {"model": model.name, "source": model.source}

    # 1. the local server alone
    server = LocalModelServer(model)
    await server.start()
    try:
        sdk = AsyncOpenAI(base_url=server.base_url, api_key=server.api_key, max_retries=0)
        cold_ttft, warm_ttft, tps = [], [], []
        for i in range(samples):
            fresh = f"# sample {i} {time.time_ns()}\n" + PREFIX  # never seen: a cold prompt
            ms, rate, _ = await _sdk_request(sdk, model.name, fresh)
            cold_ttft.append(ms)
            ms, rate2, _ = await _sdk_request(sdk, model.name, fresh + "z")  # one typed character
            warm_ttft.append(ms)
            tps += [r for r in (rate, rate2) if r]
        out["server_alone"] = {"ttft_cold_ms": summary(cold_ttft), "ttft_warm_ms": summary(warm_ttft),
                               "tokens_per_s": summary(tps)}
        await sdk.close()
    except BaseException:
        await server.stop()
        raise

    # 2. kestrel-lsp on top of its own child
    client = RawClient()
    log = open(logs / "server.log", "ab")
    await client.spawn(SERVER_CMD, clean_env(KESTREL_LOCAL="1"), log)
    try:
        # Each sample types a character where the last suggestion went: a suggestion prepared after it
        # (completion.prepareNext) would answer from a stream already run (what bench next_suggestion
        # measures). Here a new generation is compared with the same request made through the SDK.
        await client.initialize({"kestrel": {"completion": {"prepareNext": False}}})
        uri = "file:///bench/local.py"
        client.open(PREFIX, uri)
        t0 = time.perf_counter()
        await client.inline(5, 11, uri)  # waits for the model to load
        out["lsp_first_completion_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        sdk = AsyncOpenAI(base_url=server.base_url, api_key=server.api_key, max_retries=0)
        lsp_ms, sdk_ms = [], []
        from kestrel.context.window import prefix_window
        from kestrel.providers.base import CompletionPrompt
        from kestrel.providers.prompts import fim_template_for

        template = fim_template_for(model.name)
        typed = ""
        for i in range(samples):
            typed += "z"
            doc = PREFIX + typed
            client.change(doc, uri)
            t = time.perf_counter()
            await client.inline(5, 11 + len(typed), uri)
            lsp_ms.append((time.perf_counter() - t) * 1000)
            typed += "z"
            prompt = template.render(CompletionPrompt(prefix=prefix_window(PREFIX + typed, 384), suffix="",
                                                      language="python", path="/bench/local.py"))
            sdk_ms.append(await _sdk_first_line_ms(sdk, model.name, prompt))
        await sdk.close()
        out["lsp_inline_ms"] = summary(lsp_ms)
        out["sdk_same_child_ms"] = summary(sdk_ms)
        out["added_p50_ms"] = round(out["lsp_inline_ms"]["p50"] - out["sdk_same_child_ms"]["p50"], 2)
    finally:
        await client.stop()
        log.close()
        await server.stop()
    out["first_completion"] = await first_completion_side_by_side(max(3, samples // 2), logs)
    out["prompt_pass"] = await asyncio.to_thread(prompt_pass_side_by_side, str(model.path), model.name, samples)
    out["speculative"] = await asyncio.to_thread(speculative_side_by_side, str(model.path), model.name, samples)
    return out
