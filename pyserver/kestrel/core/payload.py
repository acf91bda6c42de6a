"""Custom `kestrel/*` payloads reach pygls handlers as named tuples: normalise them to dicts."""

from __future__ import annotations

from typing import Any


def plain(value: Any) -> Any:
    """Named tuples (at any depth) become dicts; lists and tuples become lists."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
