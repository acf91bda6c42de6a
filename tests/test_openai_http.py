"""The HTTP streamer for OpenAI-compatible endpoints (kestrel.providers.openai_http). TLS and proxies
are in tests/test_network_trust.py."""

from __future__ import annotations


def test_no_spare_connection_is_opened_to_a_model_server_on_this_machine():
    """After an abandoned HTTP/1.1 stream a spare connection is opened (GET /models) to a remote
    server; a local llama.cpp Python server would interrupt its running stream for that request."""
    import asyncio

    from kestrel.config import Settings
    from kestrel.providers.openai_http import HttpStreamer, is_loopback

    assert is_loopback("http://127.0.0.1:8080/v1") and is_loopback("http://localhost:11434/v1")
    assert is_loopback("http://[::1]:8000/v1") and not is_loopback("https://api.groq.com/openai/v1")

    async def spare_after_abort(base_url):
        streamer = HttpStreamer(Settings(provider="chat", base_url=base_url, model="m", api_key="k"))
        streamer.client  # the pool exists
        streamer._after_abort()
        opened = streamer._replenishing is not None
        await streamer.aclose()
        return opened

    assert not asyncio.run(spare_after_abort("http://127.0.0.1:9/v1"))
    assert asyncio.run(spare_after_abort("http://192.0.2.1:9/v1"))  # TEST-NET: never answers
