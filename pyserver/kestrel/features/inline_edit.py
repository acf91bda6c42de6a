"""Inline edits (`kestrel/edit`): rewrite the selection (or the enclosing block) from an
instruction. The rewrite streams to the editor as `kestrel/editDelta` through the shared turn
streamer (so `kestrel/steer` redirects it like a chat answer); the answer is minimal edits
against the current document version, rebased when the user typed elsewhere, refused when the
target itself changed. How the rewrite is found and checked: `edits.inline_edit.rewrite`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .. import protocol
from ..core import Core
from ..protocol import EditParams, EditRange, EditResult
from . import NotReady, model_ready

if TYPE_CHECKING:
    from ..edits.inline_edit import EditJob, Rewrite, Target

# The edit engine (kestrel.edits.*) is imported by the first edit, not at the server's start
# (docs/design-notes.md#pyserverkestrelcompiled_methodspy).


def edit_target(text: str, selection: EditRange | None) -> Target:
    """No range: the start of the document; a range without `end`: the block around `start`."""
    from ..edits.inline_edit import target_for

    start = selection.start if selection else protocol.Position(line=0, character=0)
    end = (selection.end or selection.start) if selection else start
    return target_for(text, start.line, start.character, end.line, end.character)


class InlineEditFeature:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def edit(self, params: EditParams) -> EditResult:
        from ..edits.inline_edit import EditJob, rewrite

        core = self.core
        edit_id = params.id or f"edit-{time.monotonic_ns()}"
        ready = await model_ready(core, params.uri)
        if isinstance(ready, NotReady):
            return EditResult(id=edit_id, error=ready.message)
        instruction = params.instruction.strip()
        if not instruction:
            return EditResult(id=edit_id, error="the instruction is empty")
        doc = ready.doc
        text = doc.source
        job = EditJob(edit_id, text, doc.version, edit_target(text, params.range), instruction,
                      doc.language_id or "", core.documents.path(params.uri), ready.provider)
        too_large = self._too_large(job)
        if too_large:
            return EditResult(id=edit_id, error=too_large)
        region = [(0, len(job.target.text), job.target.text)]
        core.notify(protocol.EDIT_STARTED.method, protocol.EditStartedParams(
            id=edit_id, edits=self._text_edits(text, job.target.start, region)))
        outcome = await rewrite(job, core.chat_engine, protocol.EDIT_DELTA.method, doc)
        if outcome.error:
            return EditResult(id=edit_id, error=outcome.error)
        return self._answer(params.uri, job, outcome)

    def _too_large(self, job: EditJob) -> str | None:
        """Why the region cannot be rewritten within a small model's context window (the prompt holds
        it and its surroundings, the answer holds it again), or None."""
        from ..chat import fit
        from ..edits.inline_edit import edit_messages

        window = fit.known_window(self.core.host)
        if not window:
            return None
        needed = fit.size(edit_messages(job.text, job.target, job.instruction, job.language, job.path)) + fit.tokens(job.target.text)
        if needed <= window:
            return None
        lines = job.target.text.count("\n") + 1
        return (f"the selection ({lines} lines) is too long for the model: rewriting it takes about {needed:,} tokens "
                f"(the code around it, the selection, then the answer) and it reads {window:,} in all; select less "
                "(a function at a time), or use a model with a larger context window")

    def _answer(self, uri: str, job: EditJob, outcome: Rewrite) -> EditResult:
        """The rewrite as minimal edits against the document as it is now (the user may have typed)."""
        from ..edits.diff import minimal_edits
        from ..edits.hoist import import_edit
        from ..edits.inline_edit import EditRefused, rebase

        current = self.core.documents.get(uri)
        if current is None:
            return EditResult(id=job.edit_id, error="the document was closed")
        try:
            base = rebase(current.source, job.target)
        except EditRefused as exc:
            return EditResult(id=job.edit_id, error=str(exc))
        new_text, head = outcome.text, import_edit(current.source, outcome.imports)
        if head is not None and head[0] >= base:  # the region is the file's head: the imports lead it
            new_text, head = head[1] + new_text, None
        lsp_edits = self._text_edits(current.source, base, minimal_edits(job.target.text, new_text))
        if head is not None:  # the imports the rewrite needs, in the file's import block
            lsp_edits = self._text_edits(current.source, 0, [(head[0], head[0], head[1])]) + lsp_edits
        return EditResult(
            id=job.edit_id, version=current.version, new_text=new_text,
            edits=lsp_edits,
            steers=protocol.from_wire(outcome.steers, list[protocol.SteerMark]), stopped=outcome.stopped,
            made_by=outcome.made_by,
        )

    def _text_edits(self, text: str, base: int, edits: list[tuple[int, int, str]]) -> list[protocol.TextEdit]:
        from ..edits.diff import to_lsp_edits

        lsp_edits = to_lsp_edits(text, base, edits, self.core.documents.encoding())
        return protocol.from_wire(lsp_edits, list[protocol.TextEdit])
