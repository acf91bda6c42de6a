"""The secret a TCP client must present: created at start, readable only by the user who started
the server (a 0600 file in a 0700 directory), removed when the server stops.

Any local user can connect to a loopback port; only the user's own processes (their editor) can read
the file, so presenting its content proves the connection comes from the user.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path
from typing import Mapping


class TokenFileError(Exception):
    pass


def _owned_by_me(info: os.stat_result) -> bool:
    geteuid = getattr(os, "geteuid", None)  # Windows: the profile directory's ACL protects the file
    return geteuid is None or info.st_uid == geteuid()


def default_token_path(port: int, environ: Mapping[str, str] = os.environ) -> Path:
    """`$XDG_RUNTIME_DIR/kestrel/tcp-PORT.token` (a per-user tmpfs on systemd machines), else
    `$XDG_STATE_HOME` or `~/.local/state`, `kestrel/tcp-PORT.token`."""
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        base = Path(runtime)
    else:
        state = environ.get("XDG_STATE_HOME", "")
        base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "kestrel" / f"tcp-{port}.token"


class TokenFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.token = secrets.token_urlsafe(32)  # 256 bits
        self._written: os.stat_result | None = None

    def matches(self, presented: object) -> bool:
        """Constant-time comparison: the time taken tells nothing about how much of a guess was right."""
        if not isinstance(presented, str):
            return False
        return hmac.compare_digest(presented.strip().encode("utf-8"), self.token.encode("utf-8"))

    def write(self, private_dir: bool) -> None:
        """Create the file 0600. With `private_dir` (the default location) its directory is made
        and kept 0700; a directory owned by someone else is refused rather than trusted."""
        directory = self.path.parent
        if private_dir:
            directory.parent.mkdir(parents=True, exist_ok=True)
            try:
                directory.mkdir(mode=0o700)
            except FileExistsError:
                pass
            info = os.lstat(directory)
            if not stat.S_ISDIR(info.st_mode) or not _owned_by_me(info):
                raise TokenFileError(f"{directory} is not a directory owned by you: refusing to put the token there")
            os.chmod(directory, 0o700)
        else:  # a path the user chose: create what is missing, private; leave existing directories be
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            pass
        else:  # a token left by a server that was killed; anything else is not ours to replace
            if not stat.S_ISREG(info.st_mode) or not _owned_by_me(info):
                raise TokenFileError(f"{self.path} exists and is not a file owned by you")
            os.unlink(self.path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            raise TokenFileError(f"cannot create {self.path}: {exc.strerror}") from exc
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, 0o600)  # whatever the umask
            os.write(fd, self.token.encode("ascii"))
            self._written = os.fstat(fd)
        finally:
            os.close(fd)

    def remove(self) -> None:
        """Delete the file if it is still the one this server wrote."""
        if self._written is None:
            return
        try:
            info = os.lstat(self.path)
            if (info.st_dev, info.st_ino) == (self._written.st_dev, self._written.st_ino):
                os.unlink(self.path)
        except OSError:
            pass
        self._written = None
