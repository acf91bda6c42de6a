"""Quick fixes (`textDocument/codeAction` + `codeAction/resolve`): "Fix with Kestrel" and
"Explain with Kestrel" per diagnostic. Listing actions costs nothing; the model runs only
when a fix is picked (resolve, or the `kestrel.fix` command for clients without resolve)."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ..core import Core, plain
from ..providers.base import ProviderError
from . import NotReady, model_ready

# Listing actions needs no engine: the fix engine (kestrel.edits.*) is imported by the first fix or
# explanation, not at the server's start (docs/design-notes.md#pyserverkestrelcompiled_methodspy).

MAX_DIAGNOSTICS = 10  # actions listed per request
# Why a fix cannot run, as a quick fix says it (a refusal was reported before: see `_refused`).
_FIX_NOT_READY = {"not-open": "the document is no longer open",
                  "no-model": "no model is configured: set kestrel.provider or KESTREL_PROVIDER"}


class QuickFixFeature:
    def __init__(self, core: Core) -> None:
        self.core = core

    def _refused(self, uri: str) -> bool:
        """Checked again when an action runs: a client may send any URI in the action's data."""
        refusal = self.core.refusal(uri)
        if refusal:
            self.core.status.error_once("refused", f"Kestrel: {refusal}")
        return refusal is not None

    def _supports_resolve(self) -> bool:
        caps = self.core.server.client_capabilities.text_document
        support = caps.code_action.resolve_support if caps and caps.code_action else None
        return bool(support and "edit" in (support.properties or []))

    def actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """One "Fix" and one "Explain" per diagnostic; no model call until one is picked."""
        uri = params.text_document.uri
        doc = self.core.documents.get(uri)
        if doc is None or self.core.refusal(uri):
            return []
        lazy_resolve = self._supports_resolve()
        actions = []
        for diag in params.context.diagnostics[:MAX_DIAGNOSTICS]:
            if diag.source == "kestrel":
                continue
            data = {
                "uri": uri, "version": doc.version, "message": diag.message,
                "startLine": diag.range.start.line, "endLine": diag.range.end.line,
                "code": None if diag.code is None else str(diag.code), "source": diag.source,
            }
            short = diag.message.splitlines()[0][:60] if diag.message else "problem"
            fix = types.CodeAction(
                title=f"Fix with Kestrel: {short}", kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                data={**data, "action": "fix"},
            )
            if not lazy_resolve:  # clients without resolve support run the fix as a command when picked
                fix.command = types.Command(title=fix.title, command="kestrel.fix", arguments=[{**data, "action": "fix"}])
            explain = types.CodeAction(
                title="Explain with Kestrel", kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                command=types.Command(title="Explain with Kestrel", command="kestrel.explain", arguments=[data]),
            )
            actions += [fix, explain]
        return actions

    async def _fix_edit(self, data: dict) -> tuple[types.WorkspaceEdit, str]:
        """The fix as a WorkspaceEdit, and who made it (a rule of the diagnostic's, or the model)."""
        from ..edits.quick_fix import Problem, compute_fix_made_by, fix_region

        core = self.core
        uri = data["uri"]
        ready = await model_ready(core, uri)
        if isinstance(ready, NotReady):
            raise ProviderError(_FIX_NOT_READY.get(ready.reason, ready.message))
        doc, provider = ready.doc, ready.provider
        if doc.version != data.get("version"):
            raise ProviderError("the document changed since the fix was offered: ask for the fix again")
        text, version = doc.source, doc.version
        region = fix_region(text, int(data["startLine"]), int(data["endLine"]), doc.language_id or "")
        problem = Problem(data.get("message", ""), data.get("code"), data.get("source"))
        edits, made_by = await compute_fix_made_by(
            provider, text, region, problem, doc.language_id or "", core.documents.path(uri), core.documents.encoding(),
        )
        current = core.documents.get(uri)
        if current is None or current.version != version:
            raise ProviderError("the document changed while the fix was computed: nothing was applied")
        text_edits = [types.TextEdit(
            range=types.Range(start=types.Position(**e["range"]["start"]), end=types.Position(**e["range"]["end"])),
            new_text=e["newText"],
        ) for e in edits]
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=text_edits,
        )]), made_by

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        data = plain(action.data)
        if not isinstance(data, dict) or data.get("action") != "fix" or not self._supports_resolve():
            return action  # (without resolve support the action's command does the work: never twice)
        if self._refused(str(data.get("uri", ""))):
            return action
        try:
            action.edit, made_by = await self._fix_edit(data)
            action.data = {**data, "madeBy": made_by}  # "rule:import", "rule:token", "rule:similar-name" or "model"
        except ProviderError as exc:
            self.core.status.report(exc)
        return action

    async def run_fix(self, data: Any) -> bool:
        data = plain(data)
        if not isinstance(data, dict) or self._refused(str(data.get("uri", ""))):
            return False
        try:
            edit, _ = await self._fix_edit(data)
        except ProviderError as exc:
            self.core.status.report(exc)
            return False
        result = await self.core.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label="Kestrel fix"))
        return bool(result and result.applied)

    async def explain(self, data: Any) -> str | None:
        from ..edits.quick_fix import explain_messages, region_for
        from ..providers.collect import collect

        core = self.core
        data = plain(data)
        if not isinstance(data, dict) or self._refused(str(data.get("uri", ""))):
            return None
        ready = await model_ready(core, str(data.get("uri", "")))
        if isinstance(ready, NotReady):
            why = ready.message if ready.reason == "refused" else "no open document or no model configured"
            core.status.error_once("explain", f"Kestrel: nothing to explain ({why})")
            return None
        doc = ready.doc
        region = region_for(doc.source, int(data["startLine"]), int(data["endLine"]))
        try:
            answer = await collect(ready.provider, explain_messages(
                doc.source, region, data.get("message", ""), doc.language_id or "", core.documents.path(doc.uri)))
        except ProviderError as exc:
            core.status.report(exc)
            return None
        core.show_info(answer)
        return answer
