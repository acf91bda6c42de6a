"""The TypeScript / JavaScript / Go / Rust completion sets of `make eval` (bench/quality/lang_*.py),
checked offline on tiny sources written here: the task builder (what is a line or block task, what
is skipped, the sample), the scorers, raw's prompt window, the pinned manifest, unpacking an npm
tarball and a .deb, one task through the runner with stand-in systems, and the report."""

from __future__ import annotations

import asyncio
import io
import random
import tarfile
from dataclasses import replace

import pytest

from bench.quality import lang_runner, lang_scoring, lang_sources, lang_summary, lang_tasks
from bench.quality.__main__ import parse_languages, write_sections
from bench.quality.lang_sources import Package
from bench.quality.lang_tasks import file_tasks, raw_window

TS = """import { z } from "zod";
import {
  a,
  b,
} from "./ab";
export { c } from "./c";

// A comment line that is long enough to count.
export function total(items: Item[], rate: number): number {
  let sum = 0;
  for (const item of items) {
    sum += item.price * item.count;
  }
  return sum * (1 + rate); // with tax
}

const message = `first line
second line ${value}`;

export class Cart {
  private items: Item[] = [];
  add(item: Item) {
    this.items.push(item);
    return this.items.length;
  }
}
"""

GO = """package shop

import (
\t"fmt"
\t"strings"
)

// Total adds the prices.
func Total(items []Item, rate float64) float64 {
\tsum := 0.0
\tfor _, it := range items {
\t\tsum += it.Price * float64(it.Count)
\t}
\treturn sum * (1 + rate)
}

func Name(s string) string {
\tswitch s {
\tcase "a":
\t\treturn strings.ToUpper(s)
\t}
\treturn fmt.Sprintf("%s!", s)
}
"""

RUST = """use std::collections::HashMap;
use std::fmt::{
    self,
    Display,
};
mod util;

/// Sum of the prices.
pub fn total(items: &[Item], rate: f64) -> f64 {
    let mut sum = 0.0;
    for item in items {
        sum += item.price * item.count as f64;
    }
    sum * (1.0 + rate)
}

impl Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name.to_uppercase();
        write!(f, "{} x{}", name, self.count)
    }
}
"""

SOURCES = {"typescript": TS, "go": GO, "rust": RUST}


def tasks_of(language: str, text: str | None = None) -> dict[str, list[lang_tasks.LangTask]]:
    got = file_tasks(SOURCES[language] if text is None else text, language, "pkg", "src/file")
    assert got is not None
    return got


def line_of(task: lang_tasks.LangTask) -> str:
    a = task.text.rfind("\n", 0, task.start) + 1
    b = task.text.find("\n", task.start)
    return task.text[a:b]


# --- the task builder -----------------------------------------------------------------------------
@pytest.mark.parametrize("language", sorted(SOURCES))
def test_every_task_rebuilds_the_real_file(language):
    got = tasks_of(language)
    assert got["line"] and got["block"]
    for t in got["line"] + got["block"]:
        assert t.prefix + t.truth + t.suffix == SOURCES[language]
        assert t.truth.strip() and t.truth == t.truth.lstrip(" \t") or t.cursor == "mid-line"
    for t in got["line"]:
        assert "\n" not in t.truth and t.suffix.startswith("\n")
    for t in got["block"]:
        assert t.prefix.rstrip(" \t").endswith("{\n") and "\n" in t.truth
        closing = t.suffix.split("\n")[1]
        assert closing.lstrip().startswith("}")


def test_line_tasks_skip_trivial_lines_comments_imports_and_strings():
    lines = {line_of(t).strip() for t in tasks_of("typescript")["line"]}
    assert "let sum = 0;" in lines and "this.items.push(item);" in lines
    assert "sum += item.price * item.count;" in lines
    for skipped in ("}", 'import { z } from "zod";', "a,", 'export { c } from "./c";',
                    "// A comment line that is long enough to count.", "return sum * (1 + rate); // with tax",
                    "const message = `first line", "second line ${value}`;"):
        assert skipped not in lines, skipped
    go = {line_of(t).strip() for t in tasks_of("go")["line"]}
    assert "package shop" not in go and '"fmt"' not in go and "sum := 0.0" in go
    rust = {line_of(t).strip() for t in tasks_of("rust")["line"]}
    assert "use std::collections::HashMap;" not in rust and "self," not in rust and "mod util;" not in rust
    assert "/// Sum of the prices." not in rust and "let mut sum = 0.0;" in rust


