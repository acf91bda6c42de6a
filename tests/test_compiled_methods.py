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
