"""`kestrel/status` notifications for the client's status bar, and errors shown once.

The status bar wants: busy/idle, provider and model, connection state, the last
time-to-first-token and tokens/s. Errors go to `window/showMessage` once per kind until
a request succeeds again, so a dead model server does not flood the editor.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from .providers.base import ProviderError, StreamStats
from .providers.reasoning import EffortSupport

log = logging.getLogger(__name__)

_NO_MODEL_EFFORT = EffortSupport(False, "No model configured: the effort setting has no effect")


class StatusReporter:
    def __init__(self, notify: Callable[[str, Any], None], show_message: Callable[[str, int], None]) -> None:
        self._notify = notify
        self._show = show_message
        self.busy = 0
        self.state = "starting"
        self.provider = ""
        self.model = ""
        self.connection = "idle"
        self.last_ttft_ms: float | None = None
        self.last_tokens_per_s: float | None = None
        self.message: str | None = None
        # What `kestrel.effort` does with this provider and model: the chat panel's effort picker is
        # disabled, with the note as its tooltip, where it would do nothing.
        self.effort = _NO_MODEL_EFFORT
        self._key_note: str | None = None  # shown while ready: which API key this endpoint lacks
        self._shown_errors: set[str] = set()
        self._scheduled: asyncio.TimerHandle | None = None

    def snapshot(self) -> dict[str, Any]:
        return {
            "state": "busy" if self.busy and self.state == "ready" else self.state,
            "busy": self.busy > 0,
            "provider": self.provider,
            "model": self.model,
            "connection": self.connection,
            "ttftMs": None if self.last_ttft_ms is None else round(self.last_ttft_ms, 1),
            "tokensPerSec": None if self.last_tokens_per_s is None else round(self.last_tokens_per_s, 1),
            "message": self.message,
            "effortSupported": self.effort.supported,
            "effortNote": self.effort.note,
        }

    def publish_soon(self, delay: float = 0.005) -> None:
        """Coalesce status updates off the hot path: a response never waits behind a status
        notification, and a keystroke storm sends a few updates, not hundreds."""
        if self._scheduled is None:
            self._scheduled = asyncio.get_running_loop().call_later(delay, self._publish_scheduled)

    def _publish_scheduled(self) -> None:
        self._scheduled = None
        self.publish()

    def publish(self) -> None:
        try:
            self._notify("kestrel/status", self.snapshot())
        except Exception:  # the client went away: nothing to tell
            log.debug("status notify failed", exc_info=True)

    def configured(self, provider: str, model: str, connection: str, effort: EffortSupport,
                   note: str | None = None) -> None:
        """Ready; `note` says what is missing all the same (no API key bound to this endpoint);
        `effort`: whether the effort setting reaches this model (`providers.reasoning.effort_support`)."""
        self.provider, self.model, self.connection = provider, model, connection
        self.effort = effort
        self.state, self.message, self._key_note = "ready", note, note
        self.publish()

    def key_note(self, note: str | None) -> None:
        """The provider stays, but which key it lacks changed (a key arrived for another endpoint)."""
        if note == self._key_note:
            return
        self._key_note = note
        if self.state == "ready":
            self.message = note
            self.publish()

    def unconfigured(self, reason: str) -> None:
        self.provider, self.model, self.state, self.message = "", "", "unconfigured", reason
        self.effort = _NO_MODEL_EFFORT
        self.publish()
        self.error_once("config", reason)

    def connection_changed(self, connection: str) -> None:
        if connection != self.connection:
            self.connection = connection
            self.publish()

    # CompletionObserver
    def generation_started(self) -> None:
        self.busy += 1
        if self.busy == 1:
            self.publish_soon()

    def generation_finished(self, stats: StreamStats, error: ProviderError | None) -> None:
        self.busy = max(self.busy - 1, 0)
        if error is None:
            if stats.ttft_ms is not None:
                self.last_ttft_ms = stats.ttft_ms
                self.last_tokens_per_s = stats.tokens_per_s or self.last_tokens_per_s
            self.succeeded()
        else:
            self.failed(error)
        self.publish_soon()

    def succeeded(self) -> None:
        if self.state in ("error", "offline"):
            self.state, self.message = "ready", self._key_note
        self._shown_errors.clear()

    def failed(self, error: ProviderError) -> None:
        self.state = "offline" if error.kind == "unavailable" else "error"
        self.message = error.message
        self.error_once(error.kind, f"Kestrel: {error.message}")

    def report(self, error: ProviderError) -> None:
        """A request failed outside a completion stream: record it and tell the client now."""
        self.failed(error)
        self.publish()

    def error_once(self, kind: str, message: str) -> None:
        if kind in self._shown_errors:
            return
        self._shown_errors.add(kind)
        log.warning("%s", message)
        try:
            self._show(message, 1)  # MessageType.Error
        except Exception:
            log.debug("showMessage failed", exc_info=True)
