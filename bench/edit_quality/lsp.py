"""kestrel: the edit tasks through `kestrel-lsp` over stdio, as VS Code drives them.

- quick fix: didOpen the broken file, `textDocument/codeAction` at the diagnostic's range with
  the ruff diagnostic in its context, pick "Fix with Kestrel", `codeAction/resolve` it (the model
  runs there, as in VS Code), apply the WorkspaceEdit's TextEdits. Time: codeAction -> resolved.
- inline edit: `kestrel/edit` over the whole function with the instruction, apply the returned
  edits. Time: request -> answer (the preview deltas stream meanwhile and are not used).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from bench.lsp_client import offset_of
from bench.quality.lsp import KestrelSession
from kestrel.core.payload import plain

from .data import EditTask


@dataclass
class EditAnswer:
    document: str  # after applying the edit (unchanged when nothing was offered)
    latency_ms: float
    offered: bool
    error: str | None = None
    made_by: str = ""  # what the server says made it ("rule:import", "model", "model:line-scan", ...)


def apply_text_edits(document: str, edits: list[Any]) -> str:
    """LSP TextEdits (typed or JSON), all against `document`, applied back to front."""
    spans = []
    for e in edits:
        if isinstance(e, dict):
            rng = types.Range(start=types.Position(**e["range"]["start"]), end=types.Position(**e["range"]["end"]))
            text = e["newText"]
        else:
            rng, text = e.range, e.new_text
        spans.append((offset_of(document, rng.start), offset_of(document, rng.end), text))
    for start, end, text in sorted(spans, key=lambda s: s[0], reverse=True):
        document = document[:start] + text + document[end:]
    return document


def function_range(document: str, target: tuple[int, int]) -> types.Range:
    """The target lines, whole (as a user selects a function)."""
    lines = document.split("\n")
    first, last = target
    return types.Range(start=types.Position(line=first, character=0),
                       end=types.Position(line=last, character=len(lines[last])))


class EditSession(KestrelSession):
    """KestrelSession's server and workspace, asked for quick fixes and inline edits."""

    async def quick_fix(self, task: EditTask) -> EditAnswer:
        document = task.broken
        uri = self._open(task.entry_point, document, task.language, task.filename or None).as_uri()
        d = task.diagnostic or {}
        diag = types.Diagnostic(
            range=types.Range(start=types.Position(**d["range"]["start"]), end=types.Position(**d["range"]["end"])),
            message=d["message"], severity=types.DiagnosticSeverity.Error, code=d.get("code"), source=d.get("source"),
        )
        t0 = time.perf_counter()
        try:
            resolved = await self.client.quick_fix(uri, diag)
            latency = (time.perf_counter() - t0) * 1000
        except Exception as exc:
            return EditAnswer(document, (time.perf_counter() - t0) * 1000, False, f"{type(exc).__name__}: {exc}")
        finally:
            self.client.close_doc(uri)
        if resolved is None:
            return EditAnswer(document, latency, False, "no Fix with Kestrel action")
        edits = []
        for change in (resolved.edit.document_changes or []) if resolved.edit else []:
            edits += list(getattr(change, "edits", []) or [])
        made_by = str((plain(resolved.data) or {}).get("madeBy", "")) if isinstance(plain(resolved.data), dict) else ""
        if not edits:
            return EditAnswer(document, latency, False, "the fix offered no edit", made_by)
        return EditAnswer(apply_text_edits(document, edits), latency, True, None, made_by)

    async def inline_edit(self, task: EditTask) -> EditAnswer:
        document = task.broken
        uri = self._open(task.entry_point, document).as_uri()
        rng = function_range(document, task.target)
        params = {"id": f"eval-{task.task_id}", "uri": uri, "instruction": task.instruction,
                  "range": {"start": {"line": rng.start.line, "character": 0},
                            "end": {"line": rng.end.line, "character": rng.end.character}}}
        t0 = time.perf_counter()
        try:
            result = await self.client.edit(params)
        except Exception as exc:
            return EditAnswer(document, (time.perf_counter() - t0) * 1000, False, f"{type(exc).__name__}: {exc}")
        finally:
            self.client.close_doc(uri)
        latency = (time.perf_counter() - t0) * 1000
        if result.get("error"):
            return EditAnswer(document, latency, False, str(result["error"]))
        edits = result.get("edits") or []
        made_by = str(result.get("madeBy", ""))
        if not edits:
            return EditAnswer(document, latency, False, "the edit changed nothing", made_by)
        return EditAnswer(apply_text_edits(document, edits), latency, True, None, made_by)
