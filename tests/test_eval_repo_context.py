"""The repository completion set of `make eval` (bench/repo_context/), checked offline on a small
package written here: which names are cross-file, the "not used above" rule, the cursor and the
reference, the line rules, the oracle definitions, the repository-format prompt, one task through
the runner with stand-in systems, the scores, the summary and its place in QUALITY.md."""

from __future__ import annotations

import asyncio
import zipfile
from pathlib import Path

import pytest
from lsprotocol import types

from bench.quality.lsp import LspAnswer, apply_item, position_of
from bench.quality.raw import RawAnswer
from bench.repo_context import oracle, prompts, runner, scoring, sources, summary, tasks

MODELS = '''"""Models."""
from dataclasses import dataclass

DEFAULT_SIZE = 3


@dataclass
class Widget:
    """A widget.

    It has a name and a size.
    """

    name: str
    size: int = DEFAULT_SIZE

    def grow(self, by: int) -> "Widget":
        """Grow it."""
        return Widget(self.name, self.size + by)

    def _secret(self) -> None:
        pass


def make_widget(name: str, *, size: int = 1) -> Widget:
    """Make a widget.

    Line two.
    Line three.
    """
    return Widget(name, size)
'''

TEXT = '''def slugify(value: str, sep: str = "-") -> str:
    """Turn a title into a slug."""
    return sep.join(value.lower().split())


def shout(value: str) -> str:
    return value.upper()
'''

APP = '''from __future__ import annotations

import os
from os.path import join

from mypkg import Widget
from .models import make_widget, DEFAULT_SIZE
from .util import slugify, shout
from . import util
from .missing import Ghost


def build(name: str) -> Widget:
    widget = make_widget(slugify(name), size=DEFAULT_SIZE)
    again = Widget("b", 2)
    return widget


class Holder:
    def __init__(self) -> None:
        self.shout = None

    def run(self, label: str) -> str:
        text = shout(label) + join("a", "b")
        ghost = Ghost(label, os.sep, label, label)
        return util.slugify(label, sep="_")
'''


