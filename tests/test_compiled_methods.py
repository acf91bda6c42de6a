"""The cache of attrs' generated methods (kestrel.compiled_methods): a start reads back what an
earlier one compiled, and the classes behave as if compiled afresh. The attack tests (a cache
another user planted) are in tests/security/test_compiled_methods.py."""

from __future__ import annotations

import sys

import attrs
import pytest

from kestrel import compiled_methods


def make_class():
    @attrs.frozen
    class Point:
        x: int
        y: int = 0

    return Point


@pytest.fixture
def cache_dir(tmp_path):
    d = tmp_path / "__pycache__"
    d.mkdir(mode=0o755)
    yield d
    compiled_methods.uninstall()


def test_a_second_start_reads_the_methods_the_first_compiled(cache_dir, monkeypatch):
    path = cache_dir / "attrs-methods.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    first = compiled_methods.install(path)
    make_class()
    compiled_methods.uninstall()
    assert first.compiled and first.save() and path.exists()

    second = compiled_methods.install(path)
    point = make_class()
    compiled_methods.uninstall()
    # Every method came from the file (in another process the frozen class's __hash__ would not: it
    # holds the process's string-hash seed, so its text differs from start to start).
    assert not second.compiled and len(second.cached) == len(first.compiled)
    written = path.stat().st_mtime_ns
    assert not second.save() and path.stat().st_mtime_ns == written  # a start that had the file leaves it
    assert point(1, 2) == point(1, 2) and point(1) != point(2) and repr(point(3)) == "Point(x=3, y=0)"
    assert hash(point(1, 2)) == hash(point(1, 2))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        point(1).x = 2


def test_nothing_is_written_where_python_writes_no_bytecode_unless_building(cache_dir, monkeypatch):
    path = cache_dir / "attrs-methods.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cache = compiled_methods.install(path)
    make_class()
    assert not cache.save() and not path.exists()
    assert cache.save(build=True) and path.exists()  # `kestrel-lsp --compile-methods` after an install


def test_a_damaged_file_is_a_miss_not_a_failure(cache_dir):
    path = cache_dir / "attrs-methods.marshal"
    path.write_bytes(b"\x00not marshal at all")
    path.chmod(0o644)
    cache = compiled_methods.install(path)
    point = make_class()
    assert not cache.cached and cache.compiled and point(1) == point(1)


def test_after_an_install_a_start_compiles_none_of_the_package_from_source():
    """`kestrel-lsp --compile-methods` writes the package's bytecode too: an editable install under
    PYTHONDONTWRITEBYTECODE=1 (as on these machines) otherwise compiled ~60 modules at every start."""
    import os
    import subprocess

    assert compiled_methods.compile_package()
    probe = (
        "import importlib._bootstrap_external as be, sys\n"
        "seen = []\n"
        "orig = be.SourceLoader.source_to_code\n"
        "def spy(self, data, path, *a, **k):\n"
        "    seen.append(path)\n"
        "    return orig(self, data, path, *a, **k)\n"
        "be.SourceLoader.source_to_code = spy\n"
        "import kestrel.server\n"
        "print([p for p in seen if '/kestrel/' in p])\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_cache_is_named_without_reading_package_metadata():
    """attrs' `__version__` goes through importlib.metadata (~10 ms of every start): the file name
    comes from attrs' own module file instead."""
    import subprocess

    probe = ("import sys\nfrom kestrel import compiled_methods\ncompiled_methods.cache_path()\n"
             "print('importlib.metadata' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_dataclass_methods_come_from_the_cache_too(cache_dir, monkeypatch):
    import dataclasses

    def make_settings():
        @dataclasses.dataclass(frozen=True)
        class Settings:
            name: str
            size: int = 3

        return Settings

    path = cache_dir / "attrs-methods.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    first = compiled_methods.install(path)
    make_settings()
    compiled_methods.uninstall()
    assert first.compiled and first.save()
    second = compiled_methods.install(path)
    settings = make_settings()
    compiled_methods.uninstall()
    assert not second.compiled  # __init__, __repr__, __eq__, __hash__, __setattr__ ... all read back
    assert "exec" not in vars(dataclasses)  # uninstalled: the builtin again
    s = settings("a")
    assert s == settings("a", 3) and s != settings("b") and repr(s).endswith("Settings(name='a', size=3)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.size = 4