def test_after_indent_and_mid_line_cursors():
    got = tasks_of("typescript")["line"]
    after = next(t for t in got if t.cursor == "after indent" and t.truth == "let sum = 0;")
    assert after.prefix.endswith("\n  ") and after.task_id.endswith("/after-indent")
    mids = [t for t in got if t.cursor == "mid-line"]
    assert mids
    for t in mids:
        head = t.prefix[t.prefix.rfind("\n") + 1:]
        assert head.strip() and t.truth.strip()
        assert head[-1].isalnum() or head[-1] in "_$=([{,:.+-*/<>!&|?"  # after an identifier or an operator
        assert len(lang_tasks.WORD.findall(t.truth)) >= 1
    again = tasks_of("typescript")["line"]
    assert [t.task_id for t in again] == [t.task_id for t in got]  # the mid-line point is seeded


def test_block_tasks_are_brace_bodies_at_their_first_line():
    blocks = {t.truth for t in tasks_of("typescript")["block"]}
    assert "this.items.push(item);\n    return this.items.length;" in blocks
    assert "let sum = 0;\n  for (const item of items) {\n    sum += item.price * item.count;\n  }\n  return sum * (1 + rate); // with tax" in blocks
    assert not any(t.startswith("a,") for t in blocks)  # the multi-line import is no block
    go = {t.truth for t in tasks_of("go")["block"]}
    assert 'sum := 0.0\n\tfor _, it := range items {\n\t\tsum += it.Price * float64(it.Count)\n\t}\n\treturn sum * (1 + rate)' in go
    assert not any(t.startswith("case") for t in go)  # a Go switch body sits at the switch's indentation
    rust = {t.truth for t in tasks_of("rust")["block"]}
    assert 'let name = self.name.to_uppercase();\n        write!(f, "{} x{}", name, self.count)' in rust
    one_line = "fn f() {\n    only();\n}\n"  # a body of one line is a line task, not a block
    assert tasks_of("rust", one_line)["block"] == []


def test_files_left_out():
    assert lang_tasks.skipped_path("src/foo_test.go") == "test"
    assert lang_tasks.skipped_path("v4/classic/tests/union.test.ts") == "test"
    assert lang_tasks.skipped_path("browser/setup.test.ts") == "test"
    assert lang_tasks.skipped_path("types/globals.d.ts") == "test"
    assert lang_tasks.skipped_path("vendor/unpromise/index.ts") == "vendored"
    assert lang_tasks.skipped_path("runtime/tests/loom_pool.rs") == "test"
    assert lang_tasks.skipped_path("lib/mock/mock-agent.js") is None
    assert lang_tasks.skipped_text("// Code generated by stringer. DO NOT EDIT.\npackage x\n") == "generated"
    table = "var t = map[int][]int{\n" + "".join(f"  {i}: []int{{{i + 1}}},\n" for i in range(80)) + "}\n"
    assert lang_tasks.skipped_text(table) == "table or list"
    assert lang_tasks.skipped_text(TS) is None
    assert file_tasks("function f( {\n  let x = 1;\n}\n", "typescript", "p", "f.ts") is None  # a parse error