def write_pkg(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def pkg(tmp_path: Path, app: str = APP) -> tasks.Workspace:
    root = write_pkg(tmp_path / "ws", {
        "mypkg/__init__.py": 'from .models import Widget\n\n__all__ = ["Widget"]\n',
        "mypkg/models.py": MODELS,
        "mypkg/util/__init__.py": "from .text import *\n",
        "mypkg/util/text.py": TEXT,
        "mypkg/app.py": app,
    })
    return tasks.Workspace(root, "mypkg-dist")


def app_tasks(tmp_path: Path, app: str = APP) -> list[tasks.RepoTask]:
    ws = pkg(tmp_path, app)
    return tasks.file_tasks(ws, ws.modules["mypkg.app"])


# --- the static analysis ----------------------------------------------------------------------
def test_cross_file_names_resolve_through_re_exports_and_star_imports(tmp_path):
    ws = pkg(tmp_path)
    b = ws.bindings(ws.modules["mypkg.app"])
    assert set(b) == {"Widget", "make_widget", "DEFAULT_SIZE", "slugify", "shout", "util", "Ghost"}  # no os / join
    widget = ws.resolve(b["Widget"].module, b["Widget"].attr)
    assert widget is not None and widget[0].path == "mypkg/models.py" and widget[1].name == "Widget"
    slug = ws.resolve(b["slugify"].module, b["slugify"].attr)  # util/__init__ re-exports with `*`
    assert slug is not None and slug[0].path == "mypkg/util/text.py"
    assert ws.resolve(b["util"].module, b["util"].attr) == (ws.modules["mypkg.util"], None)  # a module
    assert ws.resolve(b["Ghost"].module, b["Ghost"].attr) is None  # not in the package: not cross-file


def test_a_task_is_the_first_use_with_the_cursor_before_the_name(tmp_path):
    got = app_tasks(tmp_path)
    by_name = {t.name: t for t in got}
    t = by_name["make_widget"]
    assert t.prefix.endswith("    widget = ") and t.truth == "make_widget(slugify(name), size=DEFAULT_SIZE)"
    assert t.prefix + t.truth + t.suffix == APP and t.suffix.startswith("\n    again")
    assert t.names == ("make_widget", "slugify", "DEFAULT_SIZE") and t.kind == "code"
    assert t.tabs == ("mypkg/models.py", "mypkg/util/text.py")
    assert t.task_id == f"mypkg-dist/mypkg/app.py:{t.line}:14"
    # one task per line: slugify and DEFAULT_SIZE are first used on the same line
    assert "slugify" not in by_name and "DEFAULT_SIZE" not in by_name


def test_used_above_means_no_task(tmp_path):
    got = {t.name: t for t in app_tasks(tmp_path)}
    # Widget's first use is the annotation `Widget:` (2 tokens: too short); `Widget("b", 2)` later is used above
    assert "Widget" not in got
    # shout first appears as an attribute (`self.shout`): the file shows the name already
    assert "shout" not in got
    assert "Ghost" not in got  # unresolved
    # a module bound by `from . import util`: its definitions are the attributes the line reads
    t = got["util"]
    assert t.truth == 'util.slugify(label, sep="_")'
    assert t.context[0][0] == "mypkg/util/text.py" and t.context[0][1].startswith("def slugify(value: str")


def test_line_rules_comment_multiline_string_and_length(tmp_path):
    app = APP.replace('    again = Widget("b", 2)\n', "")
    with_comment = app.replace("size=DEFAULT_SIZE)\n", "size=DEFAULT_SIZE)  # why\n")
    assert "make_widget" not in {t.name for t in app_tasks(tmp_path / "a", with_comment)}
    multi = app.replace("    widget = make_widget(slugify(name), size=DEFAULT_SIZE)\n",
                        '    widget = make_widget("""\n    x""")\n')
    assert "make_widget" not in {t.name for t in app_tasks(tmp_path / "b", multi)}
    long_args = ", ".join(f"a{i}" for i in range(20))
    long = app.replace("make_widget(slugify(name), size=DEFAULT_SIZE)", f"make_widget({long_args})")
    assert "make_widget" not in {t.name for t in app_tasks(tmp_path / "c", long)}  # > 30 tokens
    short = app.replace("make_widget(slugify(name), size=DEFAULT_SIZE)", "make_widget")
    assert "make_widget" not in {t.name for t in app_tasks(tmp_path / "d", short)}  # 1 token
    three = app.replace("make_widget(slugify(name), size=DEFAULT_SIZE)", "make_widget()")
    got = {t.name: t for t in app_tasks(tmp_path / "e", three)}
    assert got["make_widget"].truth == "make_widget()"  # 3 tokens: the shortest reference


def test_annotation_kind_and_the_sample(tmp_path):
    app = APP.replace("def build(name: str) -> Widget:", "def build(name: str, w: Widget | None = None) -> None:")
    got = {t.name: t for t in app_tasks(tmp_path / "a", app)}
    assert got["Widget"].kind == "annotation" and got["Widget"].truth == "Widget | None = None) -> None:"
    ws_root = pkg(tmp_path / "b").root
    cands = tasks.candidates({"one": ws_root, "two": ws_root})
    assert tasks.counts(cands)["per_package"]["one"]["tasks"] == len(cands.by_package["one"]) > 0
    picked = tasks.sample(cands, 3, seed=1)
    assert len(picked) == 3 and {t.package for t in picked} == {"one", "two"}
    assert picked == tasks.sample(cands, 3, seed=1)
    assert tasks.spread(picked, 2) == [picked[0], picked[1]] and tasks.spread(picked, None) == picked


# --- the oracle ---------------------------------------------------------------------------------
def _node(src: str, name: str):
    import ast

    return next(n for n in ast.parse(src).body if getattr(n, "name", None) == name or (
        hasattr(n, "targets") and n.targets[0].id == name))


def test_oracle_renders_signatures_docstrings_fields_and_methods():
    fn = oracle.render(_node(MODELS, "make_widget"))
    assert fn.startswith("def make_widget(name: str, *, size: int=1) -> Widget:\n")
    assert '"""Make a widget.\n\n    Line two.\n    Line three.\n    """' in fn and fn.endswith("...")
    assert "return" not in fn
    cls = oracle.render(_node(MODELS, "Widget"))
    assert cls.startswith("@dataclass\nclass Widget:\n") and "name: str\n    size: int = DEFAULT_SIZE" in cls
    assert "def grow(self, by: int) -> 'Widget':\n        ..." in cls
    assert "_secret" not in cls and "Grow it" not in cls  # private methods and method bodies left out
    assert oracle.render(_node(MODELS, "DEFAULT_SIZE")) == "DEFAULT_SIZE = 3"
    many = "class Big:\n" + "".join(f"    def m{i}(self, a, b, c) -> int:\n        return {i}\n" for i in range(200))
    big = oracle.render(_node(many, "Big"))
    assert len(big) <= oracle.MAX_CLASS_CHARS + 40 and big.rstrip().endswith("more methods")
    long_doc = 'def f():\n    """' + "\n".join(f"line {i}" for i in range(40)) + '"""\n'
    assert oracle.render(_node(long_doc, "f")).count("line ") == oracle.DOC_LINES


def test_context_files_group_by_module_within_the_budget():
    defs = [oracle.Definition("a", "p/x.py", "A" * 10), oracle.Definition("b", "p/y.py", "B" * 10),
            oracle.Definition("c", "p/x.py", "C" * 10), oracle.Definition("a", "p/x.py", "A" * 10)]
    assert oracle.context_files(defs) == (("p/x.py", "A" * 10 + "\n\n\n" + "C" * 10), ("p/y.py", "B" * 10))
    assert oracle.context_files(defs, budget=25) == (("p/x.py", "A" * 10), ("p/y.py", "B" * 10))
    assert oracle.context_files([oracle.Definition("z", "p/z.py", "Z" * 50)], budget=20) == (("p/z.py", "Z" * 20),)


# --- the prompt and the runner ------------------------------------------------------------------
def test_repository_format_prompt():
    got = prompts.repo_prompt("mypkg", (("mypkg/models.py", "def f(): ..."), ("mypkg/util.py", "X = 1")),
                              "mypkg/app.py", "a = ", "\nb = 2\n")
    assert got == ("<|repo_name|>mypkg\n<|file_sep|>mypkg/models.py\ndef f(): ...\n<|file_sep|>mypkg/util.py\nX = 1\n"
                   "<|file_sep|>mypkg/app.py\n<|fim_prefix|>a = <|fim_suffix|>\nb = 2\n<|fim_middle|>")
    # no context: the bare FIM prompt (a lone <|file_sep|> header made the 0.5B ignore the suffix)
    assert prompts.repo_prompt("mypkg", (), "mypkg/app.py", "a = ", "") == "<|fim_prefix|>a = <|fim_suffix|><|fim_middle|>"


class FakeRaw:
    def __init__(self, text: str) -> None:
        self.text, self.calls = text, []

    async def complete(self, prefix, suffix, single_line):
        self.calls.append(("fim", prefix, suffix, single_line))
        return RawAnswer(self.text, 12.0, 3, "newline")

    async def complete_prompt(self, prompt):
        self.calls.append(("prompt", prompt))
        return RawAnswer(self.text, 15.0, 3, "newline")


class FakeKestrel:
    def __init__(self) -> None:
        self.calls = []

    async def complete(self, root, path, text, cursor, tabs=()):
        self.calls.append((path, cursor, tabs, text))
        return LspAnswer(text[:cursor] + "make_widget(x)" + text[cursor:], "make_widget(x)", 20.0, 0)

    async def context(self, path):
        return {"definitions": ["mypkg/models.py:make_widget"], "chars": 40, "resolved": 1}


def test_one_task_through_every_system(tmp_path):
    t = next(t for t in app_tasks(tmp_path) if t.name == "make_widget")
    rawc, kest, tabs, bare = FakeRaw(t.truth + "\n"), FakeKestrel(), FakeKestrel(), FakeKestrel()
    sessions = {"kestrel": kest, "kestrel-tabs": tabs, "kestrel-nocontext": bare, "kestrel-budget": FakeKestrel()}
    got = {s: asyncio.run(runner.answer(t, s, rawc, sessions, {"mypkg-dist": tmp_path})) for s in runner.SYSTEMS}
    assert got["raw"]["exact"] and got["oracle"]["exact"] and got["raw"]["uses_name"]
    assert rawc.calls[0] == ("fim", t.prefix, t.suffix, True)  # a short file fits raw's window whole
    assert rawc.calls[1][1].startswith("<|repo_name|>mypkg-dist\n<|file_sep|>mypkg/models.py\n")
    assert rawc.calls[1][1].endswith(f"<|file_sep|>mypkg/app.py\n<|fim_prefix|>{t.prefix}<|fim_suffix|>{t.suffix}"
                                     "<|fim_middle|>")
    held = t.prefix + t.suffix  # the editor holds the file without the reference
    assert kest.calls == [("mypkg/app.py", t.start, (), held)] and tabs.calls == [("mypkg/app.py", t.start, t.tabs, held)]
    assert not got["kestrel"]["exact"] and got["kestrel"]["uses_name"] and got["kestrel"]["latency_ms"] == 20.0


class FakeCopilot:
    def __init__(self) -> None:
        self.calls = []

    async def complete(self, package, path, text, cursor, tabs=()):
        self.calls.append((package, path, cursor, tabs))
        line_start = text.rfind("\n", 0, cursor) + 1  # Copilot answers whole lines, from column 0
        item = types.InlineCompletionItem(insert_text=text[line_start:cursor] + "make_widget(x)",
                                          range=types.Range(start=position_of(text, line_start),
                                                            end=position_of(text, cursor)))
        doc, inserted = apply_item(text, cursor, item)
        return LspAnswer(doc, inserted, 30.0, 0)


def test_copilot_gets_the_package_path_and_the_same_tabs(tmp_path):
    t = next(t for t in app_tasks(tmp_path) if t.name == "make_widget")
    alone, with_tabs = FakeCopilot(), FakeCopilot()
    sessions = {"copilot": alone, "copilot-tabs": with_tabs}
    got = {s: asyncio.run(runner.answer(t, s, FakeRaw(""), sessions, {"mypkg-dist": tmp_path}))
           for s in runner.PEER_SYSTEMS}
    assert alone.calls == [(t.package, t.path, t.start, ())] and with_tabs.calls == [(t.package, t.path, t.start, t.tabs)]
    # scored on the document: Copilot's whole-line answer counts as the completion it makes
    assert got["copilot"]["text"].endswith(" = make_widget(x)") and got["copilot"]["uses_name"]
    assert got["copilot"]["edit_sim"] == asyncio.run(runner.answer(t, "kestrel", FakeRaw(""), {"kestrel": FakeKestrel()},
                                                                   {"mypkg-dist": tmp_path}))["edit_sim"]
    assert "context" not in got["copilot"]
    s = summary.summarize([_rec(i, {"raw": 0.35, "kestrel": 1.0, "kestrel-tabs": 1.0, "copilot": 0.0,
                                    "copilot-tabs": 0.5}) for i in range(4)])
    assert s["systems"] == ["raw", "kestrel", "kestrel-tabs", "copilot", "copilot-tabs"]
    assert s["margins"]["kestrel-tabs|copilot-tabs"]["exact"]["b"] == 4 and "kestrel|copilot" in s["margins"]
    assert len(s["examples"]["kestrel_tabs_useful_copilot_tabs_not"]) > 0 and s["examples"]["oracle_useful_raw_not"] == []
    # a run of some systems only (here without the oracle and kestrel-nocontext) still summarizes
    assert summary.summarize([_rec(i, {"raw": 0.35, "kestrel-tabs": 1.0, "copilot-tabs": 0.0}) for i in range(2)])


def test_copilot_finds_the_stand_ins_certificate_from_its_own_folder(tmp_path, monkeypatch):
    # The LS runs with its workspace as the current folder: a relative log folder (bench/out/...) made
    # NODE_EXTRA_CA_CERTS point nowhere, and every request failed on the stand-in's self-signed certificate.
    from bench.quality.copilot import CopilotSession

    monkeypatch.chdir(tmp_path)
    session = CopilotSession("http://127.0.0.1:1/v1", "m", Path("bench/out/x"))
    assert session.logs.is_absolute() and session.logs == tmp_path / "bench/out/x"


def test_a_copilot_system_runs_isolated_and_only_when_asked(monkeypatch):
    from bench.repo_context import __main__ as main

    calls = []
    monkeypatch.setattr("bench.quality.copilot.available", lambda: None)
    monkeypatch.setattr(main.sources, "ensure_all", lambda pkgs=None: calls.append("download") or {})
    monkeypatch.setattr("bench.quality.__main__._reexec_in_netns", lambda argv, module: calls.append(module) or 0)
    assert main._isolate_peers(main.parse_args(["--systems", "raw,kestrel"]), None) is None and calls == []
    assert main._isolate_peers(main.parse_args(["--systems", "raw,copilot-tabs"]), None) == 0
    assert calls == ["download", "bench.repo_context"]  # the packages before the network is cut off
    with pytest.raises(SystemExit):
        main.chosen_systems(main.parse_args(["--systems", "raw,copilot-everything"]))


# --- scores and the summary ---------------------------------------------------------------------
def test_scores(tmp_path):
    t = next(t for t in app_tasks(tmp_path) if t.name == "make_widget")
    exact = scoring.score(t, t.prefix + t.truth + "  \n" + t.suffix[1:], t.truth + "  \n")
    assert exact == {"shown": True, "exact": True, "edit_sim": 1.0, "ident_f1": 1.0, "uses_name": True}
    none = scoring.score(t, t.text, "")
    assert none == {"shown": False, "exact": False, "edit_sim": 0.0, "ident_f1": 0.0, "uses_name": False}
    other = scoring.score(t, t.prefix + "Widget(name)" + t.suffix, "Widget(name)")
    assert other["shown"] and not other["exact"] and not other["uses_name"] and 0 < other["edit_sim"] < 0.5


def _rec(i: int, sims: dict[str, float], first: str = "raw") -> dict:
    return {"task_id": f"p/x.py:{i}:1", "package": "p" if i % 2 else "q", "path": "x.py", "line": i,
            "kind": "code" if i % 3 else "annotation", "name": "f", "names": ["f"], "tabs": ["y.py"],
            "context_chars": 10, "expected": "f(x)", "first": first,
            **{s: {"text": "f(x)" if v else "", "latency_ms": 100.0 + i, "shown": v > 0, "exact": v == 1.0,
                   "edit_sim": v, "ident_f1": v, "uses_name": v > 0.5} for s, v in sims.items()}}


def test_summary_thresholds_margins_and_markdown():
    sims = {"raw": 0.35, "oracle": 1.0, "kestrel": 0.0, "kestrel-tabs": 0.8, "kestrel-nocontext": 0.0,
            "kestrel-budget": 0.0}
    recs = [_rec(i, sims, first=runner.SYSTEMS[i % 4]) for i in range(8)]
    s = summary.summarize(recs)
    assert s["systems"] == list(runner.SYSTEMS) and s["thresholds"] == {"useful": 0.7, "noise": 0.4}
    assert s["overall"]["raw"]["noise"] == 8 and s["overall"]["oracle"]["useful"] == 8
    assert summary.summarize(recs, noise=0.3)["overall"]["raw"]["noise"] == 0  # the threshold is a parameter
    m = s["margins"]["oracle|raw"]
    assert m["useful"]["b"] == 8 and m["useful"]["c"] == 0 and m["useful"]["p"] < 0.01 and m["edit_sim"]["margin"] == 0.65
    assert s["margins"]["kestrel-tabs|kestrel"]["useful"]["margin"] == 1.0
    assert set(s["by_package"]) == {"p", "q"} and set(s["by_kind"]) == {"code", "annotation"}
    assert s["latency_by_order"]["raw"]["first"]["n"] == 2 and s["raw_exact_tasks"] == 0
    doc = {**s, "records": recs, "model": "m", "endpoint": "local llama.cpp", "wall_seconds": 1.0,
           "config": {"sample": 48, "full": False, "limit": None, "seed": 1, "asked": {"p": 4, "q": 4},
                      "ref_tokens": [3, 30], "raw_cap": 64, "oracle_chars": 4000,
                      "raw_window": {"prefix_tokens": 1500, "suffix_tokens": 400}, "out": "bench/out/x.json",
                      "kestrel": {"source": "working tree", "commit": "abc"}},
           "packages": [{"name": "p", "version": "1", "published": "2026", "first": "2025", "license": "MIT",
                         "why": "w"}], "counts": {"tasks": 10, "per_package": {"p": {"files": 2, "tasks": 5}}}}
    md = summary.render_markdown(doc, "make eval")
    assert md.startswith(summary.MARKER) and "| oracle − raw |" in md and "**noise** = shown and edit sim < 0.4" in md
    assert "kestrel-tabs" in summary.render_table(doc)


def test_the_repository_section_stays_last_in_quality_md(tmp_path):
    from bench.edit_quality.__main__ import write_section as write_edit
    from bench.edit_quality.summary import END_MARKER as END
    from bench.edit_quality.summary import MARKER as EDIT
    from bench.quality.__main__ import write_sections

    md = tmp_path / "QUALITY.md"
    md.write_text("# Python v1\n")
    summary.write_section(md, summary.MARKER + "\n## Repo v1\n")
    assert md.read_text() == f"# Python v1\n\n{summary.MARKER}\n## Repo v1\n"
    write_edit(md, EDIT + "\n## Edits v1\n")
    assert md.read_text() == f"# Python v1\n\n{EDIT}\n## Edits v1\n\n{END}\n\n{summary.MARKER}\n## Repo v1\n"
    write_sections(md, "# Python v2\n", None)
    assert md.read_text() == f"# Python v2\n\n{EDIT}\n## Edits v1\n\n{END}\n\n{summary.MARKER}\n## Repo v1\n"
    summary.write_section(md, summary.MARKER + "\n## Repo v2\n")
    write_edit(md, EDIT + "\n## Edits v2\n")
    assert md.read_text() == f"# Python v2\n\n{EDIT}\n## Edits v2\n\n{END}\n\n{summary.MARKER}\n## Repo v2\n"


def test_a_rerun_of_the_edit_section_keeps_the_subsections_written_by_hand(tmp_path):
    from bench.edit_quality.__main__ import write_section as write_edit
    from bench.edit_quality.summary import END_MARKER as END
    from bench.edit_quality.summary import MARKER as EDIT

    md = tmp_path / "QUALITY.md"
    md.write_text(f"# Top\n\n{EDIT}\n## Edits v1\nold rows\n\n{END}\n\n### By hand\nkept text\n\n"
                  f"{summary.MARKER}\n## Repo\n")
    write_edit(md, EDIT + "\n## Edits v2\nnew rows\n")
    text = md.read_text()
    assert "old rows" not in text and "new rows" in text
    assert text == f"# Top\n\n{EDIT}\n## Edits v2\nnew rows\n\n{END}\n\n### By hand\nkept text\n\n{summary.MARKER}\n## Repo\n"
    md.write_text(f"# Top\n\n{EDIT}\n## Edits v1\n\n{END}\n\n### By hand, last\n")  # no repository section
    write_edit(md, EDIT + "\n## Edits v3\n")
    assert md.read_text() == f"# Top\n\n{EDIT}\n## Edits v3\n\n{END}\n\n### By hand, last\n"


# --- the packages -------------------------------------------------------------------------------
def test_manifest_and_unpacking_a_wheel(tmp_path):
    pkgs = sources.load_manifest()
    assert 4 <= len(pkgs) <= 6 and len({p.module for p in pkgs}) == len(pkgs)
    assert all(len(p.sha256) == 64 and p.published >= "2025" and p.license for p in pkgs)
    whl = tmp_path / "x.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("mypkg/__init__.py", "X = 1\n")
        zf.writestr("mypkg/sub/a.py", "Y = 2\n")
        zf.writestr("mypkg/data.json", "{}")
        zf.writestr("mypkg-1.0.dist-info/METADATA", "")
        zf.writestr("other/b.py", "Z = 3\n")
    assert sources.unpack(whl, "mypkg", tmp_path / "out") == 2
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.py")) == [
        "mypkg/__init__.py", "mypkg/sub/a.py"]


