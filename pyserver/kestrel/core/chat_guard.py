"""What a chat turn or a steer must not send, checked before anything reads the messages: text
of an excluded document (secrets, excludeGlobs; see `context.excluded_text`), or more text than
any document may have (`MAX_DOCUMENT_CHARS`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..context.excluded_text import excluded_source, message_chars
from ..context.exclusion import is_excluded_path, linked_to_excluded
from .documents import MAX_DOCUMENT_CHARS, too_large_message

if TYPE_CHECKING:
    from . import Core


def cannot_start(core: Core, messages: list[Any]) -> str | None:
    """Why a turn with `messages` cannot go to a model now: text it must not send, or no model."""
    return refusal(core, messages) or (None if core.host.provider is not None
                                        else core.status.message or "no model is configured")


def refusal(core: Core, messages: list[Any]) -> str | None:
    """Why these messages may not go to a model (a message for the user), or None."""
    chars = message_chars(messages)
    if chars > MAX_DOCUMENT_CHARS:
        return too_large_message("this chat message", chars)
    globs = core.host.settings.completion.exclude_globs
    documents = core.documents
    excluded, others = [], []
    for uri, text in documents.open_documents():
        if core.excluded(uri):
            excluded.append((documents.path(uri), text))
        else:
            others.append(text)
    def named_excluded(path: str) -> bool:
        """A path an attachment's label names: excluded by its name, or a workspace file that links to one."""
        return is_excluded_path(path, globs) or any(
            linked_to_excluded(os.path.join(root, path), globs) for root in documents.folder_paths())

    source = excluded_source(messages, excluded, others, named_excluded)
    if source is None:
        return None
    return (f"this message contains text from {source}, which Kestrel never sends to a model "
            "(secret files and kestrel.completion.excludeGlobs): remove it and send again")
