"""The small interface every model transport implements, and the errors it raises.

Providers talk to models and nothing else: they get a ready prompt (`CompletionPrompt`
or chat messages), stream text deltas back, and translate transport failures into
`ProviderError`s with a user-facing message. They never see LSP types.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AsyncIterator, Protocol

if TYPE_CHECKING:
    from ..config import Settings


@dataclass(frozen=True)
class Snippet:
    """Context taken from another open document."""

    path: str
    text: str


@dataclass(frozen=True)
class CompletionPrompt:
    """What an inline completion needs from a model, independent of the transport."""

    prefix: str
    suffix: str
    language: str
    path: str
    snippets: tuple[Snippet, ...] = ()
    # The workspace folder holding the file, as the editor names it: the repository name a family's
    # repository format starts with when snippets from other files are sent ("" when none).
    repo: str = ""
    max_tokens: int = 160
    multiline: bool = True
    stop: tuple[str, ...] = ()
    top_logprobs: int = 0  # > 0: ask for that many alternatives per token (see StreamStats.tokens)
    # The start of the answer, already written: the model goes on from it (a fim template puts it
    # after the middle marker, where the model's own tokens go). Only `fim` providers take it.
    answered: str = ""


_opened = [0]  # StreamStats made in this process so far: each model stream has one


def _next_stream() -> int:
    _opened[0] += 1
    return _opened[0]


def streams_opened() -> int:
    """How many model streams this process has opened (a later stream's `seq` is higher)."""
    return _opened[0]


@dataclass
class StreamStats:
    """Filled in by a provider while it streams, read by the status reporter."""

    started: float = field(default_factory=time.perf_counter)
    first_token: float | None = None
    finished: float | None = None
    chunks: int = 0
    stop_reason: str | None = None  # "stop": the model ended by itself; "length": the token cap
    # With `CompletionPrompt.top_logprobs`: each streamed token's text and its alternatives' log
    # probabilities ({text: logprob}, the chosen one included), when the endpoint returns them.
    tokens: list[tuple[str, dict[str, float]]] = field(default_factory=list)
    # With `tools`: the calls the model made through the API's native tool calling, in order, in the
    # API's shape ({"id", "type": "function", "function": {"name", "arguments": JSON text}}).
    tool_calls: list[dict] = field(default_factory=list)
    seq: int = field(default_factory=_next_stream)  # its place among the process's streams

    def mark_delta(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter()
        self.chunks += 1

    @property
    def ttft_ms(self) -> float | None:
        return None if self.first_token is None else (self.first_token - self.started) * 1000

    @property
    def tokens_per_s(self) -> float | None:
        if self.first_token is None or self.finished is None or self.chunks < 2:
            return None
        span = self.finished - self.first_token
        return (self.chunks - 1) / span if span > 0 else None


class ProviderError(Exception):
    """A model call failed. `message` is safe to show (never contains a key)."""

    kind = "error"
    retryable = False

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class AuthError(ProviderError):
    kind = "auth"


class RateLimitError(ProviderError):
    kind = "rate_limit"
    retryable = True


class UnavailableError(ProviderError):
    kind = "unavailable"
    retryable = True


class StreamBrokenError(ProviderError):
    """The stream died mid-way (dropped socket, malformed event, stall)."""

    kind = "stream"
    retryable = True


class WebSocketRefusedError(ProviderError):
    """The WebSocket handshake was refused (HTTP 426, proxy): fall back to HTTP."""

    kind = "ws_refused"


class Provider(Protocol):
    kind: str
    model: str
    native_tools: bool  # `chat` takes `tools` (an agent still checks that the model uses them)
    settings: "Settings"  # read per request (effort...): the host swaps in a changed one (core.model_host)

    @property
    def connection_state(self) -> str: ...

    async def prewarm(self) -> None:
        """Open connections ahead of the first request (best effort, never raises)."""

    def complete(self, prompt: CompletionPrompt, stats: StreamStats) -> AsyncIterator[str]:
        """Stream the text to insert at the cursor. Cancelling the consumer closes upstream."""

    def chat(self, messages: list[dict], stats: StreamStats, *, max_tokens: int | None = None,
             deterministic: bool = False, tools: list[dict] | None = None) -> AsyncIterator[str]:
        """Stream an assistant answer to chat-style messages (`deterministic`: greedy where the
        model takes a temperature, for fixes and edits), at `settings.effort` where the model
        takes a reasoning effort (providers.reasoning). `tools` (Chat Completions' function tools)
        only where `native_tools` is true: the calls land in `stats.tool_calls`."""

    async def aclose(self) -> None: ...
