"""The projects' released sources: pinned in packages.toml, downloaded once as sdists with pip into the
eval cache (KESTREL_EVAL_CACHE, default .tools/eval-data/), sha256-checked, unpacked into
`src/sdist-<name>-<version>/`: that folder is the workspace."""

from __future__ import annotations

import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from bench.quality.lang_sources import cache_dir, pip_download, unpacked_once

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
    path = (cache or cache_dir()) / "downloads" / f"{project.key}.tar.gz"
    return pip_download(f"{project.name}=={project.version}", path, project.sha256, binary=False,
                        program="bench.codebase_qa", timeout=900)


def _unpack(archive: Path, out: Path) -> None:
    """The sdist's files, its top folder stripped."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")[1:]
            if not member.isfile() or not parts or ".." in parts:
                continue
            target = out.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())


def workspace(project: Project, cache: Path | None = None) -> Path:
    """The unpacked sdist: the workspace root."""
    return unpacked_once((cache or cache_dir()) / "src" / project.key, project.sha256,
                         lambda out: _unpack(sdist(project, cache), out))
