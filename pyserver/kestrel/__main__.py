"""`kestrel-lsp`: stdio by default, `--tcp HOST:PORT` for editors that connect over a socket."""

from __future__ import annotations

import argparse
import logging
import sys


def _parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:2087")
    return host or "127.0.0.1", int(port)


def main(argv: list[str] | None = None) -> None:
    from . import __version__

    parser = argparse.ArgumentParser(prog="kestrel-lsp", description="Kestrel AI coding assistant language server")
    parser.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    parser.add_argument("--tcp", type=_parse_tcp, metavar="HOST:PORT", help="serve over TCP (binds 127.0.0.1 unless a host is given)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument("--version", action="version", version=f"kestrel-lsp {__version__}")
    args = parser.parse_args(argv)

    from .redact import RedactingFilter

    handler = logging.StreamHandler(sys.stderr)  # stdout carries the protocol
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level, handlers=[handler])
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLevelName(args.log_level)))
    for noisy in ("httpx2", "httpcore2", "openai", "websockets"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    from .server import create_server

    server = create_server()
    if args.tcp:
        server.start_tcp(*args.tcp)
    else:
        server.start_io()


if __name__ == "__main__":
    main()
