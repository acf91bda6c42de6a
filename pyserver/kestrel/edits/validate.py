"""Is a proposed edit worth offering? Checked before the user sees it.

- It must parse (Python, the languages Kestrel can check without a toolchain): a fix that turns a
  file into one that does not compile, or an edit that breaks a file that compiled, is refused.
- A fix for a linter's diagnostic must not leave that diagnostic in place: when the diagnostic
  came from a linter Kestrel can run here (ruff, found next to this interpreter or on PATH), the
  fixed text is linted again for the same rule.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

LINT_TIMEOUT_S = 10.0


def syntax_error(text: str, language: str) -> str | None:
    """Why `text` does not parse ("line N: message"), None when it does or cannot be checked."""
    if language != "python":
        return None
    try:
        compile(text, "<edit>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, OverflowError):  # e.g. null bytes: not a syntax question
        return None
    return None


def _ruff() -> str | None:
    local = Path(sys.executable).with_name("ruff")
    return str(local) if local.exists() else shutil.which("ruff")


def still_reported(text: str, path: str, source: str, code: str | None, message: str) -> bool | None:
    """Does the linter that reported (source, code, message) still report it on `text`? None when
    Kestrel cannot run that linter here (then only parsing is checked)."""
    if source != "ruff" or not code:
        return None
    ruff = _ruff()
    if ruff is None:
        return None
    select = "E9,F" if code == "invalid-syntax" else code
    try:
        proc = subprocess.run(
            [ruff, "check", "--isolated", "--no-cache", "--select", select, "--output-format", "json",
             "--stdin-filename", path or "edit.py", "-"],
            input=text, capture_output=True, text=True, timeout=LINT_TIMEOUT_S,
        )
        findings = json.loads(proc.stdout or "[]")
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return any((f.get("code") or "invalid-syntax") == code and f.get("message") == message for f in findings)
