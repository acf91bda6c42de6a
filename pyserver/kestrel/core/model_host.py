"""Settings and the active provider: built once off the request path, prewarmed, replaced
when the configuration changes. Features read `host.provider` / `host.settings` per request
and may subscribe to changes (the completion engine drops its streams on a new provider)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import sys
from typing import Any, Callable

from .. import redact
from ..config import (Settings, SettingsError, bind_key, endpoint_for, load_settings_and_keys,
                      missing_key_hint)
from ..keys import BoundKey, Endpoint
from ..providers.base import Provider, ProviderError
from ..providers.reasoning import effort_support
from ..status import StatusReporter
from .embedded import EmbeddedModel
from .payload import plain

log = logging.getLogger(__name__)


def _import_sdk() -> None:
    """Import openai (what creating any provider imports first) with the collector paused, then frozen
    out of its walks: the SDK's ~90 k objects (pydantic models) live as long as the process, and the
    collections their creation set off took ~60-170 ms of the ~0.4 s import (the same pause as the
    start's: docs/design-notes.md#pyserverkestrel__main__py)."""
    if "openai" in sys.modules:  # imported already: a freeze now would keep what is alive (an old provider)
        return
    gc.disable()
    try:
        import openai  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()

# The fields that need a new provider (a new client, socket or child process) when they change.
_TRANSPORT_FIELDS = ("provider", "base_url", "model", "api_key", "http2", "fim_template", "local")
# The fields a provider reads per request: a change reaches the running provider at once (the
# chat panel's effort picker takes effect on the next turn, without a new connection).
_PER_REQUEST_FIELDS = ("effort", "predicted_outputs")


class ModelHost:
    def __init__(self, server: Any, status: StatusReporter) -> None:
        self.status = status
        self.settings = Settings()
        self.effective = self.settings  # what the provider runs with (the local model fills in gaps)
        self.provider: Provider | None = None
        self._ready = asyncio.Event()
        self.embedded = EmbeddedModel(server, status, self._ready)
        self._listeners: list[Callable[[], None]] = []
        self._init_options: dict[str, Any] = {}
        self._changed: dict[str, Any] = {}
        # The client's keys (kestrel/setApiKey, the startup options), each bound to the endpoint it
        # was given for: it goes there and nowhere else (see keys.py). One per endpoint.
        self._client_keys: dict[Endpoint, BoundKey] = {}
        self._background: set[asyncio.Task] = set()
        self._configuring = asyncio.Lock()
        self._pending_configs = 0
        self._missing_key: str | None = None  # which key the active endpoint lacks, and how to set it

    def subscribe(self, listener: Callable[[], None]) -> None:
        """`listener()` runs whenever the provider or the settings change."""
        self._listeners.append(listener)

    def _changed_now(self) -> None:
        for listener in self._listeners:
            listener()

    # -- what the client sends -----------------------------------------------------------
    def initialize(self, options: Any) -> None:
        options = plain(options) if options is not None else {}
        self._init_options = options if isinstance(options, dict) else {}
        section = (self._init_options.get("kestrel") or self._init_options) if self._init_options else {}
        key = section.get("apiKey") if isinstance(section, dict) else None
        if key:
            redact.register_secret(str(key))
            # Bound to the endpoint these same options configure: a later configuration change
            # that points elsewhere does not take the key along.
            self._keep(bind_key(key, self._init_options, "initializationOptions"))

    def start(self) -> None:
        """After `initialized`: build the provider off the request path (importing openai is slow)."""
        self._schedule_configure()

    def configuration_changed(self, settings: Any) -> None:
        changed = plain(settings) if settings is not None else {}
        self._changed = changed if isinstance(changed, dict) else {}
        self._schedule_configure()

    def set_api_key(self, params: Any) -> None:
        """`kestrel/setApiKey {apiKey, provider?, baseUrl?}`: the key is bound to the endpoint that
        `provider`/`baseUrl` name; without them (older clients), to the endpoint configured now.
        A null key forgets the client's key for the endpoint named, or all of them when none is
        named (keys from the environment stay, each bound to its own endpoint)."""
        data = plain(params) if params is not None else {}
        data = data if isinstance(data, dict) else {"apiKey": data}
        key = data.get("apiKey") or data.get("api_key")
        named = {k: data[k] for k in ("provider", "baseUrl", "base_url") if data.get(k)}
        if key:
            key = str(key)
            redact.register_secret(key)
            bound = bind_key(key, named or self._changed or self._init_options, "kestrel/setApiKey")
            if bound is None:
                log.warning("kestrel/setApiKey: the key names no provider and none is configured: it is not used")
            self._keep(bound)
        elif named:
            self._client_keys.pop(endpoint_for(named), None)  # type: ignore[arg-type]
        else:
            self._client_keys.clear()
        self._schedule_configure()

    def _keep(self, key: BoundKey | None) -> None:
        if key is not None:
            self._client_keys[key.endpoint] = key

    # -- applying it ---------------------------------------------------------------------
    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _schedule_configure(self) -> None:
        """Requests arriving from now on wait (bounded) until every scheduled change has applied."""
        self._pending_configs += 1
        self._ready.clear()
        self.spawn(self._configure())

    async def _configure(self) -> None:
        try:
            async with self._configuring:  # changes apply in arrival order, one at a time
                await self._configure_locked()
        finally:
            self._pending_configs -= 1
            if self._pending_configs == 0:  # requests go ahead only once the LAST change applied
                self._ready.set()

    async def _configure_locked(self) -> None:
        # A configuration change carries the client's whole `kestrel` section: it replaces the
        # startup options (so a value can be cleared), on top of the environment.
        sources = (None if self._changed else self._init_options, self._changed)
        try:
            new, offered = load_settings_and_keys(*sources, client_keys=self._client_keys.values())
        except SettingsError as exc:
            self.embedded.not_wanted()  # no model is loaded on settings that do not hold
            self.status.unconfigured(f"Kestrel: invalid settings: {exc}")
            return
        for key in offered:  # every key the server holds is masked in every message it sends
            redact.register_secret(key.secret)
        self._missing_key = missing_key_hint(new, offered)
        old, self.settings = self.settings, new
        transport_changed = self.provider is None or any(
            getattr(old, name) != getattr(new, name) for name in _TRANSPORT_FIELDS
        )
        if transport_changed:
            await self._replace_provider(new)
        else:
            self.effective = dataclasses.replace(self.effective, **{f: getattr(new, f) for f in _PER_REQUEST_FIELDS})
            if self.provider is not None:
                self.provider.settings = self.effective
            self._changed_now()
            if self.provider is not None:
                self.status.key_note(self._missing_key)

    async def _replace_provider(self, settings: Settings) -> None:
        previous, self.provider = self.provider, None
        self._changed_now()
        if previous is not None:
            self.spawn(previous.aclose())
        if self.embedded.running and (settings.configured or not settings.local.enabled or
                                      settings.local != self.effective.local):
            await self.embedded.stop()
        if settings.configured or not settings.local.enabled:
            self.embedded.not_wanted()
        else:
            from ..local.models import runtime_available

            if runtime_available():
                # The provider's SDK (openai: ~0.3 s of imports) loads while the model's child starts.
                warm = asyncio.get_running_loop().run_in_executor(None, _import_sdk)
                settings = await self.embedded.start(settings)
                await warm
                if settings is None:
                    return
        self.effective = settings
        self._changed_now()
        if not settings.configured:
            self.status.unconfigured(
                "Kestrel: no model configured. Set kestrel.provider (or KESTREL_PROVIDER / OPENAI_API_KEY), "
                "or start the mock: python -m kestrel.testing.mock_model"
            )
            return
        from ..providers import create_provider

        # Importing the SDK takes ~0.5 s of CPU: do it off the event loop so the server keeps
        # answering (didOpen, status, cancellations) meanwhile.
        await asyncio.to_thread(_import_sdk)
        try:
            provider = create_provider(settings)
        except (ProviderError, ValueError) as exc:
            self.status.unconfigured(f"Kestrel: {getattr(exc, 'message', exc)}")
            return
        self.provider = provider
        self._changed_now()
        self.status.configured(settings.preset or settings.provider or "", provider.model, provider.connection_state,
                               effort_support(provider.kind, provider.model), note=self._missing_key)
        if self._missing_key:
            log.warning("%s", self._missing_key)
        await provider.prewarm()
        self.status.connection_changed(provider.connection_state)
        log.info("provider ready: %s (%s)", settings.describe(), provider.connection_state)

    # -- what requests wait for ----------------------------------------------------------
    def startup_budget(self) -> float:
        """How long a request may wait for set-up: loading the local model takes a while."""
        return 120.0 if self.settings.local.enabled and not self.settings.configured else 10.0

    async def wait_ready(self, timeout: float | None = None) -> None:
        if not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), self.startup_budget() if timeout is None else timeout)
            except asyncio.TimeoutError:
                pass

    async def aclose(self) -> None:
        if self.provider is not None:
            await self.provider.aclose()
            self.provider = None
        await self.embedded.stop()
