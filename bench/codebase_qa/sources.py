"""The projects' released sources: pinned in packages.toml, downloaded once as sdists with pip into the
eval cache (KESTREL_EVAL_CACHE, default .tools/eval-data/), sha256-checked, unpacked into
`src/sdist-<name>-<version>/`: that folder is the workspace."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from bench.quality.lang_sources import cache_dir, sha256_of

MANIFEST = Path(__file__).resolve().parent / "packages.toml"


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    sha256: str
    swe_qa_commit: str
    commits: str

    @property
    def key(self) -> str:
        return f"sdist-{self.name}-{self.version}"


def load_manifest(path: Path = MANIFEST) -> list[Project]:
    with open(path, "rb") as fh:
        return [Project(**row) for row in tomllib.load(fh)["project"]]


def sdist(project: Project, cache: Path | None = None) -> Path:
    dl = (cache or cache_dir()) / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    path = dl / f"{project.key}.tar.gz"
    if not path.exists():
        print(f"codebase qa: downloading {project.name} {project.version} (sdist) from PyPI ...", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(dir=dl) as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary=:all:",
                   "--disable-pip-version-check", "-d", tmp, f"{project.name}=={project.version}"]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            got = sorted(Path(tmp).glob("*.tar.gz"))
            if out.returncode != 0 or not got:
                raise RuntimeError(f"pip download {project.name}=={project.version} failed: {out.stderr.strip()[-400:]}")
            got[0].rename(path)
    digest = sha256_of(path)
    if digest != project.sha256:
        raise SystemExit(f"bench.codebase_qa: {path}: sha256 {digest} != pinned {project.sha256} (delete it to download again)")
    return path


def workspace(project: Project, cache: Path | None = None) -> Path:
    """The unpacked sdist (its top folder stripped): the workspace root."""
    out = (cache or cache_dir()) / "src" / project.key
    done = out / ".unpacked"
    if done.exists() and done.read_text().strip() == project.sha256:
        return out
    archive = sdist(project, cache)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")[1:]
            if not member.isfile() or not parts or ".." in parts:
                continue
            target = out.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
    done.write_text(project.sha256 + "\n")
    return out