def test_the_sample_is_fixed_and_spread_over_packages(tmp_path):
    pkgs = []
    for k, name in enumerate(("one", "two", "three")):
        pkg = Package("typescript", name, "1.0.0", "npm", "MIT", "0" * 64, "package/src")
        root = tmp_path / pkg.key
        (root / "lib").mkdir(parents=True)
        (root / "lib" / "cart.ts").write_text(TS)
        (root / "lib" / f"cart{k}.test.ts").write_text(TS)  # a test: left out
        pkgs.append(pkg)
    roots = {p.key: tmp_path / p.key for p in pkgs}
    sizes = {"line": 7, "block": 4}
    tasks, counts = lang_tasks.plan(("typescript",), sizes, pkgs, roots=roots)
    again, _ = lang_tasks.plan(("typescript",), sizes, pkgs, roots=roots)
    assert [t.task_id for t in tasks["typescript"]["line"]] == [t.task_id for t in again["typescript"]["line"]]
    assert len(tasks["typescript"]["line"]) == 7 and len(tasks["typescript"]["block"]) == 4
    per = {}
    for t in tasks["typescript"]["line"]:
        per[t.package] = per.get(t.package, 0) + 1
    assert sorted(per.values()) == [2, 2, 3]
    c = counts["typescript"]
    assert c["files"] == 3 and c["files_skipped"] == {"test": 3}
    assert c["line"] == 3 * len(tasks_of("typescript")["line"])
    other, _ = lang_tasks.plan(("typescript",), sizes, pkgs, roots=roots, seed=7)
    assert [t.task_id for t in other["typescript"]["line"]] != [t.task_id for t in tasks["typescript"]["line"]]
    limited, _ = lang_tasks.plan(("typescript",), sizes, pkgs, roots=roots, limit=2)
    assert len({t.package for t in limited["typescript"]["line"]}) == 2


def test_raw_window_keeps_line_boundaries_and_a_stable_start():
    text = "".join(f"line {i} " + "x" * 40 + "\n" for i in range(400))
    cur1, cur2 = len(text) // 2, len(text) // 2 + 200
    p1, s1 = raw_window(text[:cur1], text[cur1:])
    p2, _ = raw_window(text[:cur2], text[cur2:])
    assert text[:cur1].endswith(p1) and p1.startswith("line ") and len(p1) <= int(1500 * 3.5)
    assert text[cur1:].startswith(s1) and s1.endswith("\n") and len(s1) <= 400 * 3.5
    assert p1[:100] == p2[:100]  # the same anchor: llama.cpp reuses the cached prefix
    assert raw_window("short", "tail") == ("short", "tail")


# --- the scorers ------------------------------------------------------------------------------
def _dp(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def test_levenshtein_matches_the_textbook_algorithm():
    rng = random.Random(5)
    for _ in range(400):
        a = "".join(rng.choice("ab(){}\n x") for _ in range(rng.randint(0, 80)))
        b = "".join(rng.choice("ab(){}\n x") for _ in range(rng.randint(0, 80)))
        assert lang_scoring.levenshtein(a, b) == _dp(a, b)
    long_a, long_b = "x" * 300 + "y" * 100, "y" * 100 + "x" * 300
    assert lang_scoring.levenshtein(long_a, long_b) == _dp(long_a, long_b)
    assert lang_scoring.edit_similarity("", "") == 1.0 and lang_scoring.edit_similarity("abc", "") == 0.0
    assert lang_scoring.edit_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)


def test_identifier_f1():
    assert lang_scoring.identifier_f1("foo(bar, baz)", "foo(bar, baz)") == 1.0
    assert lang_scoring.identifier_f1("foo(bar)", "foo(bar, baz)") == pytest.approx(2 * 1 * (2 / 3) / (1 + 2 / 3))
    assert lang_scoring.identifier_f1("", "foo") == 0.0 and lang_scoring.identifier_f1("1 + 2", "3") == 1.0
    assert lang_scoring.identifier_f1("a a", "a") == pytest.approx(2 * 0.5 * 1 / 1.5)  # multisets


def test_completion_sees_what_an_item_replaced():
    prefix, truth, suffix = "let x = fo", "o(1);", "\nnext();\n"
    assert lang_scoring.completion(prefix, truth, suffix, prefix + "o(1);" + suffix)[:2] == ("o(1);", "o(1);")
    # an item that re-typed the word before the cursor and ate the newline after it
    cand, want, start, end = lang_scoring.completion(prefix, truth, suffix, "let x = foo(2);next();\n")
    assert (cand, want) == ("o(2);", "o(1);\n") and (start, end) == (10, 15)
    assert lang_scoring.completion(prefix, truth, suffix, prefix + suffix)[0] == ""


