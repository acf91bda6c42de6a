"""Attack: another local user plants a compiled-methods cache (kestrel.compiled_methods) holding code
of their own, hoping the server runs it at its next start. A cache is read only from a file and a
directory the server's user owns and nobody else can write; it is written only into such a
directory. The attacker's bytes are the real thing: a cache in the right format whose entry for the
class being built runs the attacker's code (shown by the control, where the same bytes in a file we
own do run)."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import attrs
import pytest

from kestrel import compiled_methods
from lsp_wire import OTHER_UID, as_other_user, require_other_user, ATTACKER_PYTHON


def build_class():
    @attrs.define
    class Target:
        value: int

    return Target


def poisoned_cache(marker: Path, tmp: Path) -> bytes:
    """A cache whose every entry for `build_class` runs code that leaves `marker` behind."""
    probe = compiled_methods.install(tmp / "probe.marshal")
    build_class()
    compiled_methods.uninstall()
    payload = compile(f"open({str(marker)!r}, 'w').write('pwned')\n", "<attacker>", "exec")
    return marshal.dumps({key: payload for key in probe.compiled})


def plant_as_other_user(path: Path, data: bytes) -> None:
    script = f"import sys; open({str(path)!r}, 'wb').write(sys.stdin.buffer.read())"
    subprocess.run(as_other_user(ATTACKER_PYTHON, "-c", script), input=data, check=True, timeout=30)


@pytest.fixture
def attacker():
    require_other_user()
    # Under /tmp, not pytest's private directory: the attacker must be able to reach it (not write it).
    tmp = Path(tempfile.mkdtemp(prefix="kestrel-methods-"))
    tmp.chmod(0o755)
    yield tmp, tmp / "marker"
    compiled_methods.uninstall()
    shutil.rmtree(tmp, ignore_errors=True)


def starts_with(path: Path) -> tuple[compiled_methods.CompiledMethods, bool]:
    """A server start reading `path`: the cache it got, and whether the class still built."""
    cache = compiled_methods.install(path)
    try:
        build_class()(1)
        built = True
    except Exception:
        built = False
    compiled_methods.uninstall()
    return cache, built


def test_a_cache_in_the_other_users_directory_is_not_read(attacker):
    tmp, marker = attacker
    data = poisoned_cache(marker, tmp)
    theirs = tmp / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, OTHER_UID, OTHER_UID)
    plant_as_other_user(theirs / "attrs-methods.marshal", data)
    assert (theirs / "attrs-methods.marshal").stat().st_uid == OTHER_UID
    cache, built = starts_with(theirs / "attrs-methods.marshal")
    assert not cache.cached and built and not marker.exists()
    # Nor is one written there: the next start would read what the attacker swapped in.
    assert not cache.save(build=True)

    # Control: the same bytes in a file and directory of ours are read, and run.
    ours = tmp / "ours"
    ours.mkdir(mode=0o755)
    (ours / "attrs-methods.marshal").write_bytes(data)
    (ours / "attrs-methods.marshal").chmod(0o644)
    cache, built = starts_with(ours / "attrs-methods.marshal")
    assert cache.cached and marker.read_text() == "pwned"


def test_a_cache_others_can_write_is_not_read(attacker):
    tmp, marker = attacker
    data = poisoned_cache(marker, tmp)
    # Our directory, but anyone may write in it (a shared scratch directory): the attacker's file.
    shared = tmp / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    plant_as_other_user(shared / "attrs-methods.marshal", data)
    cache, built = starts_with(shared / "attrs-methods.marshal")
    assert not cache.cached and built and not marker.exists()
    # Our file in our directory, but writable by others (they could have changed it).
    ours = tmp / "ours"
    ours.mkdir(mode=0o755)
    (ours / "attrs-methods.marshal").write_bytes(data)
    (ours / "attrs-methods.marshal").chmod(0o666)
    cache, built = starts_with(ours / "attrs-methods.marshal")
    assert not cache.cached and built and not marker.exists()
