"""The embedded local model: find it, start llama.cpp as a child process, report progress,
and tell requests to wait while the child restarts."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from ..config import Settings
from ..status import StatusReporter
from .progress import WorkDoneProgress

log = logging.getLogger(__name__)


class EmbeddedModel:
    def __init__(self, server: Any, status: StatusReporter, ready: asyncio.Event) -> None:
        self._server = server
        self._status = status
        self._ready = ready  # cleared while the child restarts: requests wait (bounded)
        self.runtime = None  # LocalModelServer while the embedded model runs

    @property
    def running(self) -> bool:
        return self.runtime is not None

    async def start(self, settings: Settings) -> Settings | None:
        """Start the model (once) and return settings that use it; None if it cannot run."""
        from ..local.models import ModelNotFound, resolve_model
        from ..local.runtime import LocalModelServer, LocalRuntimeError

        progress = WorkDoneProgress(self._server, "Kestrel: starting the local model")
        await progress.begin()
        loop = asyncio.get_running_loop()

        def report(message: str, percent: int | None) -> None:  # called from the resolver thread
            loop.call_soon_threadsafe(progress.report, message, percent)

        try:
            model = await asyncio.to_thread(resolve_model, settings.local.model_path, report,
                                          model=settings.local.model)
            progress.report(f"loading {model.path.name}", None)
            if self.runtime is None:
                self.runtime = LocalModelServer(
                    model, n_ctx=settings.local.context, threads=settings.local.threads, on_event=self._event,
                    speculative=settings.local.speculative,
                )
                await self.runtime.start()
        except (ModelNotFound, LocalRuntimeError) as exc:
            self.not_wanted()  # a child started early for a model that cannot be had
            self.runtime = None
            self._status.unconfigured(f"Kestrel: the local model is unavailable: {exc}")
            return None
        finally:
            progress.end()
        rt = self.runtime
        log.info("local model %s (%s) at %s", rt.model.name, rt.model.source, rt.base_url)
        return dataclasses.replace(
            settings, provider="fim", preset="local", base_url=rt.base_url, model=rt.model.name,
            # The child's per-start secret (registered with the redactor): it answers nothing without it.
            api_key=rt.api_key, http2="off", max_retries=1,  # one retry absorbs a pooled socket to a restarted child
        )

    def _event(self, message: str) -> None:
        """Lifecycle of the llama.cpp child: requests wait (bounded) while it restarts."""
        log.warning("local model: %s", message)
        status = self._status
        if message == "restarted":
            status.succeeded()
            status.publish()
            self._ready.set()
        elif "restarting" in message:
            self._ready.clear()
            status.state, status.message = "offline", f"Kestrel: {message}"
            status.publish()
        else:  # gave up: let requests fail fast with the reason
            self._ready.set()
            status.error_once("local", f"Kestrel: {message}")

    async def stop(self) -> None:
        if self.runtime is not None:
            await self.runtime.stop()
            self.runtime = None
        self.not_wanted()

    @staticmethod
    def not_wanted() -> None:
        """The child started at process start in case the embedded model was wanted
        (`runtime.prestart`) ends unused; nothing if there is none."""
        from ..local.runtime import discard_prestarted

        discard_prestarted()