def test_score_exact_useful_noise_and_breaks_syntax():
    prefix = "function f(a: number) {\n  const b = "
    truth, suffix = "a * 2;", "\n  return b;\n}\n"

    def score(text):
        return lang_scoring.score("typescript", prefix, truth, suffix, prefix + text + suffix, text)

    exact = score("a * 2;\n")
    assert exact["exact"] and exact["useful"] and not exact["noise"] and exact["edit_sim"] == 1.0
    assert not exact["breaks_syntax"]
    close = score("a * 3;")
    assert not close["exact"] and close["useful"] and close["ident_f1"] == 1.0
    far = score("someOtherThing.call(x, y, z);")
    assert far["noise"] and not far["useful"]
    broken = score("(a * 2;")
    assert broken["breaks_syntax"] and broken["syntax"].startswith("breaks the syntax")
    nothing = score("")
    assert not nothing["shown"] and nothing["edit_sim"] == 0.0 and not nothing["noise"]
    go = lang_scoring.score("go", "func f() int {\n\tx := ", "1", "\n\treturn x\n}\n",
                            "func f() int {\n\tx := 1 +\n\treturn x\n}\n", "1 +")
    rust = lang_scoring.score("rust", "fn f() -> i32 {\n    let x = ", "1;", "\n    x\n}\n",
                              "fn f() -> i32 {\n    let x = 1;\n    x\n}\n", "1;")
    assert rust["exact"] and not rust["breaks_syntax"] and go["shown"]


# --- the manifest and the downloads --------------------------------------------------------------
def test_manifest_pins_every_package():
    pkgs = lang_sources.load_manifest()
    assert {p.language for p in pkgs} == set(lang_sources.LANGUAGES)
    assert len({(p.language, p.name) for p in pkgs}) == len(pkgs)
    for p in pkgs:
        assert len(p.sha256) == 64 and int(p.sha256, 16) >= 0, p.name
        assert p.source in ("npm", "debian") and p.license and p.version and p.published and p.root, p.name
        assert p.source == "npm" or p.root.startswith(("usr/share/gocode/src/", "usr/share/cargo/registry/"))
    for language in lang_sources.LANGUAGES:
        assert len({p.name for p in pkgs if p.language == language}) >= 5, language
    npm_dates = [p.published for p in pkgs if p.source == "npm"]
    assert min(npm_dates) >= "2025-01-01"  # after the model was trained


