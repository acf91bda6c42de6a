"""Files whose content must never reach a model (secrets), plus the user's globs."""

from __future__ import annotations

import fnmatch
import posixpath
from urllib.parse import unquote, urlparse

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".env*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_ed25519*", "id_ecdsa*",
    "*.keystore", ".netrc", ".npmrc", ".pypirc", "credentials", "credentials.json",
)


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else f"{parsed.scheme}:{unquote(parsed.path)}"


def is_excluded(uri: str, user_globs: tuple[str, ...] = ()) -> bool:
    path = uri_to_path(uri).replace("\\", "/")
    name = posixpath.basename(path)
    if "/.git/" in path:
        return True
    for pattern in DEFAULT_EXCLUDES:
        if fnmatch.fnmatchcase(name, pattern):
            return True
    for pattern in user_globs:
        if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(name, pattern):
            return True
        if pattern.startswith("**/") and fnmatch.fnmatchcase(path, pattern[3:]):
            return True
    return False
