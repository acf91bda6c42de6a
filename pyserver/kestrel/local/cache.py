"""Kestrel's model cache: a directory only the user can write, holding files Kestrel verified.

The directory (and the one holding it) is created 0700; one another user owns or can write to is
refused. A model is loaded only if its sha256 equals the one expected for its file name; a record
beside the file (`<name>.sha256.json`: hash, size, mtime, ctime, inode) spares the hashing on the
next start unless its size or times changed. Why: docs/design-notes.md#pyserverkestrellocalcachepy
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

RECORD_SUFFIX = ".sha256.json"


class UnsafeCache(Exception):
    """The cache directory could be changed by someone else; the message says how to fix it."""


def private_dir(path: Path) -> Path:
    """`path`, created 0700 if missing (its parent too); refused if another user could change it."""
    path.parent.parent.mkdir(parents=True, exist_ok=True)
    for folder in (path.parent, path):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise UnsafeCache(f"cannot create the model cache {folder}: {exc.strerror}") from None
    _check_parent(path.parent)
    _check_own(path)
    return path


def _stat_no_foreign_link(folder: Path) -> os.stat_result:
    """`folder`'s status, through a link only if the link is ours: in a sticky shared folder (/tmp)
    another user owns the links they make there and can point them elsewhere after any check."""
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode):
        if st.st_uid != os.getuid():
            raise UnsafeCache(f"the model cache path {folder} is a link another user made (uid {st.st_uid}); "
                              "Kestrel only loads models from a directory you own")
        st = os.stat(folder)
    return st


def _check_own(folder: Path) -> None:
    st = _stat_no_foreign_link(folder)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeCache(f"the model cache {folder} is not a directory")
    if st.st_uid != os.getuid():
        raise UnsafeCache(f"the model cache {folder} belongs to another user (uid {st.st_uid}); "
                          "Kestrel only loads models from a directory you own")
    if st.st_mode & 0o022:
        raise UnsafeCache(f"the model cache {folder} can be written by other users "
                          f"(mode {stat.S_IMODE(st.st_mode):o}); run `chmod 700 {folder}`")


def _check_parent(folder: Path) -> None:
    """The folder holding the cache: another user must not be able to swap the cache for theirs.
    A sticky world-writable folder such as /tmp is fine: only owners may rename its entries."""
    st = _stat_no_foreign_link(folder)
    if st.st_uid not in (os.getuid(), 0):
        raise UnsafeCache(f"the folder holding the model cache, {folder}, belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise UnsafeCache(f"the folder holding the model cache, {folder}, can be written by other users "
                          f"(mode {stat.S_IMODE(st.st_mode):o}); run `chmod 700 {folder}`")


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _fingerprint(path: Path) -> dict[str, int]:
    st = os.stat(path)
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "ino": st.st_ino}


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


def record_verified(path: Path, sha256: str) -> None:
    """Remember that `path`, as it is now, has `sha256` (Kestrel checked it)."""
    import tempfile  # (with shutil and random) not at the server's start

    record = {"sha256": sha256, **_fingerprint(path)}
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as out:
        json.dump(record, out)
    os.replace(out.name, _record_path(path))


def is_verified(path: Path, expected_sha256: str) -> bool:
    """Does `path` hold the file with `expected_sha256`? Trusts a record only for an unchanged file."""
    try:
        record = json.loads(_record_path(path).read_text())
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict) and record == {"sha256": expected_sha256, **_fingerprint(path)}:
        return True
    if sha256_of(path) != expected_sha256:
        return False
    record_verified(path, expected_sha256)
    return True
