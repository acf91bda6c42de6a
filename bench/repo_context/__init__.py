"""The repository completion set (issue 23), CrossCodeEval's construction on real Python packages:
lines that use a name imported from another module of the same package, not used above in the file.
`python -m bench.repo_context --help`; `make eval` runs it last (REPO=none skips it).

A TypeScript set beside it (`python -m bench.repo_context --language typescript`, not part of `make
eval`): the same construction and systems on the languages eval's pinned npm packages
(bench/quality/languages.toml, fetched by bench/quality/lang_sources.py; the package's `src/` is the
workspace). ts_tasks.py reads every `.ts` file with tree-sitter (not Kestrel's resolver): a task is
the first use of a name imported from a relative specifier (`./x.js` -> `./x.ts`, `./dir` ->
`./dir/index.ts`; named, default and namespace imports) that resolves, through `export ... from`
and `export *` re-exports, to a declaration in another file; ts_oracle.py renders the definitions.

- packages.toml / sources.py: the pinned packages (PyPI wheels, sha256), downloaded into the cache;
- tasks.py: the static analysis (imports, re-exports, first uses) and the seeded sample;
- ts_tasks.py / ts_oracle.py: the same for TypeScript (tree-sitter), and its oracle definitions;
- oracle.py: the definitions of the cross-file names, rendered as a context engine would send them;
- prompts.py: Qwen2.5-Coder's repository-format prompt and the raw client;
- runner.py: raw, oracle, kestrel, kestrel-tabs on one model endpoint; scoring.py; summary.py (its
  section of bench/QUALITY.md, always the last).
"""