def test_a_name_seen_above_its_import_gives_no_task(tmp_path):
    # make_widget appears in code before its (late) import: the file shows it, so no task for it
    app = APP.replace("from .models import make_widget, DEFAULT_SIZE\n", "from .models import DEFAULT_SIZE\n")
    app = app.replace("def build(", "HOOK = make_widget\nfrom .models import make_widget\n\n\ndef build(")
    assert "from .models import make_widget" in app and app.index("HOOK") < app.index("widget = make_widget")
    assert "make_widget" not in {t.name for t in app_tasks(tmp_path, app)}


def test_the_engine_recall_counts_the_name_at_the_cursor_among_what_was_sent():
    recs = [_rec(i, {"raw": 0.0, "kestrel": 0.0}) for i in range(4)]
    recs[0]["kestrel"]["context"] = {"definitions": ["y.py:g", "y.py:f"], "chars": 80, "resolved": 2}
    recs[1]["kestrel"]["context"] = {"definitions": ["y.py:g"], "chars": 30, "resolved": 2}
    recs[2]["kestrel"]["context"] = None  # the answer came from a cache: not counted
    e = summary.summarize(recs)["engine"]
    assert e == {"tasks": 2, "sent_the_name": 1, "misses": ["p/x.py:1:1 (f)"], "chars_p50": 80, "chars_max": 80}
    assert summary.summarize([_rec(0, {"raw": 0.0, "kestrel": 0.0})])["engine"] is None  # an older Kestrel
