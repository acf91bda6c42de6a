"""`python -m bench.peers [--quick] [--out DIR]`: Kestrel vs GitHub Copilot's language server,
keystroke-storm latency and cold start; prints a table, writes DIR/peers.json (default bench/out)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from ..constants import REPO
from . import run_peers, table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer cold starts and keystrokes (~1 min)")
    p.add_argument("--out", default=str(REPO / "bench" / "out"))
    a = p.parse_args(argv)
    out = Path(a.out)
    res = asyncio.run(run_peers(out, a.quick))
    (out / "peers.json").write_text(json.dumps(res, indent=2, default=str) + "\n")
    print(table(res))
    print(f"wrote {out / 'peers.json'}")
    return 0 if "error" not in res else 1


if __name__ == "__main__":
    sys.exit(main())
