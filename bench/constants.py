"""Fixed values the benchmark modules share, with no imports of their own (so `lsp_client` and
`rawclient` can both use them)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
URI = "file:///bench/sample.py"  # the document every benchmark edits and completes in
