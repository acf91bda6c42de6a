"""Next edit suggestions (`kestrel/nextEdit`, off by default): from the user's recent edits,
predict the related edit near the cursor (a renamed parameter → its uses)."""

from __future__ import annotations

from typing import Any

from ..core import Core, plain
from ..edits.diff import to_lsp_edits
from ..edits.next_edit import EditHistory, next_edit_messages, region_around, suggested_edits
from ..edits.quickfix import collect
from ..providers.base import ProviderError


class NextEditFeature:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.history = EditHistory()
        core.documents.subscribe(opened=self.history.opened, closed=self.history.forget)

    async def suggest(self, params: Any) -> dict | None:
        """The edit the user will likely make next near the cursor, or None (also when disabled)."""
        core = self.core
        await core.host.wait_ready()
        if not core.host.settings.next_edit:
            return None
        data = plain(params) or {}
        uri = str(data.get("uri", ""))
        if core.refusal(uri):
            return None  # an automatic suggestion: nothing to offer, nothing to report
        doc = core.documents.get(uri)
        provider = core.host.provider
        if doc is None or provider is None:
            return None
        text, version = doc.source, doc.version
        diff = self.history.recent_diff(uri, text)
        if not diff:
            return None
        line = int((data.get("position") or {}).get("line", 0))
        target = region_around(text, line)
        messages = next_edit_messages(diff, text, target, doc.language_id or "", core.documents.path(uri))
        try:
            answer = await collect(provider, messages, prediction=target.text)
        except ProviderError as exc:
            core.status.report(exc)
            return None
        if doc.version != version:
            return None  # the user kept typing: this suggestion is already stale
        edits = suggested_edits(answer, target)
        self.history.settle(uri, text)
        if not edits:
            return None
        return {"uri": uri, "version": version, "edits": to_lsp_edits(text, target.start, edits, core.documents.encoding())}
