"""Mine commit questions (subject -> the source files the commit changed) from a project's git history,
for the codebase-Q&A retrieval set. Run once by hand against snapshots of the projects' public
repositories (`fetch`-ed mirrors); its output is kept in bench/data/codebase-qa/commits.jsonl, so `make
eval` needs no git and no network beyond PyPI. A commit is kept when it is not a merge, changes 1-6
Python files that exist in the released version measured (tests included: they are code a user asks
about), and its subject names none of them (a subject that spells the path answers itself).

    python -m bench.codebase_qa.mine_commits --repo requests=/path/to/requests.git:v2.31.0..v2.32.5 ...
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
from pathlib import Path

MAX_FILES = 6
PER_PROJECT = 40
SEED = 2026
_NOISE = re.compile(r"^(bump|release|prepare|update changelog|changelog|\[pre-commit|pre-commit|merge|revert|version)",
                    re.IGNORECASE)


def mine(git_dir: str, revisions: str) -> list[dict]:
    out = subprocess.run(["git", "-C", git_dir, "log", "--no-merges", "--format=%x01%H%x02%s", "--name-only", revisions],
                         check=True, capture_output=True, text=True).stdout
    commits = []
    for block in out.split("\x01")[1:]:
        head, _, names = block.partition("\n")
        sha, _, subject = head.partition("\x02")
        files = [n for n in names.split("\n") if n.strip()]
        commits.append({"commit": sha, "subject": subject.strip(), "files": files})
    return commits


def keep(commit: dict, released: set[str]) -> list[str] | None:
    if _NOISE.match(commit["subject"]) or len(commit["subject"]) < 15:
        return None
    changed = [f for f in commit["files"] if f.endswith(".py")]
    if not 1 <= len(changed) <= MAX_FILES or any(f not in released for f in changed):
        return None
    if any(Path(f).stem.lower() in commit["subject"].lower() for f in changed if Path(f).stem not in ("__init__",)):
        return None
    return changed


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repo", action="append", required=True,
                   help="name=GIT_DIR:REVISIONS:SOURCE_DIR (SOURCE_DIR: the released sdist, extracted)")
    p.add_argument("--out", default="bench/data/codebase-qa/commits.jsonl")
    args = p.parse_args()
    rows = []
    for spec in args.repo:
        name, _, rest = spec.partition("=")
        git_dir, revisions, source = rest.split(":")
        released = {str(f.relative_to(source)) for f in Path(source).rglob("*.py")}
        kept = [(c, files) for c in mine(git_dir, revisions) if (files := keep(c, released))]
        random.Random(SEED).shuffle(kept)
        for c, files in sorted(kept[:PER_PROJECT], key=lambda item: item[0]["commit"]):
            rows.append({"project": name, "commit": c["commit"], "question": c["subject"], "files": files})
        print(f"{name}: {len(kept)} commits kept of {len(mine(git_dir, revisions))}, {min(len(kept), PER_PROJECT)} taken")
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
