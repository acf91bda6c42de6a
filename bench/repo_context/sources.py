"""The packages of the repository set: pinned in packages.toml, downloaded once with pip (the wheel
only, `--no-deps`, nothing installed) into the eval cache (bench.quality.lang_sources.cache_dir():
KESTREL_EVAL_CACHE, default .tools/eval-data/), sha256-checked (a mismatch stops the eval), and the
wheel's .py files unpacked into `src/pypi-<name>-<version>/`: that folder is the workspace.

`ensure_all()` runs first; afterwards `workspace()` works offline.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from bench.quality.lang_sources import cache_dir, sha256_of

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


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def wheel(pkg: Package, cache: Path | None = None) -> Path:
    """The package's wheel in the cache (downloaded now if missing), sha256-checked."""
    dl = (cache or cache_dir()) / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    path = dl / f"{pkg.key}.whl"
    if not path.exists():
        _say(f"repo context: downloading {pkg.name} {pkg.version} from PyPI ...")
        with tempfile.TemporaryDirectory(dir=dl) as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--ignore-requires-python", "--disable-pip-version-check", "-d", tmp, f"{pkg.name}=={pkg.version}"]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            got = sorted(Path(tmp).glob("*.whl"))
            if out.returncode != 0 or not got:
                raise RuntimeError(f"pip download {pkg.name}=={pkg.version} failed: {out.stderr.strip()[-400:]}")
            digest = sha256_of(got[0])
            if digest != pkg.sha256:
                raise SystemExit(f"bench.repo_context: {got[0].name}: sha256 {digest} != pinned {pkg.sha256}")
            got[0].rename(path)
    digest = sha256_of(path)
    if digest != pkg.sha256:
        raise SystemExit(f"bench.repo_context: {path}: sha256 {digest} != pinned {pkg.sha256} (delete it to download again)")
    return path


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
    out = (cache or cache_dir()) / "src" / pkg.key
    done = out / ".unpacked"
    if done.exists() and done.read_text().strip() == pkg.sha256:
        return out
    archive = wheel(pkg, cache)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    unpack(archive, pkg.module, out)
    done.write_text(pkg.sha256 + "\n")
    return out


def ensure_all(pkgs: list[Package] | None = None) -> dict[str, Path]:
    """Every pinned package downloaded, checked and unpacked: {name: workspace root}."""
    return {p.name: workspace(p) for p in (pkgs if pkgs is not None else load_manifest())}
