"""A local, deterministic, OpenAI-compatible mock model server.

Used by Kestrel's tests and benchmarks, and shipped so that users can try
Kestrel without an API key::

    kestrel-mock-model --port 8765 --tps 200
    # MOCK_READY http://127.0.0.1:8765/v1

It is a raw ASGI application served by hypercorn, so one port speaks
HTTP/1.1, HTTP/2 (cleartext with prior knowledge, or h2 via ALPN when a
certificate is given) and WebSocket.

Endpoints (relative to ``base_url`` = ``http://HOST:PORT/v1``):

* ``GET  /v1/models``                 model list (cheap, used for prewarm)
* ``POST /v1/chat/completions``        stream (SSE) and non-stream
* ``POST /v1/completions``             legacy completions, honours ``stop``
* ``POST /v1/responses``               Responses API, SSE and non-stream
* ``WS   /v1/responses``               Responses WebSocket mode (lanes via
  ``stream_id``, ``generate: false`` prewarm, per-connection
  ``previous_response_id`` cache, native ``response.steer``)
* ``GET  /_mock/stats``, ``GET|POST /_mock/config``, ``POST /_mock/reset``

Python API::

    with MockModelServer(text="print('hi')\\n", tps=500) as mock:
        client = AsyncOpenAI(base_url=mock.base_url, api_key="test")
        ...
        mock.configure(fault="429", retry_after=2)
        mock.stats()["tokens_sent"]

Modules: ``script`` (what to answer: text, TTFT, rate), ``state`` (config,
counters, fault budget), ``faults`` (injected errors, connection aborts),
``streaming`` (paced token pump + the HTTP generation skeleton), one module per
wire protocol (``chat``, ``completions`` over ``choices``; ``responses_http``
and ``responses_ws`` + ``steering`` over ``responses_events``), ``app`` (ASGI
router), ``server`` (hypercorn runner) and ``cli`` (``main``).
"""

from __future__ import annotations

from .app import MockModelApp
from .cli import main
from .script import DEFAULT_CONFIG, DEFAULT_TEXT, tokenize
from .server import MockModelServer

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_TEXT",
    "MockModelServer",
    "MockModelApp",
    "tokenize",
    "main",
]
