"""python -m bench.edit_quality [--full] [--limit N] [--model-path X.gguf] [--report-only]

Default: a fixed, seeded sample (30 quick fixes, 30 inline edits, even over the kinds), raw chat
vs Kestrel through LSP on one llama.cpp server. Prints the table, writes
bench/out/edit-quality.json (with per-task records) and the edit section of bench/QUALITY.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from bench.quality.__main__ import output_paths

from . import data
from .summary import MARKER, render_markdown, render_table, summarize

BENCH = Path(__file__).resolve().parent.parent


def write_section(md: Path, section: str) -> None:
    """Replace the edit section of QUALITY.md (from its marker to the end), keep the rest."""
    head = md.read_text(encoding="utf-8") if md.exists() else "# Quality\n"
    if MARKER in head:
        head = head[: head.index(MARKER)]
    md.write_text(head.rstrip("\n") + "\n\n" + section, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.edit_quality", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--full", action="store_true", help="every task of every kind")
    p.add_argument("--limit", type=int, default=None, help="at most N tasks per family (a quick check; no markdown)")
    p.add_argument("--families", default=",".join(data.FAMILIES), help="comma-separated: " + ", ".join(data.FAMILIES))
    p.add_argument("--model-path", default=None)
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--out", default=None)
    p.add_argument("--md", default=None)
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args(argv)
    _, out, md = output_paths(args, "edit-quality")
    if args.report_only:
        doc = json.loads(out.read_text())
        doc.update(summarize(doc["records"]))
    else:
        from .runner import run

        everything = data.all_tasks()
        tasks = data.sample(everything, None if args.full else data.DEFAULT_SAMPLE)
        if args.limit is not None:
            tasks = data.sample(everything, {f: args.limit for f in data.FAMILIES})
        families = args.families.split(",")
        unknown = set(families) - set(data.FAMILIES)
        if unknown:
            p.error(f"unknown families: {', '.join(sorted(unknown))}")
        tasks = {f: t for f, t in tasks.items() if f in families}
        doc = asyncio.run(run(tasks, model_path=args.model_path, logs=out.parent, counts=data.counts(everything),
                              label="full" if args.full else ("limit" if args.limit is not None else "sample"),
                              kestrel_src=args.kestrel_src))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(render_table(doc))
    print(f"\n{doc['model']}; {doc['wall_seconds']:.0f} s; wrote {out}" + (f" and {md}" if md else ""))
    if md:
        write_section(md, render_markdown(doc, "make eval" + (" FULL=1" if args.full else "")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
