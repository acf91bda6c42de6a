"""The retrieval questions: SWE-QA's (a question and a reference answer that names the files that
answer it: those files are the reference) and commit subjects (the Python files the commit changed)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data" / "codebase-qa"
_PATH = re.compile(r"[\w./-]*[\w-]+\.(?:py|pyi|cfg|toml|ini)\b")
MAX_SUFFIX_MATCHES = 2  # a bare `utils.py` names the file when at most two files end so


@dataclass(frozen=True)
class Question:
    id: str
    kind: str  # "swe-qa" or "commit"
    project: str
    question: str
    files: tuple[str, ...]  # the reference files, relative to the workspace


def _files_of(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _referenced(answer: str, files: list[str]) -> tuple[str, ...]:
    found: list[str] = []
    for cited in dict.fromkeys(_PATH.findall(answer)):
        cited = cited.removeprefix("./").lstrip("/")
        matches = [f for f in files if f == cited] or [f for f in files if f.endswith("/" + cited)]
        if 1 <= len(matches) <= MAX_SUFFIX_MATCHES:
            found.extend(m for m in matches if m not in found)
    return tuple(found)


def swe_qa(project: str, root: Path) -> list[Question]:
    files = _files_of(root)
    out = []
    for n, line in enumerate((DATA / "swe-qa" / f"{project}.jsonl").read_text().splitlines()):
        row = json.loads(line)
        refs = _referenced(row["answer"], files)
        if refs:
            out.append(Question(f"{project}/swe-qa/{n}", "swe-qa", project, row["question"], refs))
    return out


def commits(project: str, root: Path) -> list[Question]:
    out = []
    for line in (DATA / "commits.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["project"] != project:
            continue
        refs = tuple(f for f in row["files"] if (root / f).is_file())
        if refs:
            out.append(Question(f"{project}/commit/{row['commit'][:10]}", "commit", project, row["question"], refs))
    return out
