"""python -m bench.edit_quality [--sets quixbugs,synthetic] [--full] [--limit N] [--model-path X.gguf] [--report-only]

Default: every QuixBugs program and a seeded sample of 60 HumanEvalFix problems (even over the bug
types; FULL: all 164) with its quick fixes (real bugs, the headline), every CanItEdit program whose
tests run here (instructed edits that are not repairs, with the benchmark's lazy instruction; FULL:
its descriptive one too), TypeScript quick fixes for ESLint's findings in real package code (30 per
rule, FULL: all; see eslint_set.py), and the synthetic set's fixed, seeded sample (30 quick fixes, 30 inline
edits, even over the kinds), raw chat vs Kestrel through LSP on one llama.cpp server. Prints the
table, writes bench/out/edit-quality.json (with per-task records) and the edit section of
bench/QUALITY.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from bench.quality.__main__ import output_paths

from . import canitedit, data, eslint_set, humanevalfix, quixbugs
from .summary import END_MARKER, MARKER, render_markdown, render_table, summarize

SETS = ("quixbugs", "humanevalfix", "canitedit", "eslint", "synthetic")

BENCH = Path(__file__).resolve().parent.parent


def write_section(md: Path, section: str) -> None:
    """Replace the generated edit section of QUALITY.md (from its marker to END_MARKER, or to the
    repository section, which stays last), keep the rest: what follows END_MARKER is written by hand
    (subsections of runs this command does not make) and survives a re-run."""
    from bench.repo_context.summary import MARKER as REPO_MARKER

    text = md.read_text(encoding="utf-8") if md.exists() else "# Quality\n"
    repo = text[text.index(REPO_MARKER):] if REPO_MARKER in text else ""
    head, kept = text[: len(text) - len(repo)], ""
    if MARKER in head:
        head, old = head[: head.index(MARKER)], head[head.index(MARKER):]
        if END_MARKER in old:
            kept = old[old.index(END_MARKER) + len(END_MARKER):].strip("\n")
    parts = [head.rstrip("\n"), section.rstrip("\n"), END_MARKER] + ([kept] if kept else []) + ([repo] if repo else [])
    md.write_text("\n\n".join(parts).rstrip("\n") + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.edit_quality", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--full", action="store_true", help="every task of every kind")
    p.add_argument("--limit", type=int, default=None, help="at most N tasks per family (a quick check; no markdown)")
    p.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ", ".join(SETS))
    p.add_argument("--families", default=",".join(data.FAMILIES), help="comma-separated: " + ", ".join(data.FAMILIES))
    p.add_argument("--model-path", default=None)
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--out", default=None)
    p.add_argument("--md", default=None)
    p.add_argument("--tasks", default=None,
                   help="a file of task ids, one per line: only those (re-checking the tasks a change can affect; no markdown)")
    p.add_argument("--speculative", action=argparse.BooleanOptionalAction, default=True,
                   help="the llama.cpp child with prompt-lookup drafts, as kestrel.local.speculative (default on; both systems)")
    p.add_argument("--systems", default="raw,kestrel",
                   help="raw, kestrel or both (one alone: a study's run, no table or markdown)")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--beside", action="append", default=[],
                   help="another model's edit-quality JSON, shown in the same tables of the markdown section")
    args = p.parse_args(argv)
    _, out, md = output_paths(args, "edit-quality")
    if args.report_only:
        doc = json.loads(out.read_text())
        doc.update(summarize(doc["records"]))
    else:
        from .runner import run

        sets, families = args.sets.split(","), args.families.split(",")
        for given, known in ((sets, SETS), (families, data.FAMILIES)):
            unknown = set(given) - set(known)
            if unknown:
                p.error(f"unknown: {', '.join(sorted(unknown))}")
        tasks: list[data.EditTask] = []
        counts: dict = {}
        if "quixbugs" in sets:
            print("edit quality: building the QuixBugs tasks (each program's tests on its buggy and fixed version) ...",
                  file=sys.stderr, flush=True)
            qb, skipped = quixbugs.all_tasks()
            counts["quixbugs"] = {"programs": len(quixbugs.programs()), "skipped": skipped,
                                  **{f: len(v) for f, v in qb.items()}}
            for fam in data.FAMILIES:
                if fam in families:
                    tasks += qb[fam][: args.limit] if args.limit is not None else qb[fam]
        if "humanevalfix" in sets:
            print("edit quality: building the HumanEvalFix tasks ...", file=sys.stderr, flush=True)
            hef, skipped = humanevalfix.all_tasks()
            counts["humanevalfix"] = {"problems": len(humanevalfix.rows()), "skipped": skipped,
                                      **{f: len(v) for f, v in hef.items()},
                                      "quick_fix_codes": sorted({t.diagnostic["code"] for t in hef["quick-fix"]})}
            hef["inline-edit"] = humanevalfix.sample(hef["inline-edit"], None if args.full else humanevalfix.DEFAULT_SAMPLE)
            for fam in data.FAMILIES:
                if fam in families:
                    tasks += hef[fam][: args.limit] if args.limit is not None else hef[fam]
        missing = canitedit.available() if "canitedit" in sets else None
        if missing:
            print(f"edit quality: the CanItEdit set is skipped: {missing}", file=sys.stderr, flush=True)
            counts["canitedit"] = {"missing": missing}
        elif "canitedit" in sets:
            print("edit quality: building the CanItEdit tasks (each program's tests on its before and after file) ...",
                  file=sys.stderr, flush=True)
            variants = canitedit.VARIANTS if args.full else ("lazy",)
            cie, skipped = canitedit.all_tasks(variants)
            counts["canitedit"] = {"programs": len(canitedit.rows()), "skipped": skipped, "variants": list(variants),
                                   **{f: len(v) for f, v in cie.items()}}
            if "inline-edit" in families:
                tasks += cie["inline-edit"][: args.limit] if args.limit is not None else cie["inline-edit"]
        if "eslint" in sets and "quick-fix" in families:
            print("edit quality: building the ESLint tasks (ESLint over the languages set's TypeScript files) ...",
                  file=sys.stderr, flush=True)
            esl, counts["eslint"] = eslint_set.all_tasks(None if args.full else eslint_set.PER_KIND)
            tasks += esl["quick-fix"][: args.limit] if args.limit is not None else esl["quick-fix"]
        if "synthetic" in sets:
            everything = data.all_tasks()
            counts["synthetic"] = data.counts(everything)
            chosen = data.sample(everything, None if args.full else data.DEFAULT_SAMPLE)
            if args.limit is not None:
                chosen = data.sample(everything, {f: args.limit for f in data.FAMILIES})
            for fam in data.FAMILIES:
                if fam in families:
                    tasks += chosen[fam]
        systems = tuple(s for s in ("raw", "kestrel") if s in args.systems.split(","))
        if not systems or set(args.systems.split(",")) - {"raw", "kestrel"}:
            p.error("--systems: raw, kestrel or raw,kestrel")
        if len(systems) == 1:
            md = None
        if args.tasks:
            wanted = {line.strip() for line in Path(args.tasks).read_text().splitlines() if line.strip()}
            tasks = [t for t in tasks if t.task_id in wanted]
            md = None
        doc = asyncio.run(run(tasks, model_path=args.model_path, logs=out.parent, counts=counts,
                              label="full" if args.full else ("limit" if args.limit is not None else "tasks" if args.tasks else "sample"),
                              kestrel_src=args.kestrel_src, speculative=args.speculative, systems=systems))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    if "sets" not in doc and not args.report_only:
        print(f"\n{doc['model']}; {doc['wall_seconds']:.0f} s; one system ({', '.join(doc['config']['systems'])}): wrote {out}")
        return 0
    print(render_table(doc))
    print(f"\n{doc['model']}; {doc['wall_seconds']:.0f} s; wrote {out}" + (f" and {md}" if md else ""))
    if md:
        beside = []
        for path in args.beside:
            other = json.loads(Path(path).read_text())
            other.update(summarize(other["records"]))
            beside.append(other)
        write_section(md, render_markdown(doc, "make eval ONLY=edits" + (" FULL=1" if args.full else ""), beside))
    return 0


if __name__ == "__main__":
    sys.exit(main())
