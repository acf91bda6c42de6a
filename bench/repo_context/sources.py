"""The packages of the repository set: pinned in packages.toml, downloaded once with pip (the wheel
only, `--no-deps`, nothing installed) into the eval cache (bench.quality.lang_sources.cache_dir():
KESTREL_EVAL_CACHE, default .tools/eval-data/), sha256-checked (a mismatch stops the eval), and the
wheel's .py files unpacked into `src/pypi-<name>-<version>/`: that folder is the workspace.

`ensure_all()` runs first; afterwards `workspace()` works offline.
"""

from __future__ import annotations

import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from bench.quality.lang_sources import cache_dir, pip_download, unpacked_once

MANIFEST = Path(__file__).resolve().parent / "packages.toml"


@dataclass(frozen=True)
class Package:
    name: str  # the distribution (the prompt's repo name)
    version: str
    module: str  # the import package the wheel carries
    license: str
    sha256: str  # of the wheel
    published: str = ""
    first: str = ""
    upstream: str = ""
    why: str = ""

    @property
    def key(self) -> str:
        return f"pypi-{self.name}-{self.version}"


def load_manifest(path: Path = MANIFEST) -> list[Package]:
    with open(path, "rb") as fh:
        return [Package(**row) for row in tomllib.load(fh)["package"]]


def wheel(pkg: Package, cache: Path | None = None) -> Path:
    """The package's wheel in the cache (downloaded now if missing), sha256-checked."""
    path = (cache or cache_dir()) / "downloads" / f"{pkg.key}.whl"
    return pip_download(f"{pkg.name}=={pkg.version}", path, pkg.sha256, binary=True, program="bench.repo_context")


def unpack(archive: Path, module: str, into: Path) -> int:
    """The wheel's .py files under `module/` into `into`; the count."""
    n = 0
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = info.filename
            if info.is_dir() or not name.endswith(".py") or not name.startswith(module + "/") or ".." in name.split("/"):
                continue
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            n += 1
    return n


def workspace(pkg: Package, cache: Path | None = None) -> Path:
    """The unpacked package (downloaded and unpacked on first use): the workspace root."""
    return unpacked_once((cache or cache_dir()) / "src" / pkg.key, pkg.sha256,
                         lambda out: unpack(wheel(pkg, cache), pkg.module, out))


def ensure_all(pkgs: list[Package] | None = None) -> dict[str, Path]:
    """Every pinned package downloaded, checked and unpacked: {name: workspace root}."""
    return {p.name: workspace(p) for p in (pkgs if pkgs is not None else load_manifest())}
