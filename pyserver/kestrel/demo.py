"""`make demo`: start kestrel-lsp over stdio with no configuration, complete a sample file and
answer a chat turn through LSP.

With nothing configured, the server runs its embedded local model (llama.cpp, SmolLM2 or
Qwen2.5-Coder from installed packages). If the local runtime is not installed, the demo
falls back to Kestrel's mock model. Point it at a hosted model with the usual settings, e.g.
`KESTREL_PROVIDER=groq GROQ_API_KEY=... make demo` or `KESTREL_PROVIDER=ollama make demo`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from lsprotocol import types

SAMPLE = '''import math


def circle_area(radius):
    return '''
SAMPLE_URI = "file:///demo/geometry.py"


async def run() -> int:
    from pygls.lsp.client import LanguageClient

    from .local.models import runtime_available

    mock = None
    init: dict = {}
    if os.environ.get("KESTREL_PROVIDER") or os.environ.get("OPENAI_API_KEY"):
        print(f"model:  from the environment ({os.environ.get('KESTREL_PROVIDER') or 'openai'})")
    elif runtime_available():
        print("model:  the embedded local model (llama.cpp), no configuration")
    else:
        from .testing.mock_model import MockModelServer

        mock = MockModelServer(text="math.pi * radius ** 2\n", ttft_ms=20, tps=1000).__enter__()
        init = {"kestrel": {"provider": "chat", "baseUrl": mock.base_url, "model": "mock-model"}}
        print(f"model:  Kestrel mock model at {mock.base_url} (install the local runtime: pip install '.[local]')")

    client = LanguageClient("kestrel-demo", "0.1")
    status: list = []
    client.feature("kestrel/status")(lambda params: status.append(params))
    client.feature("kestrel/chatDelta")(lambda params: print(params.delta, end="", flush=True))
    client.feature("window/showMessage")(lambda params: print(f"\n[kestrel] {params.message}", flush=True))
    t0 = time.perf_counter()
    await client.start_io(sys.executable, "-m", "kestrel", "--log-level", "WARNING")
    result = await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), initialization_options=init)
    )
    print(f"server: {result.server_info.name} {result.server_info.version}, initialize in {(time.perf_counter() - t0) * 1000:.0f} ms")
    client.initialized(types.InitializedParams())
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=SAMPLE_URI, language_id="python", version=1, text=SAMPLE)))
    lines = SAMPLE.split("\n")
    position = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    t1 = time.perf_counter()
    answer = await client.text_document_inline_completion_async(types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=SAMPLE_URI), position=position,
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked)))
    elapsed = (time.perf_counter() - t1) * 1000
    items = answer.items if isinstance(answer, types.InlineCompletionList) else (answer or [])
    print("\n--- geometry.py, completion at the cursor (▌) ---")
    completion = items[0].insert_text if items else ""
    print(SAMPLE + "\x1b[2m" + str(completion) + "\x1b[0m▌" if completion else SAMPLE + "▌ (no completion)")
    print(f"--- inline completion through LSP in {elapsed:.1f} ms (first request includes model start-up) ---\n")
    question = "In one sentence: what does a Python list comprehension do?"
    print(f"chat> {question}")
    t2 = time.perf_counter()
    reply = await client.protocol.send_request_async("kestrel/chat", {"id": "demo", "prompt": question})
    print(f"\n--- chat answer in {(time.perf_counter() - t2) * 1000:.0f} ms{'; error: ' + reply.error if getattr(reply, 'error', None) else ''} ---\n")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    if mock is not None:
        mock.__exit__(None, None, None)
    print("Use it in VS Code: build the extension (see README), or any LSP client: `kestrel-lsp` over stdio.")
    print("Neovim/Helix setup: docs/editors.md")
    return 0 if completion and getattr(reply, "text", "") else 1


def main() -> None:
    sys.exit(asyncio.run(run()))


if __name__ == "__main__":
    main()
