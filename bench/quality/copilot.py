"""copilot (optional, `--peers copilot`): the same tasks through GitHub Copilot's language server
(bench/peers/copilot.py) against the HTTPS stand-in for GitHub's endpoints (bench/peers/standin.py),
which forwards `POST /v1/engines/<engine>/completions` to the SAME llama.cpp server as raw and
Kestrel: the model's FIM prompt of Copilot's own prompt (its `# Path: ...` line included) and
suffix, Copilot's `max_tokens` and `stop`, temperature 0, and `extra.trim_by_indentation`
(see standin.indentation_cut).

Driven as bench/peers drives it: one server process per run, per task write + didOpen +
didFocus `tasks/<entry_point>.py`, `textDocument/inlineCompletion` at the cursor (Automatic
trigger, formattingOptions), take the first item, apply its insertText over its range (Copilot
answers whole lines, ranges from column 0), didClose. Copilot as shipped: its completionsDelay
(200 ms by default) is part of the latency.

Note: Copilot does not complete in the middle of a line (text other than closing brackets after
the cursor): it answers nothing without asking the model. In the line sets the hole's line is
removed, so the cursor sits before the next line's code. Copilot is therefore given the "open
line" form of the same editor state: when only indentation precedes the cursor on its line and
code follows it, a newline is inserted at the cursor (the person pressed Enter above that code),
and the accepted text fills the new empty line. The program scored is the same composition
(prefix + answer + newline + suffix). Mid-line holes (most random spans) stay as they are, and
Copilot shows nothing there, by design. Kestrel is not given this (easier) form.

The whole eval runs inside a loopback-only network namespace (`unshare -rn`, see __main__),
llama.cpp included, so Copilot's telemetry cannot leave the machine.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from .lang_tasks import RAW_PREFIX_TOKENS, RAW_SUFFIX_TOKENS
from .lsp import LspAnswer, apply_item, position_of


def available() -> str | None:
    """None when Copilot's LS can run here, else the reason it cannot."""
    from bench.peers import certs, copilot

    if copilot.node_binary() is None:
        return "Node >= 22.13 not found (make node-tools)"
    if not certs.available():
        return "neither the cryptography package nor the openssl CLI is available"
    return None


def first_item(raw: Any) -> types.InlineCompletionItem | None:
    """The first item of an inlineCompletion result (typed, or plain JSON) as lsprotocol's type."""
    if isinstance(raw, types.InlineCompletionList):
        raw = raw.items
    items = raw.get("items") if isinstance(raw, dict) else raw
    if not items:
        return None
    it = items[0]
    if isinstance(it, types.InlineCompletionItem):
        return it
    text = it.get("insertText")
    if isinstance(text, dict):
        text = text.get("value", "")
    rng = it.get("range")
    if rng:
        rng = types.Range(start=types.Position(**rng["start"]), end=types.Position(**rng["end"]))
    return types.InlineCompletionItem(insert_text=text or "", range=rng)


def open_line(prefix: str, suffix: str) -> str:
    """The suffix with a newline in front when the cursor sits at a line's start or after its
    indentation with code after it (see the module note); else the suffix unchanged."""
    line_head = prefix[prefix.rfind("\n") + 1:]
    line_rest = suffix.split("\n", 1)[0]
    if line_head.strip() or not line_rest.strip():
        return suffix
    return "\n" + suffix


# Copilot sizes its prompt from an experiment variable GitHub serves per model (prompt + completion
# tokens; 8,192 by default, for GitHub's large-context models). Left at that, a real TypeScript file
# gave a prompt of 7,700 tokens: twice this eval's n_ctx, minutes of prefill on a CPU, and every
# request timed out. The stand-in serves it as GitHub would for this model, with the raw model's
# windows (the same information: 1,500 + 400 prompt tokens) plus Copilot's own 500 completion tokens;
# Copilot still splits it between prefix, suffix and context its own way. HumanEval's files fit either way.
PROMPT_BUDGET_VARIABLE = "maxpromptcompletionTokens"
PROMPT_BUDGET = RAW_PREFIX_TOKENS + RAW_SUFFIX_TOKENS + 500


class CopilotSession:
    """The stand-in (its own process, forwarding to llama.cpp) + one Copilot LS process."""

    def __init__(self, base_url: str, model: str, logs: Path, fim: str = "qwen") -> None:
        self.base_url = base_url
        self.model = model
        self.logs = logs.resolve()  # the LS runs in its own folder: a relative cert path would not load
        self.fim = fim
        self.standin: Any = None
        self.server: Any = None
        self.version = 0

    async def start(self) -> None:
        from bench.peers import certs, copilot
        from bench.peers.runner import StandInProcess

        logging.getLogger("pygls").setLevel(logging.ERROR)
        await asyncio.to_thread(copilot.ensure_installed)
        self.logs.mkdir(parents=True, exist_ok=True)
        cert, key = certs.make_cert(self.logs / "peers-tls")
        self.standin = StandInProcess(cert, key, self.logs / "quality-standin.log", upstream=self.base_url,
                                      upstream_model=self.model, fim=self.fim,
                                      exp_parameters={PROMPT_BUDGET_VARIABLE: PROMPT_BUDGET})
        await asyncio.to_thread(self.standin.__enter__)
        self.server = copilot.CopilotServer(self.standin.url, cert, self.logs / "quality-copilot.log")
        await self.server.start()
        (self.server.workspace / "tasks").mkdir(parents=True, exist_ok=True)

    async def complete(self, name: str, prefix: str, suffix: str, language: str = "python",
                       filename: str | None = None) -> LspAnswer:
        suffix = open_line(prefix, suffix)
        document = prefix + suffix
        cursor = len(prefix)
        client = self.server.client
        path = self.server.workspace / "tasks" / (filename or f"{name}.py")
        path.write_text(document, encoding="utf-8")
        uri = path.as_uri()
        client.open(uri, document, language)  # didOpen + didFocus (version 1)
        answer = await self.ask(uri, document, cursor)
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        path.unlink(missing_ok=True)
        return answer

    async def ask(self, uri: str, document: str, cursor: int) -> LspAnswer:
        """`textDocument/inlineCompletion` at `cursor` of the open `document`; its first item applied
        over its range. An error or no answer within 120 s counts as nothing shown."""
        pos = position_of(document, cursor)
        error = None
        t0 = time.perf_counter()
        try:
            _, fut = self.server.client.send_inline(pos.line, pos.character, uri)
            result = await asyncio.wait_for(fut, 120)
        except Exception as exc:  # an error answer counts as nothing shown
            result, error = None, f"{type(exc).__name__}: {exc}"
        latency = (time.perf_counter() - t0) * 1000
        item = first_item(result) if result is not None else None
        if item is None:
            return LspAnswer(document, "", latency, 0, error)
        new_doc, text = apply_item(document, cursor, item)
        replaced = len(document) - (len(new_doc) - len(text))
        return LspAnswer(new_doc, text, latency, replaced, error)

    def upstream_stats(self) -> dict[str, Any]:
        try:
            st = self.standin.stats()
        except Exception:
            return {}
        return {k: st.get(k) for k in ("completion_requests", "streams_completed", "streams_cancelled", "unknown")}

    async def stop(self) -> None:
        if self.server is not None:
            outside = self.server.outside_hosts()
            if outside:
                logging.getLogger(__name__).warning("copilot tried outside hosts: %s", outside)
            await self.server.stop()
        if self.standin is not None:
            self.standin.__exit__(None, None, None)
