"""Where the linter comes from: Kestrel's own environment, nowhere else.

`ruff` is looked up only in the scripts folder of the environment Kestrel runs in (`sysconfig`)
and beside its interpreter, and is run by absolute path. Never a bare name: on Windows both
`shutil.which` and CreateProcess search the current directory first, which may be the workspace,
where a hostile repository can plant `ruff.exe` or `ruff.bat`; and PATH may hold folders the
workspace chose (a project's `node_modules/.bin`, a virtualenv's activate script). Without a ruff
of its own Kestrel checks edits by parsing only.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache

_NAMES = ("ruff.exe",) if os.name == "nt" else ("ruff",)


def _own_folders() -> list[str]:
    folders = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    return [folder for folder in dict.fromkeys(folders) if folder and os.path.isabs(folder)]


@lru_cache(maxsize=1)
def ruff_path() -> str | None:
    """The absolute path of Kestrel's own ruff, or None when its environment has none."""
    for folder in _own_folders():
        for name in _NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def run_folder(ruff: str) -> str:
    """The working directory for running it: its own folder, never the workspace (ruff reads
    no configuration with `--isolated`, but nothing of the workspace should be in reach)."""
    return os.path.dirname(ruff)
