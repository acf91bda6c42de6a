"""A cache of the methods attrs and dataclasses generate while the server starts: lsprotocol's ~570
classes get their `__init__`, `__eq__`, `__repr__` written as source and compiled at import, a fifth of
the start, the same text every time (and ~190 dataclass methods another ~10 ms). The code is kept
with marshal next to this package's `.pyc` files and read back on the next start; a file or directory
another user owns, or that others can write, is not read, and nothing is written where Python writes
no bytecode unless asked (`kestrel-lsp --compile-methods`, run by `make setup` and the extension's
install). Why: docs/design-notes.md#pyserverkestrelcompiled_methodspy
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
from pathlib import Path
from types import CodeType
from typing import Any

_BUILTIN_COMPILE = compile
_BUILTIN_EXEC = exec


class CompiledMethods:
    """Serves attrs' `compile()` calls from the cache file; `save()` writes it once, when absent."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cached: dict[bytes, CodeType] = _read(path)
        self.compiled: dict[bytes, CodeType] = {}

    def compile(self, source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not isinstance(source, str) or not isinstance(filename, str):
            return _BUILTIN_COMPILE(source, filename, mode, *args, **kwargs)
        key = hashlib.blake2b(f"{mode}\0{filename}\0{source}".encode(), digest_size=16).digest()
        code = self.cached.get(key)
        if code is None:
            code = self.compiled[key] = _BUILTIN_COMPILE(source, filename, mode)
        return code

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """`exec` as the dataclasses module calls it (source text, globals, namespace): the text's code
        from the cache."""
        code = self.compile(source, "<string>", "exec") if isinstance(source, str) else source
        _BUILTIN_EXEC(code, globals, locals)

    def save(self, build: bool = False) -> bool:
        """Write the cache if there was none (never rewritten: each start would miss a few per-process
        hashes and rewrite it for nothing), where Python writes bytecode; `build`: after an install,
        wherever. False when nothing was written."""
        if not build and (self.cached or sys.dont_write_bytecode):
            return False
        if build:
            self.path.parent.mkdir(mode=0o755, exist_ok=True)
        if not self.compiled or not _ours(self.path.parent):
            return False
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "wb") as f:
                marshal.dump(self.compiled, f)
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)
            return False
        return True


def cache_path() -> Path:
    """Named after the attrs installed (its generated text changes with it), read off its module
    file: `attr.__version__` goes through importlib.metadata, which costs every start ~10 ms."""
    import attr._make as attrs_make

    st = os.stat(attrs_make.__file__)
    attrs_id = f"{st.st_size:x}-{st.st_mtime_ns:x}"
    return Path(__file__).parent / "__pycache__" / f"attrs-methods.{sys.implementation.cache_tag}.attrs-{attrs_id}.marshal"


def compile_package() -> bool:
    """Write the bytecode of every module of this package (what pip does when it installs a wheel). An
    editable install under PYTHONDONTWRITEBYTECODE=1 otherwise compiles ~60 modules at every start."""
    import compileall

    return bool(compileall.compile_dir(Path(__file__).parent, quiet=1))


def install(path: Path | None = None) -> CompiledMethods | None:
    """Serve attrs' compiles, and the dataclasses module's, from the cache from now on (call before
    lsprotocol and Kestrel's own modules are imported)."""
    try:
        import attr._make as attrs_make
    except ImportError:
        return None
    import dataclasses

    cache = CompiledMethods(path or cache_path())
    attrs_make.compile = cache.compile  # the module's own name shadows the builtin it calls
    dataclasses.exec = cache.exec  # ~190 generated methods at start (Kestrel's settings, pygls, asyncio)
    return cache


def uninstall() -> None:
    import dataclasses

    import attr._make as attrs_make

    attrs_make.__dict__.pop("compile", None)
    dataclasses.__dict__.pop("exec", None)


def _ours(path: Path) -> bool:
    """Owned by us and writable by nobody else."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not stat.S_ISLNK(st.st_mode)


def _read(path: Path) -> dict[bytes, CodeType]:
    if not (_ours(path.parent) and _ours(path)):
        return {}
    try:
        # Read whole, then unmarshalled: `marshal.load(f)` reads each object through the file (~50 ms
        # for this ~1.4 MB of code against ~5 ms).
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, bytes) and isinstance(v, CodeType)}

