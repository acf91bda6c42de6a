"""What the engine learned about an endpoint's model, kept between starts: how it ends its blocks
(ending.py) and how fast it reads a prompt (pace.py). Without it every start learns again, and while
the habit is unknown the first multi-line suggestions wait for their stream's end. One JSON file in
the user's private cache, keyed by a hash of the provider kind, the model and the endpoint (the
embedded model's port changes per start: it is keyed as embedded).
Why: docs/design-notes.md#pyserverkestrelcompletionrememberedpy
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
FILE = "endpoints.json"
MAX_ENDPOINTS = 32  # the least recently saved are dropped beyond this


def endpoint_key(kind: str, model: str, base_url: str | None, embedded: bool) -> str:
    """A stable name for one model behind one endpoint; the URL itself is not stored."""
    where = "embedded" if embedded else (base_url or "")
    return hashlib.sha256(f"{kind}\n{model}\n{where}".encode()).hexdigest()[:24]


class Remembered:
    """The file of learned endpoint facts (None: nothing is kept, e.g. no private cache)."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / FILE if folder is not None else None

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def load(self, key: str) -> dict[str, Any]:
        entry = self._read().get(key)
        return entry if isinstance(entry, dict) else {}

    def save(self, key: str, entry: dict[str, Any], now: float) -> None:
        if self.path is None:
            return
        data = self._read()
        data[key] = {**entry, "saved": now}
        kept = sorted(data.items(), key=lambda kv: -float(kv[1].get("saved", 0)) if isinstance(kv[1], dict) else 0)
        tmp = self.path.with_name(f".{FILE}.{os.getpid()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                json.dump(dict(kept[:MAX_ENDPOINTS]), fh)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("could not keep what was learned about the endpoint: %s", exc)
