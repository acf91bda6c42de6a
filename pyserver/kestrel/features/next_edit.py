"""Next edit suggestions (`kestrel/nextEdit`, off by default): from the user's recent edits,
predict the related edit near the cursor (a renamed parameter → its uses)."""

from __future__ import annotations

from .. import protocol
from ..core import Core
from ..edits.edit_history import EditHistory
from ..protocol import NextEditParams, NextEditResult
from ..providers.base import ProviderError
from . import NotReady, model_ready

# The next-edit engine is imported by the first suggestion, not at the server's start
# (docs/design-notes.md#pyserverkestrelcompiled_methodspy).


class NextEditFeature:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.history = EditHistory()
        core.documents.subscribe(opened=self.history.opened, closed=self.history.forget)

    async def suggest(self, params: NextEditParams) -> NextEditResult | None:
        """The edit the user will likely make next near the cursor, or None (also when disabled)."""
        from ..edits.diff import to_lsp_edits
        from ..edits.next_edit import next_edit_messages, region_around, suggested_edits
        from ..providers.collect import collect

        core = self.core
        ready = await model_ready(core, params.uri)
        if not core.host.settings.next_edit or isinstance(ready, NotReady):
            return None  # an automatic suggestion: nothing to offer, nothing to report
        uri, doc = params.uri, ready.doc
        text, version = doc.source, doc.version
        diff = self.history.recent_diff(uri, text)
        if not diff:
            return None
        target = region_around(text, params.position.line if params.position else 0)
        messages = next_edit_messages(diff, text, target, doc.language_id or "", core.documents.path(uri))
        try:
            answer = await collect(ready.provider, messages, prediction=target.text)
        except ProviderError as exc:
            core.status.report(exc)
            return None
        if doc.version != version:
            return None  # the user kept typing: this suggestion is already stale
        edits = suggested_edits(answer, target)
        self.history.settle(uri, text)
        if not edits:
            return None
        lsp_edits = to_lsp_edits(text, target.start, edits, core.documents.encoding())
        return NextEditResult(uri=uri, version=version, edits=protocol.from_wire(lsp_edits, list[protocol.TextEdit]))
