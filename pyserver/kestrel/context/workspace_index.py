"""The workspace's Python, TypeScript and JavaScript modules: where an imported one lives and its
outline, cached by (mtime, size) or open-document version (unsaved edits win). One index per server,
shared by everything that needs to know the user's code. Only files inside a workspace folder are
read: symlinks out of it are not followed, secret files and excludeGlobs are skipped, and so are
files over MAX_FILE_BYTES.
Why: docs/design-notes.md#pyserverkestrelcontextworkspace_indexpy
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .exclusion import is_excluded
from .python_outline import Outline, outline
from .ts_outline import TS_SUFFIXES, outline_ts

MAX_FILE_BYTES = 1_000_000
MAX_SCANNED_FILES = 20_000  # the background scan stops here (a monorepo is indexed on demand beyond)
# Folders the scan never enters: build output, dependencies and environments are not the user's code.
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "dist", "build", "venv", "env", "target"})
MAX_REEXPORT_DEPTH = 4  # `pkg/__init__.py` re-exports from `.core`, which re-exports from `.core.array`...
SOURCE_ROOTS = ("", "src")  # a package lives at the folder's top or in its src/ layout
INDEXED_SUFFIXES = (".py", *TS_SUFFIXES)
# `./x.js` in TypeScript source names `./x.ts`; an extensionless specifier tries these in order.
_TS_FOR_JS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_TS_TRIES = (".ts", ".tsx", ".d.ts", ".mts", ".js", ".jsx", ".mjs")


@dataclass(frozen=True)
class Located:
    """A definition found in the workspace."""

    name: str  # as its module spells it
    path: str  # the defining file, relative to its workspace folder (what the model is shown)
    text: str  # its outline
    header: str  # its first line, when the budget has no room for the outline


class WorkspaceIndex:
    def __init__(self, open_text: Callable[[Path], tuple[object, str] | None] | None = None) -> None:
        """`open_text(path)`: (version, text) of the open document at that path, or None."""
        self._roots: tuple[Path, ...] = ()
        self._open_text = open_text or (lambda path: None)
        self._outlines: dict[Path, tuple[object, Outline]] = {}
        self._lock = threading.Lock()  # outlines are built in worker threads
        self.exclude_globs: tuple[str, ...] = ()
        self.generation = 0  # bumped when what may be read changes: resolutions made before are stale

    def set_exclusions(self, globs: tuple[str, ...]) -> None:
        """The user's excludeGlobs; when they change, every outline is read again under the new ones."""
        globs = tuple(globs)
        if globs != self.exclude_globs:
            with self._lock:
                self.exclude_globs = globs
                self._outlines.clear()
                self.generation += 1

    def set_roots(self, roots: list[str]) -> None:
        resolved = []
        for root in roots:
            try:
                path = Path(root).resolve()
            except (OSError, RuntimeError):
                continue
            if path.is_dir() and path != Path(path.anchor):  # never index a whole disk
                resolved.append(path)
        roots = tuple(sorted(set(resolved), key=lambda p: len(str(p)), reverse=True))
        if roots != self._roots:
            with self._lock:
                self._roots = roots
                self.generation += 1  # an import may now resolve elsewhere (or at all)

    @property
    def roots(self) -> tuple[Path, ...]:
        return self._roots

    # -- where things are ------------------------------------------------------------------
    def root_of(self, path: Path) -> Path | None:
        for root in self._roots:
            if path == root or root in path.parents:
                return root
        return None

    def _readable(self, path: Path) -> Path | None:
        """The real path of a workspace file Kestrel may read, or None."""
        try:
            real = path.resolve()
            if not real.is_file() or real.stat().st_size > MAX_FILE_BYTES:
                return None
        except (OSError, RuntimeError):
            return None
        root = self.root_of(real)
        if root is None or is_excluded(real.as_uri(), self.exclude_globs):
            return None
        return real

    def _first_readable(self, candidates: list[Path]) -> Path | None:
        for candidate in candidates:
            # One stat for the common miss; only a file that exists pays for resolving its real path.
            if os.path.isfile(candidate):
                found = self._readable(candidate)
                if found is not None:
                    return found
        return None

    def _module_file(self, base: Path, parts: list[str]) -> Path | None:
        target = base.joinpath(*parts) if parts else base
        candidates = [target.with_suffix(".py"), target / "__init__.py"] if parts else [target / "__init__.py"]
        return self._first_readable(candidates)

    def _ts_module(self, importer: Path, spec: str) -> Path | None:
        """A relative specifier of a TypeScript/JavaScript import (packages and path aliases: None)."""
        if not spec.startswith("."):
            return None
        base = importer.parent / spec
        tries = [base.with_suffix(s) for s in _TS_FOR_JS.get(base.suffix, ())]
        tries += [base, *(Path(str(base) + s) for s in _TS_TRIES), *(base / ("index" + s) for s in _TS_TRIES)]
        return self._first_readable(tries)

    def resolve_module(self, importer: Path, level: int, module: str) -> Path | None:
        """The file of `from <level dots><module> import ...` written in `importer` (or of `import ...
        from "<module>"` in TypeScript/JavaScript), if it is in the workspace (the standard library
        and installed packages are not: None)."""
        if importer.suffix in TS_SUFFIXES:
            return self._ts_module(importer, module)
        parts = [p for p in module.split(".") if p]
        if level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            return self._module_file(base, parts)
        if not parts:
            return None
        for root in self._roots:
            for sub in SOURCE_ROOTS:
                base = root / sub if sub else root
                if not (os.path.isdir(base / parts[0]) or os.path.isfile(base / (parts[0] + ".py"))):
                    continue  # not this folder's package: one stat instead of a walk down `parts`
                found = self._module_file(base, parts)
                if found is not None:
                    return found
        # A script importing its sibling (`from helpers import x` beside helpers.py).
        return self._module_file(importer.parent, parts) if self.root_of(importer) else None

    # -- what is there ---------------------------------------------------------------------
    def outline(self, path: Path) -> Outline:
        opened = self._open_text(path)
        if opened is not None:
            stamp, text = ("open", opened[0]), opened[1]
        else:
            try:
                st = path.stat()
            except OSError:
                return Outline({}, {}, frozenset())
            stamp, text = (st.st_mtime_ns, st.st_size), None
        with self._lock:
            cached = self._outlines.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if text is None:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return Outline({}, {}, frozenset())
        result = outline_ts(text, path.suffix) if path.suffix in TS_SUFFIXES else outline(text)
        with self._lock:
            self._outlines[path] = (stamp, result)
        return result

    def definition(self, module_file: Path, name: str, depth: int = 0) -> Located | None:
        """Where `name` of the module in `module_file` is defined, following re-exports."""
        out = self.outline(module_file)
        text = out.definitions.get(name)
        if text is not None:
            return Located(name, self.relative(module_file), text, out.header(name) or text)
        if name in out.reexports and depth < MAX_REEXPORT_DEPTH:
            level, module, there = out.reexports[name]
            if name in out.submodule_names:
                return None  # a module, not a definition
            target = self.resolve_module(module_file, level, module)
            if target is not None and target != module_file:
                return self.definition(target, there, depth + 1)
        for spec in out.star_from if depth < MAX_REEXPORT_DEPTH else ():
            target = self.resolve_module(module_file, 0, spec)
            found = self.definition(target, name, depth + 1) if target not in (None, module_file) else None
            if found is not None:
                return found
        return None

    def submodule(self, module_file: Path, name: str) -> Path | None:
        """`from pkg import name` where `name` is a module of the package `module_file` starts."""
        if module_file.name != "__init__.py":
            return None
        return self._module_file(module_file.parent, [name])

    def relative(self, path: Path) -> str:
        root = self.root_of(path)
        return path.relative_to(root).as_posix() if root is not None else path.name

    def source_files(self) -> list[Path]:
        """The workspace's Python, TypeScript and JavaScript files (hidden folders, dependencies,
        environments and build output skipped)."""
        out: list[Path] = []
        for root in self._roots:
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
                out.extend(Path(folder) / f for f in sorted(files) if f.endswith(INDEXED_SUFFIXES))
                if len(out) >= MAX_SCANNED_FILES:
                    return out[:MAX_SCANNED_FILES]
        return out

    def scan(self, stop: threading.Event | None = None, listed: list[Path] | None = None) -> dict[str, float]:
        """Outline every workspace source file (run in a worker thread once the settings are known),
        so that a file's imports resolve from memory when it is opened. `listed`: the files the
        codebase index walked (one walk for both), else this index walks. Returns what it cost."""
        started, files, lines = time.perf_counter(), 0, 0
        paths = self.source_files() if listed is None else [p for p in listed if p.name.endswith(INDEXED_SUFFIXES)]
        for path in paths[:MAX_SCANNED_FILES]:
            if stop is not None and stop.is_set():
                break
            real = self._readable(path)
            if real is None:
                continue
            out = self.outline(real)
            files += 1
            lines += out.lines
            time.sleep(0)  # let the event loop's thread have the GIL between files
        return {"files": files, "lines": lines, "seconds": time.perf_counter() - started}

    def file_changed(self, path: Path) -> None:
        """A file was saved (or created, deleted): its outline is read again, and every resolution
        made before is stale (another file's context may hold its old definitions)."""
        try:
            path = path.resolve()
        except (OSError, RuntimeError):
            return
        with self._lock:
            self._outlines.pop(path, None)
            self.generation += 1
