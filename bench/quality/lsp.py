"""kestrel: the same tasks through `kestrel-lsp` over stdio, as an editor drives it.

One server process per run (env: KESTREL_PROVIDER=fim, KESTREL_BASE_URL=<llama.cpp>/v1,
KESTREL_MODEL=<model name>, KESTREL_LOCAL=0), a temporary workspace folder as rootUri, and
per task: write + didOpen `tasks/<entry_point>.py` (languageId python; the TypeScript / JavaScript /
Go / Rust tasks: `tasks/<the real file's name>` with their languageId), inlineCompletion at the cursor (Automatic
trigger), take the first item, apply its insertText over its range (which may replace text),
didClose. Latency is request -> response.

The client is bench/lsp_client.py's KestrelClient (pygls' LanguageClient).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from bench.lsp_client import (KestrelClient, clean_env, inline_params, offset_of, open_doc, position_of,
                              server_command, stop_server, wait_ready)

__all__ = ["KestrelSession", "LspAnswer", "apply_item", "offset_of", "position_of"]
log = logging.getLogger(__name__)


def server_env(base_url: str, model: str, fim_template: str | None = None,
               kestrel_src: str | None = None) -> dict[str, str]:
    env = clean_env(KESTREL_PROVIDER="fim", KESTREL_BASE_URL=base_url, KESTREL_MODEL=model, KESTREL_LOCAL="0")
    if fim_template:
        env["KESTREL_FIM_TEMPLATE"] = fim_template
    if kestrel_src:  # a directory holding the `kestrel` package (e.g. an export of another commit's pyserver/)
        env["PYTHONPATH"] = os.pathsep.join([kestrel_src, *filter(None, [env.get("PYTHONPATH")])])
    return env


def apply_item(document: str, cursor: int, item: types.InlineCompletionItem) -> tuple[str, str]:
    """(the document after accepting `item`, the text inserted). Honours `item.range`."""
    text = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
    if item.range is None:
        start = end = cursor
    else:
        start, end = offset_of(document, item.range.start), offset_of(document, item.range.end)
    return document[:start] + text + document[end:], text


@dataclass
class LspAnswer:
    document: str  # the editor's text after accepting the first item (unchanged if none)
    text: str  # the inserted text ("" when nothing was shown)
    latency_ms: float
    replaced: int  # characters the item's range replaced (0 = a plain insertion)
    error: str | None = None


class KestrelSession:
    """One kestrel-lsp process and a temporary workspace folder."""

    def __init__(self, base_url: str, model: str, log_path: Path, fim_template: str | None = None,
                 kestrel_src: str | None = None) -> None:
        self.kestrel_src = kestrel_src
        self.base_url = base_url
        self.model = model
        self.log_path = log_path
        self.fim_template = fim_template
        self.client = KestrelClient("kestrel-quality-eval")
        self.workspace = Path(tempfile.mkdtemp(prefix="kestrel-eval-ws-"))
        self._log: Any = None

    @property
    def proc(self) -> Any:
        return self.client.proc

    async def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        (self.workspace / "tasks").mkdir(parents=True, exist_ok=True)
        # the installed console script, as an editor starts it (`python -m kestrel` for another
        # source tree, which goes first on PYTHONPATH)
        await self.client.spawn(server_command(console_script=not self.kestrel_src),
                                server_env(self.base_url, self.model, self.fim_template, self.kestrel_src), self._log,
                                self.workspace)
        result = await self.client.initialize(root=self.workspace)
        if result.capabilities.inline_completion_provider is None:
            raise RuntimeError("kestrel-lsp does not advertise textDocument/inlineCompletion")
        if not await wait_ready(self.client, 60.0, connected=False, strict=False):
            log.warning("kestrel-lsp did not report ready in %.0f s; continuing", 60.0)

    def _open(self, name: str, document: str, language: str = "python", filename: str | None = None) -> Path:
        """Write `tasks/<name>.py` (or `tasks/<filename>`) into the workspace and didOpen it
        (version 1) with `language` as its languageId."""
        path = self.workspace / "tasks" / (filename or f"{name}.py")
        path.write_text(document, encoding="utf-8")
        self.client.version = 1
        open_doc(self.client, path.as_uri(), document, language)
        return path

    async def complete(self, name: str, prefix: str, suffix: str, language: str = "python",
                       filename: str | None = None) -> LspAnswer:
        document = prefix + suffix
        cursor = len(prefix)
        path = self._open(name, document, language, filename)
        uri = path.as_uri()
        pos = position_of(document, cursor)
        params = inline_params(uri, pos.line, pos.character)
        error = None
        t0 = time.perf_counter()
        try:
            items = await self.client.inline_items(params)
        except Exception as exc:  # an error answer counts as nothing shown
            items, error = [], f"{type(exc).__name__}: {exc}"
        latency = (time.perf_counter() - t0) * 1000
        self.client.close_doc(uri)
        path.unlink(missing_ok=True)
        if not items:
            return LspAnswer(document, "", latency, 0, error)
        new_doc, text = apply_item(document, cursor, items[0])
        replaced = len(document) - (len(new_doc) - len(text))
        return LspAnswer(new_doc, text, latency, replaced, error)

    async def stop(self) -> None:
        await stop_server(self.client, timeout=10.0)
        if self._log is not None:
            self._log.close()
        shutil.rmtree(self.workspace, ignore_errors=True)
