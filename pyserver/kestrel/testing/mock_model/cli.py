"""``kestrel-mock-model`` / ``python -m kestrel.testing.mock_model``: prints ``MOCK_READY <base_url>``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from typing import Any, Optional

from .server import MockModelServer


def _parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="kestrel-mock-model", description="Local OpenAI-compatible mock model server.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--ttft-ms", type=float, default=0.0, help="delay before the first token (ms)")
    p.add_argument("--tps", type=float, default=0.0, help="tokens per second (0 = unthrottled)")
    p.add_argument("--text", default=None, help="default output text")
    p.add_argument("--text-file", default=None, help="read the default output text from a file")
    p.add_argument("--tokens", type=int, default=None, help="emit N filler tokens instead of --text")
    p.add_argument("--model", default=None, help="default model name")
    p.add_argument("--rules", default=None, help='JSON list of {"match": ..., "text": ...}')
    p.add_argument("--config", default=None, help="JSON object (or @file) merged into the config")
    p.add_argument("--no-steering", action="store_true", help="reject response.steer")
    p.add_argument("--certfile", default=None)
    p.add_argument("--keyfile", default=None)
    p.add_argument("--log-level", default="WARNING")
    return p.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING), stream=sys.stderr)
    cfg: dict[str, Any] = {"ttft_ms": args.ttft_ms, "tps": args.tps}
    if args.config:
        raw = args.config
        if raw.startswith("@"):
            with open(raw[1:], encoding="utf-8") as f:
                raw = f.read()
        cfg.update(json.loads(raw))
    if args.text is not None:
        cfg["text"] = args.text
    if args.text_file:
        with open(args.text_file, encoding="utf-8") as f:
            cfg["text"] = f.read()
    if args.tokens is not None:
        cfg["tokens"] = args.tokens
    if args.model:
        cfg["model"] = args.model
        cfg["models"] = [args.model]
    if args.rules:
        cfg["rules"] = json.loads(args.rules)
    if args.no_steering:
        cfg["steering"] = False
    server = MockModelServer(args.host, args.port, certfile=args.certfile, keyfile=args.keyfile, config=cfg)

    async def run() -> None:
        loop = asyncio.get_running_loop()

        def ready() -> None:
            # Signal handlers before the READY line: whoever reads it may stop the mock at once
            # (SIGTERM right after the first request), and it must still exit cleanly.
            shutdown = server._shutdown
            assert shutdown is not None  # set by _serve before it starts serving
            for signame in ("SIGINT", "SIGTERM"):
                try:
                    loop.add_signal_handler(getattr(signal, signame), shutdown.set)
                except (NotImplementedError, AttributeError, RuntimeError):  # pragma: no cover
                    signal.signal(getattr(signal, signame), lambda *_: loop.call_soon_threadsafe(shutdown.set))
            sys.stdout.write(f"MOCK_READY {server.base_url}\n")
            sys.stdout.flush()

        await server._serve(ready)

    try:
        asyncio.run(run())
    except KeyboardInterrupt:  # pragma: no cover
        pass
    return 0