def _tar(files: dict[str, str], mode: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _ar(members: dict[str, bytes]) -> bytes:
    out = b"!<arch>\n"
    for name, body in members.items():
        out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode() + body
        if len(body) % 2:
            out += b"\n"
    return out


def test_unpacking_an_npm_tarball_and_a_deb(tmp_path):
    tgz = tmp_path / "pkg.tgz"
    tgz.write_bytes(_tar({"package/src/a.ts": "let a = 1;\n", "package/src/deep/b.ts": "let b = 2;\n",
                          "package/dist/a.js": "x", "package/src/c.d.ts": "declare let c: number;\n"}, "w:gz"))
    pkg = Package("typescript", "p", "1", "npm", "MIT", "", "package/src", exclude=("deep/*",))
    assert lang_sources.unpack(pkg, tgz, tmp_path / "npm") == 2  # a.ts and c.d.ts (.d.ts is skipped later)
    assert (tmp_path / "npm" / "a.ts").read_text() == "let a = 1;\n" and not (tmp_path / "npm" / "deep").exists()
    data = _tar({"./usr/share/gocode/src/example.com/m/m.go": "package m\n",
                 "./usr/share/gocode/src/example.com/m/README.md": "hi"}, "w:xz")
    deb = tmp_path / "golang-m-dev_1_all.deb"
    deb.write_bytes(_ar({"debian-binary": b"2.0\n", "control.tar.xz": _tar({"./control": "x"}, "w:xz"),
                         "data.tar.xz": data}))
    gpkg = Package("go", "golang-m-dev", "1", "debian", "MIT", "", "usr/share/gocode/src/example.com/m")
    assert lang_sources.unpack(gpkg, deb, tmp_path / "deb") == 1
    assert (tmp_path / "deb" / "m.go").read_text() == "package m\n"
    assert lang_sources.sha256_of(deb) == __import__("hashlib").sha256(deb.read_bytes()).hexdigest()
    with pytest.raises(ValueError):
        lang_sources.deb_data(b"not a deb")


def test_language_names():
    assert parse_languages("ts,go,rs,js") == ("typescript", "go", "rust", "javascript")
    assert parse_languages("none") == () and parse_languages("") == ()
    with pytest.raises(ValueError):
        parse_languages("cobol")


# --- the runner and the report ------------------------------------------------------------------
class _RawStandIn:
    def __init__(self, text):
        self.text, self.asked = text, []

    async def complete(self, prefix, suffix, single_line):
        from bench.quality.raw import RawAnswer

        self.asked.append((prefix, suffix, single_line))
        return RawAnswer(self.text, 12.0, 3, "newline" if single_line else "stop")


class _LspStandIn:
    def __init__(self, text):
        self.text, self.asked = text, []

    async def complete(self, name, prefix, suffix, language="python", filename=None):
        from bench.quality.lsp import LspAnswer

        self.asked.append((name, language, filename))
        return LspAnswer(prefix + self.text + suffix, self.text, 34.0, 0)


def test_one_task_through_the_runner():
    task = next(t for t in tasks_of("typescript")["line"] if t.truth == "let sum = 0;")
    raw, kest = _RawStandIn("let sum = 0;\n"), _LspStandIn("let sums = 0;")
    records = asyncio.run(lang_runner.evaluate({"typescript": {"line": [task]}}, ("raw", "kestrel"), raw,
                                               {"kestrel": kest}, lambda msg: None))
    (rec,) = records
    assert rec["raw"]["exact"] and not rec["kestrel"]["exact"] and rec["kestrel"]["useful"]
    assert rec["raw"]["latency_ms"] == 12.0 and rec["first"] == "raw"
    assert kest.asked == [("file", "typescript", "file")] and raw.asked[0][2] is True


def _side(text, exact, sim, breaks=False):
    return {"text": text, "shown": bool(text), "exact": exact, "edit_sim": sim, "ident_f1": sim, "useful": sim >= 0.7,
            "noise": bool(text) and sim < 0.3, "breaks_syntax": breaks, "latency_ms": 10.0}


def _lang_doc():
    records = []
    for i in range(4):
        for language, set_name, cursor in (("go", "line", "after indent"), ("go", "line", "mid-line"),
                                           ("rust", "block", "block start")):
            records.append({"language": language, "set": set_name, "cursor": cursor,
                            "task_id": f"{language}/p/f:{i}/x", "package": "p", "path": "f", "line": i,
                            "expected": "a + b", "first": "raw",
                            "raw": _side("a - c" if i % 2 else "", False, 0.4 if i % 2 else 0.0, breaks=i == 1),
                            "kestrel": _side("a + b", True, 1.0),
                            "copilot": _side("zzz", False, 0.1)})
    lang = {"languages": ["go", "rust"],
            "config": {"sample": {"line": 60, "block": 40}, "full": False, "limit": None, "seed": 1,
                       "raw_caps": {"line": 64, "block": 160}, "raw_window": {"prefix_tokens": 1500,
                                                                              "suffix_tokens": 400}},
            "packages": [{"language": "go", "name": "p", "version": "1", "source": "debian", "license": "MIT",
                          "published": "2023-01-01"}],
            "counts": {"go": {"files": 1, "line": 10, "block": 2, "files_skipped": {"test": 1},
                              "per_package": {"p": {"files": 1, "line": 10, "block": 2}}},
                       "rust": {"files": 1, "line": 5, "block": 3, "files_skipped": {}, "per_package": {}}},
            **lang_summary.summarize(records), "records": records}
    return {"languages": lang}


def test_summary_margins_and_report():
    doc = _lang_doc()
    lang = doc["languages"]
    assert lang["systems"] == ["raw", "kestrel", "copilot"]
    go = lang["languages"]["go"]["line"]
    assert go["kestrel"]["exact"] == 8 and go["raw"]["shown"] == 4 and go["raw"]["breaks_syntax"] == 2
    assert go["raw"]["breaks_syntax_rate"] == 0.5 and go["copilot"]["noise"] == 8
    assert set(go["by_cursor"]) == {"after indent", "mid-line"}
    order = go["latency_by_order"]  # every record asked raw first: raw paid, kestrel came later
    assert order["raw"]["first"]["n"] == 8 and order["raw"]["later"]["n"] == 0 and order["kestrel"]["later"]["n"] == 8
    m = go["margins"]["kestrel-raw"]
    assert m["exact"]["b"] == 8 and m["exact"]["c"] == 0 and m["exact"]["margin"] == 1.0 and m["exact"]["p"] < 0.01
    assert set(go["margins"]) == {"kestrel-raw", "copilot-raw", "kestrel-copilot"}
    assert lang["totals"]["kestrel-raw"]["edit_sim"]["n"] == 12
    table = lang_summary.render_table(lang)
    assert "breaks syntax" in table and "50.0% (2)" in table
    md = lang_summary.render_markdown(doc)
    assert md.startswith(lang_summary.MARKER) and "| go | line | kestrel | 8 |" in md
    assert "| go | line | kestrel − raw |" in md and "Line tasks by cursor placement" in md
    assert "| go | `p` | 1 | debian | MIT | 2023-01-01 | 1 | 10 / 2 |" in md


def test_sections_of_quality_md_are_replaced_one_at_a_time(tmp_path):
    from bench.edit_quality.summary import MARKER as EDIT

    md = tmp_path / "QUALITY.md"
    md.write_text("# Python v1\n\n" + EDIT + "\n## Edits v1\n")
    write_sections(md, None, lang_summary.MARKER + "\n## Languages v1\n")
    assert md.read_text() == f"# Python v1\n\n{lang_summary.MARKER}\n## Languages v1\n\n{EDIT}\n## Edits v1\n"
    write_sections(md, "# Python v2\n", None)
    assert md.read_text() == f"# Python v2\n\n{lang_summary.MARKER}\n## Languages v1\n\n{EDIT}\n## Edits v1\n"
    write_sections(md, "# Python v3\n", lang_summary.MARKER + "\n## Languages v2\n")
    text = md.read_text()
    assert "Python v3" in text and "Languages v2" in text and "Languages v1" not in text and text.endswith("Edits v1\n")


def test_the_default_sample_sizes():
    assert lang_tasks.DEFAULT_SAMPLE == {"line": 60, "block": 40}
    assert replace(lang_sources.load_manifest()[0], sha256="x").sha256 == "x"  # frozen, copyable


def test_rust_test_modules_are_left_out():
    text = RUST + "\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        let items = vec![];\n        assert_eq!(total(&items, 0.5), 0.0);\n    }\n}\n"
    got = tasks_of("rust", text)
    assert not any("assert_eq" in t.truth or "let items" in t.truth for t in got["line"] + got["block"])
    assert len(got["line"]) == len(tasks_of("rust")["line"])


def test_runs_of_single_languages_merge_into_one_report():
    def one(language: str, commit: str) -> dict:
        doc = _lang_doc()
        lang = doc["languages"]
        keep = [r for r in lang["records"] if r["language"] == language]
        lang.update(languages=[language], records=keep, counts={language: lang["counts"][language]},
                    packages=[p for p in lang["packages"] if p["language"] == language], wall_seconds=10)
        lang.update(lang_summary.summarize(keep))
        return {"model": "m", "records": [], "wall_seconds": 10, "languages": lang,
                "config": {"kestrel": {"source": "working tree", "commit": commit}}}

    merged = lang_summary.merge([one("go", "aaa"), one("rust", "bbb")])
    whole = _lang_doc()["languages"]
    assert list(merged["languages"]["languages"]) == ["go", "rust"] and merged["wall_seconds"] == 20
    assert merged["languages"]["totals"] == whole["totals"]  # the same summary as one run of both
    md = lang_summary.render_markdown(merged)
    assert "commit aaa" in md and "commit bbb" in md
    other = one("rust", "bbb")
    other["languages"]["config"] = {**other["languages"]["config"], "seed": 2}
    with pytest.raises(ValueError, match="seed"):
        lang_summary.merge([one("go", "aaa"), other])
