"""python -m bench.repo_context [--language python|typescript] [--limit N] [--full] [--model-path X.gguf | --base-url URL --model-name NAME] [--report-only]

The repository set: lines that use a name imported from another module of the same package, in
real Python packages published after the model was trained (packages.toml), CrossCodeEval's
construction. Five systems on one model endpoint: raw (the file alone), oracle (raw with the
definitions of the cross-file names in Qwen2.5-Coder's repository format), kestrel (only the file
open), kestrel-tabs (the defining modules open as tabs) and kestrel-nocontext (kestrel with its
repository context off). Default: a seeded sample of 48 tasks
spread over the packages, on the packaged Qwen2.5-Coder-0.5B through a local llama.cpp server.
Prints the table, writes bench/out/repo-context.json (with per-task records) and the last section
of bench/QUALITY.md. With --model-path or --base-url the outputs are named after the model
(repo-context-<name>.json, QUALITY-<name>.md); --limit runs write no markdown unless --md is given.

--language typescript (or ts) runs the TypeScript set instead (ts_tasks.py: the same construction on
the languages eval's pinned npm packages, bench/quality/languages.toml; --packages picks among
those): the same systems and scores, written to bench/out/repo-context-typescript[-<name>].json and
its own section of QUALITY.md, right after the Python one. The default stays the Python set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

from bench.quality.__main__ import _check_model
from bench.quality.lang_tasks import RAW_PREFIX_TOKENS, RAW_SUFFIX_TOKENS
from bench.quality.raw import SINGLE_LINE_CAP

from bench.quality import lang_sources

from . import oracle, sources, summary, tasks, ts_tasks
from .runner import PEER_SYSTEMS, SYSTEMS, Endpoint

BENCH = Path(__file__).resolve().parent.parent
LANGUAGES = {"python": "python", "py": "python", "typescript": "typescript", "ts": "typescript"}


def _language(value: str) -> str:
    if value.lower() not in LANGUAGES:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(LANGUAGES)}")
    return LANGUAGES[value.lower()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.repo_context", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--language", type=_language, default="python",
                   help="python (the default: packages.toml) or typescript (ts: the TypeScript packages of "
                        "bench/quality/languages.toml, tasks by ts_tasks.py)")
    p.add_argument("--limit", type=int, default=None, help="at most N tasks, evenly spaced over the sample (a smoke run)")
    p.add_argument("--full", action="store_true", help="every candidate task (thousands: hours)")
    p.add_argument("--sample", type=int, default=tasks.SAMPLE, help="tasks in the seeded sample")
    p.add_argument("--seed", type=int, default=tasks.SAMPLE_SEED)
    p.add_argument("--packages", default="", help="comma-separated package names from packages.toml, or for "
                                                  "--language typescript from languages.toml (default all)")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help="comma-separated: " + ", ".join(SYSTEMS + PEER_SYSTEMS) + " (the copilot ones: GitHub Copilot's "
                        "language server on the same model, needs Node, see bench/peers; the run then goes into an "
                        "`unshare -rn` namespace)")
    p.add_argument("--model-path", default=None, help="a GGUF model for the local llama.cpp server "
                                                      "(default: the packaged Qwen2.5-Coder-0.5B-Instruct)")
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint (…/v1) serving a Qwen2.5-Coder-family "
                                                   "model through /completions, instead of the local llama.cpp")
    p.add_argument("--model-name", default=None, help="the model id at --base-url")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="the environment variable holding --base-url's key (raw and Kestrel both use it)")
    p.add_argument("--useful", type=float, default=summary.USEFUL, help="edit similarity at or above which a shown "
                                                                          "suggestion is useful")
    p.add_argument("--noise", type=float, default=summary.NOISE, help="edit similarity below which a shown suggestion "
                                                                        "is noise")
    p.add_argument("--kestrel-src", default=None, help="measure the kestrel package in this directory")
    p.add_argument("--out", default=None, help="JSON output (default bench/out/repo-context[-<model>].json)")
    p.add_argument("--md", default=None, help="markdown output (default bench/QUALITY[-<model>].md; none for --limit; `none`: no markdown)")
    p.add_argument("--tasks", default=None, help="a file of task ids, one per line: only those of the sample (re-checking "
                                                 "the tasks a change can affect; compare with a full run's records)")
    p.add_argument("--report-only", action="store_true", help="re-render the table and markdown from the JSON")
    return p.parse_args(argv)


def model_stem(args: argparse.Namespace) -> str | None:
    if args.base_url:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", args.model_name or "endpoint").strip("-")
    return Path(args.model_path).stem if args.model_path else None


def output_paths(args: argparse.Namespace) -> tuple[Path, Path | None]:
    stem = model_stem(args)
    base = "repo-context" if args.language == "python" else f"repo-context-{args.language}"
    out = Path(args.out) if args.out else BENCH / "out" / (f"{base}-{stem}.json" if stem else f"{base}.json")
    md = None if args.md == "none" else Path(args.md) if args.md else (None if args.limit is not None else
                                        BENCH / (f"QUALITY-{stem}.md" if stem else "QUALITY.md"))
    return out, md


def command_line(args: argparse.Namespace, argv: list[str] | None) -> str:
    """`make eval ...` for what make runs, else the command as given."""
    given = sys.argv[1:] if argv is None else argv
    if (args.limit is not None or args.packages or args.systems != ",".join(SYSTEMS) or args.sample != tasks.SAMPLE
            or args.language != "python"):
        return "python -m bench.repo_context " + shlex.join(given)
    parts = ["make eval"] + (["FULL=1"] if args.full else []) + ([f"MODEL={args.model_path}"] if args.model_path else [])
    parts += [f"BASE_URL={args.base_url} MODEL_NAME={args.model_name}"] if args.base_url else []
    return " ".join(parts)


def run(args: argparse.Namespace, out: Path, argv: list[str] | None = None) -> dict:
    from bench.quality.runner import kestrel_source

    from .runner import evaluate

    ts = args.language == "typescript"
    pkgs = lang_sources.packages(("typescript",)) if ts else sources.load_manifest()
    wanted = [x.strip() for x in args.packages.split(",") if x.strip()]
    unknown = set(wanted) - {p.name for p in pkgs}
    if unknown:
        raise SystemExit(f"unknown package(s) {', '.join(sorted(unknown))}: choose from {', '.join(p.name for p in pkgs)}")
    pkgs = [p for p in pkgs if not wanted or p.name in wanted]  # type: ignore[misc]
    systems = chosen_systems(args)
    endpoint = None
    if args.base_url:
        if not args.model_name:
            raise SystemExit("--base-url needs --model-name")
        endpoint = Endpoint(args.base_url, args.model_name, os.environ.get(args.api_key_env) or None)
    else:
        _check_model(args.model_path, "bench.repo_context")
    if ts:
        roots = {p.name: lang_sources.source_dir(p) for p in pkgs}  # type: ignore[arg-type]
        print("repo context: building the TypeScript tasks (tree-sitter over every .ts file) ...", file=sys.stderr,
              flush=True)
        cands = ts_tasks.candidates(roots)
    else:
        roots = sources.ensure_all(pkgs)  # type: ignore[arg-type]
        print("repo context: building the tasks (ast over every module) ...", file=sys.stderr, flush=True)
        cands = tasks.candidates(roots)
    chosen = tasks.spread(tasks.sample(cands, None if args.full else args.sample, args.seed), args.limit)
    if args.tasks:
        wanted_ids = set(Path(args.tasks).read_text().split())
        chosen = [t for t in chosen if t.task_id in wanted_ids]
    source = kestrel_source(args.kestrel_src)  # before the run: the code the server processes load
    got = asyncio.run(evaluate(chosen, roots, model_path=args.model_path, endpoint=endpoint, logs=out.parent,
                               systems=systems, kestrel_src=args.kestrel_src, language=args.language))
    asked: dict[str, int] = {}
    for t in chosen:
        asked[t.package] = asked.get(t.package, 0) + 1
    return {
        "run": "full" if args.full else ("limit" if args.limit is not None else ("tasks" if args.tasks else "sample")),
        **{k: v for k, v in got.items() if k != "records"},
        "config": {"sample": args.sample, "full": args.full, "limit": args.limit, "seed": args.seed, "asked": asked,
                   "ref_tokens": list(tasks.REF_TOKENS), "raw_cap": SINGLE_LINE_CAP, "oracle_chars": oracle.MAX_CONTEXT_CHARS,
                   "raw_window": {"prefix_tokens": RAW_PREFIX_TOKENS, "suffix_tokens": RAW_SUFFIX_TOKENS},
                   "temperature": 0, "kestrel": source, "out": str(out.relative_to(BENCH.parent)) if out.is_relative_to(
                       BENCH.parent) else str(out), "command": command_line(args, argv),
                   **({"language": args.language} if ts else {})},
        "packages": [asdict(p) for p in pkgs],
        "counts": tasks.counts(cands),
        "records": got["records"],
    }


def chosen_systems(args: argparse.Namespace) -> tuple[str, ...]:
    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    if not systems or set(systems) - set(SYSTEMS + PEER_SYSTEMS) or "raw" not in systems:
        raise SystemExit(f"--systems: choose from {', '.join(SYSTEMS + PEER_SYSTEMS)} (raw always)")
    return systems


def _isolate_peers(args: argparse.Namespace, argv: list[str] | None) -> int | None:
    """With a Copilot system: the packages downloaded first, then this command again inside a
    loopback-only network namespace (Copilot's telemetry cannot leave; bench.quality's way). The exit
    code of that run, or None to go on here."""
    if args.report_only or not set(chosen_systems(args)) & set(PEER_SYSTEMS):
        return None
    from bench.quality.__main__ import _reexec_in_netns
    from bench.quality.copilot import available

    why = available()
    if why:
        raise SystemExit(f"bench.repo_context: copilot: {why}")
    if args.language == "typescript":
        lang_sources.ensure_all(("typescript",))
    else:
        sources.ensure_all(sources.load_manifest())
    return _reexec_in_netns(argv, "bench.repo_context")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rc = _isolate_peers(args, argv)
    if rc is not None:
        return rc
    out, md = output_paths(args)
    if args.report_only:
        doc = json.loads(out.read_text())
    else:
        doc = run(args, out, argv)
    doc.update(summary.summarize(doc["records"], args.useful, args.noise))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(summary.dumps(doc))
    print(summary.render_table(doc))
    for pair, m in doc["margins"].items():
        print(f"paired {pair.replace('|', ' - ')} over {m['exact']['n']} tasks: exact {m['exact']['margin']:+.3f}, "
              f"useful {m['useful']['margin']:+.3f}, noise {m['noise']['margin']:+.3f}, "
              f"uses name {m['uses_name']['margin']:+.3f}, edit sim {m['edit_sim']['margin']:+.3f}")
    print(f"{doc['model']}; {doc['wall_seconds']:.0f} s; wrote {out}" + (f" and {md}" if md else ""))
    if md:
        summary.write_section(md, summary.render_markdown(doc, doc["config"].get("command") or command_line(args, argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
