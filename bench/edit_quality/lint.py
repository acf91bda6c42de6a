"""ruff (PyPI, run as a subprocess) as the source of real diagnostics, turned into LSP
diagnostics. Only pyflakes (F) and syntax errors are selected, with the user's config ignored
(--isolated): the checks that find broken code rather than style."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

RUFF_VERSION = "0.14.6"
SELECT = "F,E9"


def ruff_binary() -> str:
    script = Path(sys.executable).with_name("ruff")
    if script.exists():
        return str(script)
    raise SystemExit(f"bench.edit_quality: ruff is missing: install it with `.venv/bin/pip install ruff=={RUFF_VERSION}`")


def ruff_json(source: str) -> list[dict[str, Any]]:
    """ruff's findings on `source` (checked as a file named candidate.py)."""
    proc = subprocess.run(
        [ruff_binary(), "check", "--isolated", "--select", SELECT, "--output-format", "json", "--no-cache",
         "--stdin-filename", "candidate.py", "-"],
        input=source, capture_output=True, text=True, timeout=60,
    )
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ruff failed: {proc.stderr.strip()[:300]}")
    return json.loads(proc.stdout or "[]")


def to_lsp(finding: dict[str, Any]) -> dict[str, Any]:
    """One ruff finding as an LSP Diagnostic (JSON): 1-based rows/columns become 0-based."""
    loc, end = finding["location"], finding.get("end_location") or finding["location"]
    code = finding.get("code") or "invalid-syntax"
    return {
        "range": {"start": {"line": loc["row"] - 1, "character": loc["column"] - 1},
                  "end": {"line": end["row"] - 1, "character": end["column"] - 1}},
        "severity": 1, "code": code, "source": "ruff", "message": finding["message"],
    }


def key(finding: dict[str, Any]) -> tuple[str, str]:
    return (finding.get("code") or "invalid-syntax", finding["message"])


def new_findings(before: str, after: str) -> list[dict[str, Any]]:
    """Findings in `after` that `before` does not have (compared by code and message)."""
    old = {key(f) for f in ruff_json(before)}
    return [f for f in ruff_json(after) if key(f) not in old]
