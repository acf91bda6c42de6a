"""The repository completion set (issue 23), CrossCodeEval's construction on real Python packages:
lines that use a name imported from another module of the same package, not used above in the file.
`python -m bench.repo_context --help`; `make eval` runs it last (REPO=none skips it).

- packages.toml / sources.py: the pinned packages (PyPI wheels, sha256), downloaded into the cache;
- tasks.py: the static analysis (imports, re-exports, first uses) and the seeded sample;
- oracle.py: the definitions of the cross-file names, rendered as a context engine would send them;
- prompts.py: Qwen2.5-Coder's repository-format prompt and the raw client;
- runner.py: raw, oracle, kestrel, kestrel-tabs on one model endpoint; scoring.py; summary.py (its
  section of bench/QUALITY.md, always the last).
"""
