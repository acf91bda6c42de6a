"""Files whose content must never reach a model (secrets), plus the user's globs.

A file is a secret by its name, or by a folder on its path that only holds secrets (`.git/`,
`.ssh/`, ...). Names compare case-insensitively, URIs are percent-decoded once, backslashes are
separators, and a name is also checked as Windows reads it (no trailing dots or spaces, no NTFS
stream suffix). SECURITY.md lists `SECRET_NAMES` and `SECRET_DIRS` word for word: keep the two in
step. Why: docs/design-notes.md#pyserverkestrelcontextexclusionpy
"""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from urllib.parse import unquote, urlparse

# Matched against the file name (lower-cased), with fnmatch wildcards.
SECRET_NAMES: tuple[str, ...] = (
    ".env*", "*.env",  # dotenv files (.env, .env.local, .envrc, prod.env)
    "*.pem", "*.key", "*.p12", "*.pfx", "*.ppk",  # private keys and certificate bundles
    "*.keystore", "*.jks",  # Java key stores
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",  # SSH keys
    ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".htpasswd",  # password and token files (_netrc: Windows)
    "secret.*", "secrets.*", "*.secret", "*.secrets",  # secrets.yaml, secrets.json, db.secret
)

# Matched like SECRET_NAMES, but only for files that are not source code (by suffix):
# `credentials.yaml`, `aws_credentials` and `.git-credentials` hold tokens; `credentials.py` and
# `CredentialsProvider.java` are code the user wants completed.
SECRET_DATA_NAMES: tuple[str, ...] = ("*credentials*",)
SOURCE_SUFFIXES: frozenset[str] = frozenset({
    "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "rs", "java", "kt", "kts",
    "scala", "cs", "fs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "swift", "rb", "php",
    "dart", "lua", "ex", "exs", "erl", "hs", "ml", "clj", "groovy", "vue", "svelte", "md", "rst",
})

# Any file under a folder with one of these names (lower-cased), at any depth.
SECRET_DIRS: tuple[str, ...] = (".git", ".ssh", ".aws", ".gnupg")


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else f"{parsed.scheme}:{unquote(parsed.path)}"


def _components(path: str) -> list[str]:
    """The path's folder and file names, lower-cased, `/` and `\\` both separators."""
    return [part.lower() for part in path.replace("\\", "/").split("/") if part]


def _windows_forms(name: str) -> set[str]:
    """`name` and the names Windows opens for it: trailing dots/spaces dropped, stream cut off."""
    forms = {name, name.rstrip(". ")}
    if ":" in name:
        forms.add(name.split(":", 1)[0].rstrip(". "))
    return {form for form in forms if form}


def secret_rule(path: str) -> str | None:
    """The built-in rule that makes the file at `path` a secret (`"*.pem"`, `".git/"`), or None."""
    parts = _components(path)
    if not parts:
        return None
    for folder in parts[:-1]:
        for form in _windows_forms(folder):
            if form in SECRET_DIRS:
                return form + "/"
    for form in _windows_forms(parts[-1]):
        for pattern in SECRET_NAMES:
            if fnmatch.fnmatchcase(form, pattern):
                return pattern
        if form.rpartition(".")[2] not in SOURCE_SUFFIXES or "." not in form:
            for pattern in SECRET_DATA_NAMES:
                if fnmatch.fnmatchcase(form, pattern):
                    return pattern
    return None


def _user_glob_matches(path: str, globs: tuple[str, ...]) -> bool:
    """The user's `kestrel.completion.excludeGlobs`: against the whole path, the file name, or the
    path from any of its folders on (a pattern is written relative to a workspace folder, as VS Code's
    `files.exclude` is: `private/**` must hide `/home/u/ws/private/keys.py`, and a path does not say
    where its workspace folder starts, so every start is tried: it can only hide more),
    case-insensitively (an exclusion that misses `.KEY` on Windows is no exclusion)."""
    path = path.replace("\\", "/").lower()
    name = path.rstrip("/").rsplit("/", 1)[-1]
    tails = [path[i + 1:] for i, c in enumerate(path) if c == "/" and path[i + 1:]]
    for glob in globs:
        pattern = glob.replace("\\", "/").lower().removeprefix("./")
        if pattern.startswith("**/"):
            pattern = pattern[3:]  # `**/x` is `x` from any folder on, the tails below
        if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(name, pattern):
            return True
        if any(fnmatch.fnmatchcase(tail, pattern) for tail in tails):
            return True
    return False


def is_excluded_path(path: str, user_globs: tuple[str, ...] = ()) -> bool:
    """A file path (not a URI: nothing is decoded) is a secret or matches the user's globs."""
    return secret_rule(path) is not None or _user_glob_matches(path, tuple(user_globs))


def is_excluded(uri: str, user_globs: tuple[str, ...] = ()) -> bool:
    """A document URI (`file:`, `vscode-remote:`, `untitled:`, ...) is excluded."""
    return _excluded_uri(uri, tuple(user_globs))


@lru_cache(maxsize=4096)
def _excluded_uri(uri: str, user_globs: tuple[str, ...]) -> bool:
    # Asked on every keystroke's completion (and for each open tab): a pure function of its arguments,
    # ~50 us of fnmatch on 2 cores each time otherwise.
    return is_excluded_path(uri_to_path(uri), user_globs)


def linked_to_excluded(path: str, user_globs: tuple[str, ...] = ()) -> bool:
    """`path` is a link (itself, or a folder on the way) to a file that is excluded where it really
    is: `ws/notes.py -> ~/.aws/credentials` is judged by `credentials`, not by `notes.py`. Reads the
    file system (a few `lstat`s), so it is asked once per opened document, not per keystroke."""
    if not path.startswith("/") and not (len(path) > 2 and path[1] == ":"):
        return False  # not a local file path (`untitled:`, a remote scheme)
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return True  # a path that cannot be resolved is not read
    return real != os.path.normpath(path) and is_excluded_path(real, tuple(user_globs))
