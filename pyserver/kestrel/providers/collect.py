"""A provider's chat answer as one string, for callers that check the whole answer before
anything reaches the editor (quick fixes, an inline edit's retry, next edit suggestions)."""

from __future__ import annotations

from .base import Provider, StreamStats


async def collect(provider: Provider, messages: list[dict], prediction: str | None = None,
                  deterministic: bool = False) -> str:
    stats = StreamStats()
    opts: dict = {"deterministic": True} if deterministic else {}
    if prediction:
        opts["prediction"] = prediction
    stream = provider.chat(messages, stats, **opts)
    return "".join([chunk async for chunk in stream])
