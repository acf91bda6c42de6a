"""One module per editor feature: each turns an LSP request into engine calls and the engine's
answer back into LSP types. Features receive the `Core`; none reaches into another. What they
all do first lives here: `model_ready`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import Core
from ..providers.base import Provider


@dataclass(frozen=True)
class Ready:
    """An open document a model may read, and the model to ask."""

    doc: Any  # pygls's TextDocument (`source`, `version`, `language_id`)
    provider: Provider


@dataclass(frozen=True)
class NotReady:
    reason: str  # "refused" (excluded or too large), "not-open" or "no-model"
    message: str  # for the user


async def model_ready(core: Core, uri: str) -> Ready | NotReady:
    """Waits (bounded) until the settings apply, then: may this document reach a model, is it
    open, is there a model? Every feature that sends a document to a model starts here."""
    await core.host.wait_ready()
    refused = core.refusal(uri)
    if refused:
        return NotReady("refused", refused)
    doc = core.documents.get(uri)  # None too when set aside as too large (core.documents)
    if doc is None:
        return NotReady("not-open", "the document is not open")
    provider = core.host.provider
    if provider is None:
        return NotReady("no-model", core.status.message or "no model is configured")
    return Ready(doc, provider)
