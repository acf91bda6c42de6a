"""The one `AsyncOpenAI` client a provider uses, plus the shared streaming helpers.

Every byte to a model goes through the official SDK (auth, retries, status errors, the connection
pool); the hot path reads the SSE body with `with_streaming_response` + `iter_lines()` + `json.loads`.
Leaving the `async with` cancels: on HTTP/2 only the stream is reset; on HTTP/1.1 the connection
closes and a new one is opened in the background. Why: docs/design-notes.md#pyserverkestrelprovidersopenai_httppy
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, AsyncIterator
from urllib.parse import urlsplit

from ..config import Settings
from .base import (
    AuthError,
    ProviderError,
    RateLimitError,
    StreamBrokenError,
    UnavailableError,
)

if TYPE_CHECKING:  # importing openai costs ~0.5 s: only ever at first use
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

_NO_KEY = "kestrel-no-key"  # local servers need no key, but the SDK insists on one


def make_client(settings: Settings) -> "AsyncOpenAI":
    import httpx2
    from openai import AsyncOpenAI, DefaultAsyncHttpx2Client

    http1, http2 = settings.use_http2()
    if http2:
        from .h2_cancel import install

        install()
    timeout = httpx2.Timeout(settings.request_timeout_s, connect=5.0)
    # Proxies (HTTPS_PROXY / NO_PROXY) and SSL_CERT_FILE come from the environment (trust_env);
    # TLS verification is always on.
    extra: dict[str, Any] = {"verify": tls_context(settings)} if settings.ca_bundle else {}
    http_client = DefaultAsyncHttpx2Client(
        http1=http1,
        http2=http2,
        timeout=timeout,
        **extra,
        limits=httpx2.Limits(max_connections=64, max_keepalive_connections=16, keepalive_expiry=120),
    )
    return AsyncOpenAI(
        api_key=settings.api_key or _NO_KEY,
        base_url=settings.base_url,
        max_retries=settings.max_retries,
        timeout=timeout,
        http_client=http_client,
    )


def tls_context(settings: Settings) -> Any:
    """A fresh verifying SSLContext: the system's CAs plus the configured bundle (a corporate CA is
    added, as documented; `create_default_context(cafile=...)` alone would drop the system's list).
    Fresh each time: httpx2 mutates its context for HTTP/2 ALPN, which would break a WebSocket
    sharing it."""
    import ssl

    context = ssl.create_default_context()
    if settings.ca_bundle:
        context.load_verify_locations(cafile=settings.ca_bundle)
    return context


def _tls_failure(exc: BaseException) -> bool:
    import ssl

    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def translate_error(exc: BaseException) -> ProviderError:
    """Map SDK/transport exceptions to a ProviderError with a message safe to show."""
    import openai

    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return AuthError("the model provider rejected the API key: set a valid key (Kestrel: Set API Key or OPENAI_API_KEY)")
    if isinstance(exc, openai.RateLimitError):
        retry_after = _retry_after(exc)
        hint = f" (retry after {retry_after:g}s)" if retry_after else ""
        return RateLimitError(f"the model provider is rate limiting requests{hint}", retry_after=retry_after)
    if isinstance(exc, openai.APITimeoutError):
        return UnavailableError("the model did not answer in time")
    if _tls_failure(exc):
        return ProviderError("TLS certificate verification failed: add your CA with kestrel.caBundle or SSL_CERT_FILE")
    if isinstance(exc, openai.APIConnectionError):
        return UnavailableError("cannot reach the model server: check the base URL and that it is running")
    if isinstance(exc, openai.NotFoundError):
        return ProviderError("the model or endpoint was not found: check the model name and base URL")
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code >= 500:
            return UnavailableError(f"the model server failed (HTTP {exc.status_code})")
        return ProviderError(f"the model server refused the request (HTTP {exc.status_code})")
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return StreamBrokenError("the model sent a malformed event")
    name = type(exc).__name__
    if "Timeout" in name:
        return UnavailableError("the model stopped sending (timed out)")
    if any(s in name for s in ("RemoteProtocol", "ReadError", "ConnectionClosed", "StreamReset", "Protocol")):
        return StreamBrokenError("the connection to the model dropped mid-stream")
    return ProviderError(f"model call failed ({name})")


def _retry_after(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


def is_loopback(base_url: str | None) -> bool:
    host = urlsplit(base_url or "").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpStreamer:
    """Shared by the HTTP providers: stream SSE `data:` payloads through the SDK."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: AsyncOpenAI | None = None
        self._completion_client: AsyncOpenAI | None = None
        self._replenishing: asyncio.Task | None = None
        self.last_http_version: str | None = None
        self.state = "idle"
        self._closed = False

    @property
    def client(self) -> "AsyncOpenAI":
        if self._client is None:
            self._client = make_client(self.settings)
        return self._client

    @property
    def completion_client(self) -> "AsyncOpenAI":
        """Same connection pool, no retries: a failed inline completion is simply asked again at
        the next keystroke, while a retry would sleep through `retry-after` for a stale answer."""
        if self._completion_client is None:
            self._completion_client = self.client.with_options(max_retries=0)
        return self._completion_client

    async def prewarm(self) -> None:
        """Open (and TLS-handshake) a pooled connection before the first keystroke."""
        try:
            await self.client.with_options(max_retries=0, timeout=5.0).models.list()
            self.state = "connected"
        except Exception as exc:  # best effort: a server without /models still works
            err = translate_error(exc)
            log.info("prewarm: %s", err.message)
            self.state = "offline" if isinstance(err, UnavailableError) else "connected"

    @asynccontextmanager
    async def sse(self, resource: Any, **params: Any) -> AsyncIterator[AsyncIterator[dict]]:
        """Yield an iterator of decoded SSE events for `resource.with_streaming_response.create`."""
        finished = False
        try:
            async with resource.with_streaming_response.create(stream=True, **params) as response:
                self.last_http_version = response.http_response.http_version
                self.state = "connected"

                lines = response.iter_lines()

                async def events() -> AsyncIterator[dict]:
                    nonlocal finished
                    async for line in lines:
                        if not line.startswith("data:"):
                            continue
                        data = line[5:].strip()
                        if data == "[DONE]":
                            finished = True
                            return
                        event = json.loads(data)
                        if isinstance(event, dict) and event.get("error"):
                            raise StreamBrokenError(_error_message(event["error"]))
                        yield event
                    finished = True

                yield events()
                if finished:
                    # Read to the end of the body (after [DONE] or a terminal event): an
                    # HTTP/1.1 connection only goes back to the pool once its body is consumed.
                    async for _ in lines:
                        pass
        except (asyncio.CancelledError, GeneratorExit, ProviderError):
            raise
        except Exception as exc:
            err = translate_error(exc)
            if isinstance(err, UnavailableError):
                self.state = "offline"
            raise err from None
        finally:
            if not finished:
                self._after_abort()

    def _after_abort(self) -> None:
        """An abandoned HTTP/1.1 stream took its connection with it: open a spare one now.

        Not to a server on this machine: a connection there costs nothing to open, and the
        request that opens it (`GET /models`) waits for the model in llama.cpp's Python server,
        which then interrupts whatever stream is running (the user's next completion)."""
        if self.last_http_version == "HTTP/2" or self._client is None or self._closed:
            return
        if is_loopback(self.settings.base_url):
            return
        if self._replenishing is None or self._replenishing.done():
            try:
                self._replenishing = asyncio.get_running_loop().create_task(self.prewarm())
            except RuntimeError:
                pass

    async def aclose(self) -> None:
        self._closed = True
        if self._replenishing is not None:
            self._replenishing.cancel()
        if self._client is not None:
            await self._client.close()


class HttpProvider:
    """What the HTTP transports share: one streamer (client + pool), prewarm, close."""

    kind = "http"
    native_tools = False  # Chat Completions' function tools: its provider says so

    def __init__(self, settings: Settings, http: HttpStreamer | None = None) -> None:
        self.settings = settings
        self.model = settings.model or ""
        self.http = http or HttpStreamer(settings)

    @property
    def connection_state(self) -> str:
        return self.http.state

    async def prewarm(self) -> None:
        await self.http.prewarm()

    async def aclose(self) -> None:
        await self.http.aclose()


def _error_message(error: Any) -> str:
    if isinstance(error, dict):
        return f"the model reported an error: {error.get('message') or error.get('code') or 'unknown'}"
    return "the model reported an error"
