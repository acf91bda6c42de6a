"""`kestrel-lsp`: stdio by default, `--tcp HOST:PORT` for an editor that connects over a socket
(authenticated with a token file: see `transport/tcp.py`)."""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from pathlib import Path


DEFAULT_MAX_MESSAGE_MB = 64  # above the 50 MB beyond which VS Code stops syncing a file to extensions


def _parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:2087")
    return host.strip("[]") or "127.0.0.1", int(port)


def _positive_int(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("expected a whole number of MiB, at least 1")
    return int(value)


def _check_tcp_host(parser: argparse.ArgumentParser, host: str, port: int, allow_remote: bool) -> None:
    """A host other machines can reach needs --allow-remote, and is announced with a warning."""
    from .transport.tcp import is_loopback

    if is_loopback(host):
        return
    if not allow_remote:
        parser.error(f"--tcp {host}:{port} is reachable from other machines; bind 127.0.0.1, "
                     "or add --allow-remote if you really mean it")
    print(f"kestrel-lsp: WARNING: --tcp {host}:{port} is reachable from other machines and the connection is not "
          "encrypted: the auth token, your code and your API keys cross the network in clear text. "
          "Prefer stdio, or an SSH tunnel to a loopback port.", file=sys.stderr, flush=True)


def _compile_methods() -> int:
    from . import compiled_methods

    if not compiled_methods.compile_package():
        print("kestrel-lsp: some modules could not be byte-compiled: the server starts without their bytecode",
              file=sys.stderr)
    path = compiled_methods.cache_path()
    path.unlink(missing_ok=True)
    cache = compiled_methods.install(path)
    from . import server  # noqa: F401  (what a start imports before it answers `initialize`)

    compiled_methods.uninstall()
    if cache is None or not cache.save(build=True):
        # Only a start-up cost is at stake: the server starts without it (a directory others may
        # write, or one that cannot be written, is not used).
        print(f"kestrel-lsp: the compiled-methods cache was not written ({path}): the server starts without it",
              file=sys.stderr)
        return 0
    print(f"kestrel-lsp: {len(cache.compiled)} compiled methods cached in {path}")
    return 0


def _prestart_local_model() -> None:
    """When the environment leaves Kestrel on its embedded model, the model's child starts now, before
    `initialize`: its imports (~0.35 s), and the load of the model the environment names when it is on
    disk, overlap ours and the editor's handshake. Settings that choose another model replace the
    child; a remote provider ends it unused."""
    from .config import SettingsError, load_settings
    from .local.models import cached_model, runtime_available

    try:
        settings = load_settings()
    except SettingsError:
        return  # reported once the editor's settings are read
    if settings.configured or not settings.local.enabled or not runtime_available():
        return
    from .local import runtime

    local = settings.local
    try:
        runtime.prestart(cached_model(local.model_path, local.model), local.context, local.threads, local.speculative)
    except OSError as exc:  # started again, and reported, when the model is needed
        logging.getLogger(__name__).warning("could not start the local model's process early: %s", exc)


def _parser(version: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kestrel-lsp", description="Kestrel AI coding assistant language server")
    parser.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    parser.add_argument("--tcp", type=_parse_tcp, metavar="HOST:PORT",
                        help="serve one authenticated client over TCP (binds 127.0.0.1 unless a host is given)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="let --tcp bind an address other machines can reach (unencrypted: prefer an SSH tunnel)")
    parser.add_argument("--token-file", type=Path, metavar="PATH",
                        help="where --tcp writes its auth token (default: $XDG_RUNTIME_DIR/kestrel/tcp-PORT.token, "
                             "else ~/.local/state/kestrel/tcp-PORT.token)")
    parser.add_argument("--max-message-mb", type=_positive_int, default=DEFAULT_MAX_MESSAGE_MB, metavar="N",
                        help=f"largest JSON-RPC message read, in MiB; larger ones are skipped with an error "
                             f"(default {DEFAULT_MAX_MESSAGE_MB})")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument("--version", action="version", version=f"kestrel-lsp {version}")
    parser.add_argument("--no-prestart-local", action="store_true",
                        help="do not start the embedded model's process before the editor's settings arrive "
                             "(editors that configure a remote provider pass it: the early start is wasted there)")
    parser.add_argument("--compile-methods", action="store_true",
                        help="compile what every start would (the package's bytecode, kestrel/compiled_methods.py) "
                             "and exit: run after installing")
    return parser


# Read by the openai SDK from the environment and sent with every request to whatever endpoint the
# client is built for, including one a workspace's settings chose (`OPENAI_CUSTOM_HEADERS` can carry an
# `Authorization` header). Kestrel binds each key to its endpoint (keys.py); these bypass that, so
# they are not honoured.
SDK_AMBIENT_VARIABLES = ("OPENAI_CUSTOM_HEADERS", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_ADMIN_KEY",
                         "OPENAI_WEBHOOK_SECRET")


def _drop_sdk_ambient_variables() -> None:
    import os

    dropped = [name for name in SDK_AMBIENT_VARIABLES if os.environ.pop(name, None) is not None]
    if dropped:
        logging.getLogger("kestrel").warning(
            "ignored %s: the openai SDK would send them to any configured endpoint", ", ".join(dropped))


def main(argv: list[str] | None = None) -> None:
    # A start builds objects that live as long as the process (lsprotocol's ~560 classes, the modules):
    # the collector would walk them again and again before `initialize` is answered (~13 % of a start's
    # instructions). It runs again once the server is built, with them frozen out of its walks.
    # docs/design-notes.md#pyserverkestrel__main__py
    gc.disable()
    from . import __version__

    parser = _parser(__version__)
    args = parser.parse_args(argv)
    if args.compile_methods:
        sys.exit(_compile_methods())
    if (args.allow_remote or args.token_file) and not args.tcp:
        parser.error("--allow-remote and --token-file only apply with --tcp")
    if args.tcp:
        _check_tcp_host(parser, *args.tcp, allow_remote=args.allow_remote)

    from . import compiled_methods

    methods = compiled_methods.install()  # a third of the start is attrs compiling the same methods
    from .redact import RedactingFilter

    handler = logging.StreamHandler(sys.stderr)  # stdout carries the protocol
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level, handlers=[handler])
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLevelName(args.log_level)))
    for noisy in ("httpx2", "httpcore2", "openai", "websockets"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    _drop_sdk_ambient_variables()
    if not args.no_prestart_local:
        _prestart_local_model()

    from .server import create_server

    server = create_server()
    if methods is not None:
        methods.save()
    gc.freeze()  # what was built so far lives as long as the server: later collections skip it
    gc.enable()
    max_message_bytes = args.max_message_mb * 1024 * 1024
    if args.tcp:
        from .transport.tcp import serve_tcp
        from .transport.token_file import TokenFileError

        try:
            serve_tcp(server, *args.tcp, token_path=args.token_file and args.token_file.absolute(), max_message_bytes=max_message_bytes)
        except (TokenFileError, OSError) as exc:  # token file refused, port taken, ...
            print(f"kestrel-lsp: error: {exc}", file=sys.stderr)
            sys.exit(1)
    else:
        from .transport.stdio import serve_stdio

        serve_stdio(server, max_message_bytes)


if __name__ == "__main__":
    main()
