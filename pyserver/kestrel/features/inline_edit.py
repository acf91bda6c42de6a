"""Inline edits (`kestrel/edit`): rewrite the selection (or the enclosing block) from an
instruction. The rewrite streams to the editor as `kestrel/editDelta` through the shared turn
streamer (so `kestrel/steer` redirects it like a chat answer); the answer is minimal edits
against the current document version, rebased when the user typed elsewhere, refused when the
target itself changed."""

from __future__ import annotations

import time
from typing import Any

from ..core import Core, plain
from ..edits.diff import minimal_edits, to_lsp_edits
from ..edits import line_scan
from ..edits.inline_edit import (EditRefused, Target, edit_messages, rebase, region_rewrite, rewrite_problem,
                                 target_for)
from ..edits.quickfix import collect
from ..providers.base import ProviderError


STEER_NOTE = "\n(Reply with the whole new region again, from its first line, following this.)"


class InlineEditFeature:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def edit(self, params: Any) -> dict:
        core = self.core
        data = plain(params) or {}
        edit_id = str(data.get("id") or f"edit-{time.monotonic_ns()}")
        await core.host.wait_ready()
        uri = str(data.get("uri", ""))
        refused = core.refusal(uri)
        if refused:
            return {"id": edit_id, "error": refused}
        doc = core.documents.get(uri)
        if doc is None:
            return {"id": edit_id, "error": "the document is not open"}
        provider = core.host.provider
        if provider is None:
            return {"id": edit_id, "error": core.status.message or "no model is configured"}
        instruction = str(data.get("instruction", "")).strip()
        if not instruction:
            return {"id": edit_id, "error": "the instruction is empty"}
        rng = data.get("range") or {}
        start, end = rng.get("start") or {}, rng.get("end") or rng.get("start") or {}
        text, version = doc.source, doc.version
        target = target_for(text, int(start.get("line", 0)), int(start.get("character", 0)),
                            int(end.get("line", 0)), int(end.get("character", 0)))
        encoding = core.documents.encoding()
        language, path = doc.language_id or "", core.documents.path(uri)
        core.notify("kestrel/editStarted", {
            "id": edit_id, "edits": to_lsp_edits(text, target.start, [(0, len(target.text), target.text)], encoding)})
        if line_scan.asks_for_a_repair(instruction) and line_scan.reads_lines(provider):
            # A slip the model insists on, line by line (see line_scan), before a whole rewrite.
            try:
                slips = await line_scan.candidates(
                    text, target.start, target.end, provider, language, path,
                    lambda region: not rewrite_problem(text, target, region, language, path))
            except ProviderError:
                slips = []
            if slips:
                return self._answer(edit_id, uri, target, slips[0].apply(target.text), {}, "model:line-scan")
        seen = {"version": version, "refused": None}

        def watch(_delta: str) -> None:  # the user may type while the edit streams
            if doc.version != seen["version"] and seen["refused"] is None:
                seen["version"] = doc.version
                try:
                    rebase(doc.source, target)
                except EditRefused as exc:
                    seen["refused"] = str(exc)
                    core.turns.stop(edit_id)

        messages = edit_messages(text, target, instruction, doc.language_id or "", core.documents.path(uri))
        # No resume for edits: a rewrite stitched across a dropped stream is not trustworthy code.
        result = await core.turns.turn(provider, edit_id, messages, delta_method="kestrel/editDelta", on_delta=watch,
                                       prediction=target.text, resume=False, steer_note=STEER_NOTE,
                                       deterministic=True)
        if seen["refused"]:
            return {"id": edit_id, "error": seen["refused"]}
        if result.get("error"):
            return {"id": edit_id, "error": f"the edit failed: {result['error']}; the document was not changed"}
        # After an emulated steer the model answered the region again: that answer is the rewrite.
        restarted = any(st.get("mode") == "emulated" for st in result.get("steers", []))
        answer = result["lastSegment"] if restarted else result["text"]
        rewritten = region_rewrite(text, target, answer)
        problem = rewrite_problem(text, target, rewritten, language, path)
        unchanged = not problem and rewritten == target.text
        if unchanged:
            problem = "that is the region unchanged, and the instruction asks for a change"
        if problem and not result.get("stopped"):
            # One more try, told why (not streamed: the preview keeps the first answer meanwhile).
            retry = [*messages, {"role": "assistant", "content": answer},
                     {"role": "user", "content": f"That is not right: {problem}. Reply with ONLY the corrected region."}]
            try:
                # The best answer changed nothing: the second one is sampled (another reading).
                rewritten = region_rewrite(text, target, await collect(provider, retry, deterministic=not unchanged))
            except ProviderError as exc:
                return {"id": edit_id, "error": f"the edit failed: {exc.message}; the document was not changed"}
            problem = rewrite_problem(text, target, rewritten, language, path)
            if rewritten == target.text:
                problem = ""  # still unchanged: the answer is "nothing to change", offered as such
        if problem:
            return {"id": edit_id, "error": f"the model's edit was not offered: {problem}; the document was not changed"}
        return self._answer(edit_id, uri, target, rewritten, result, "model:rewrite")

    def _answer(self, edit_id: str, uri: str, target: Target, rewritten: str, result: dict, made_by: str) -> dict:
        """The rewrite as minimal edits against the document as it is now (the user may have typed)."""
        core = self.core
        encoding = core.documents.encoding()
        current = core.documents.get(uri)
        if current is None:
            return {"id": edit_id, "error": "the document was closed"}
        try:
            base = rebase(current.source, target)
        except EditRefused as exc:
            return {"id": edit_id, "error": str(exc)}
        edits = minimal_edits(target.text, rewritten)
        return {
            "id": edit_id, "version": current.version, "newText": rewritten,
            "edits": to_lsp_edits(current.source, base, edits, encoding),
            "steers": result.get("steers", []), "stopped": bool(result.get("stopped")),
            "madeBy": made_by,  # how the edit was found: a line re-read by the model (line_scan) or a rewrite
        }

