"""Put the sections of a partial `make bench` run (`python -m bench.run --only X --out DIR`) into
bench/results.json and re-render RESULTS.md, marking each as re-run (date and commit):

    python -m bench.merge DIR/results.json [--into bench]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .report import checks, render_markdown


def merge(full: dict, partial: dict) -> dict:
    for name in partial["benchmarks_run"]:
        full["results"][name] = partial["results"][name]
        full.setdefault("reruns", {})[name] = {"date": partial["machine"]["date"],
                                                "git_commit": partial["machine"].get("git_commit")}
        if name not in full["benchmarks_run"]:
            full["benchmarks_run"].append(name)
    full["checks"] = checks(full)
    return full


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.merge", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("partial", type=Path)
    p.add_argument("--into", type=Path, default=Path(__file__).resolve().parent)
    args = p.parse_args(argv)
    target = args.into / "results.json"
    doc = merge(json.loads(target.read_text()), json.loads(args.partial.read_text()))
    target.write_text(json.dumps(doc, indent=2) + "\n")
    (args.into / "RESULTS.md").write_text(render_markdown(doc))
    for c in doc["checks"]:
        print(f"  {'PASS' if c['pass'] else 'FAIL'}  {c['name']}: {c['value']} (target {c['target']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
