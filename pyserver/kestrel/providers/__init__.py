"""Model transports behind one small interface (see `base.Provider`)."""

from __future__ import annotations

from ..config import Settings
from .base import CompletionPrompt, Provider, ProviderError, Snippet, StreamStats


def create_provider(settings: Settings) -> Provider:
    """The provider for `settings.provider`; imports only the transport in use."""
    kind = settings.provider
    if kind == "responses-ws":
        from .responses_ws import ResponsesWebSocketProvider

        return ResponsesWebSocketProvider(settings)
    if kind == "responses":
        from .responses_http import ResponsesHttpProvider

        return ResponsesHttpProvider(settings)
    if kind == "chat":
        from .chat import ChatCompletionsProvider

        return ChatCompletionsProvider(settings)
    if kind == "fim":
        from .fim import FimProvider

        return FimProvider(settings)
    raise ProviderError(f"no provider configured (got {kind!r})")


__all__ = ["CompletionPrompt", "Provider", "ProviderError", "Snippet", "StreamStats", "create_provider"]
