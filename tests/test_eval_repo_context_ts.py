"""The TypeScript repository set (bench/repo_context/ts_tasks.py, ts_oracle.py), checked offline on a
small project written here: relative imports resolved (`./x.js` naming `./x.ts`, `./dir` naming
`./dir/index.ts`), re-export chains, a default import, a namespace import, the first-use rules (a
property first, used above, a shadowing parameter), the line rules, `.d.ts` and tests skipped, the
oracle's text and the repository-format prompt, the runner's language id, and the markdown section."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.quality.lsp import LspAnswer
from bench.quality.raw import RawAnswer
from bench.repo_context import prompts, runner, summary, tasks, ts_tasks

SHAPES = '''import { helper } from "../util";

/**
 * A rectangle on the canvas.
 * Its origin is the top left corner.
 */
export class Rect {
  public width: number;
  private cache = new Map();
  constructor(width: number, public height: number) {
    this.width = width;
  }
  area(): number {
    return this.width * this.height;
  }
  #secret(): void {}
  protected inner(): void {}
}

/** Scale a rectangle. */
export function scale(r: Rect, by: number): Rect;
export function scale(r: Rect, by: number, around?: Point): Rect {
  return new Rect(r.width * by, r.height * by);
}

export interface Point {
  // the horizontal position
  x: number;
  y: number;
}

export type Unit = "px" | "em";
export enum Side { Left, Right }
export const ORIGIN: Point = { x: 0, y: 0 };
export const double = (n: number): number => {
  return n * 2;
};
function internal(): void {}
'''

SHAPES_INDEX = '''export { Rect as Box, scale } from "./rect.js";
export * from "./rect";
'''

UTIL = '''export function helper(a: string): string {
  return a.trim();
}

export default function makeId(prefix: string): string {
  return prefix + "-1";
}

export const LIMIT = 10;
'''

LIB = '''export * from "./shapes/index.js";
export { helper as assist } from "./util.js";
'''

APP = '''import makeId from "./util.js";
import { Box, scale, Point, ORIGIN, Side } from "./lib";
import { assist, LIMIT } from "./lib.js";
import * as shapes from "./shapes";
import { double, Unit } from "./shapes/rect";
import { readFile } from "node:fs";

const cfg = { LIMIT: 3 };

export function build(name: string, size: number): Box {
  const id = makeId(name);
  const p: Point = { x: 1, y: 2 };
  const big = scale(new Box(size, size), 2);
  const side = shapes.Side.Left;
  const text = "ORIGIN is here"; // ORIGIN in a comment
  const max = Math.min(size, LIMIT);
  const u = (Unit: number) => Unit + 1;
  return assist(id) ? big : scale(big, double(size));
}

export function inherit(a: number, b: number): number {
  return a + b + Side.Left;
}
'''


def project(tmp_path: Path, app: str = APP) -> Path:
    root = tmp_path / "src"
    files = {"shapes/rect.ts": SHAPES, "shapes/index.ts": SHAPES_INDEX, "util.ts": UTIL, "lib.ts": LIB, "app.ts": app,
             "types.d.ts": 'import { Rect } from "./shapes/rect";\nexport declare const r: Rect;\n',
             "app.test.ts": 'import { scale } from "./lib";\nconst x = scale(new Rect(1, 2), 3);\n'}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def ws_tasks(tmp_path: Path, app: str = APP) -> tuple[ts_tasks.TsWorkspace, list[tasks.RepoTask]]:
    ws = ts_tasks.TsWorkspace(project(tmp_path, app), "shapes-pkg")
    return ws, ts_tasks.file_tasks(ws, ws.files["app.ts"])


def by_name(ts: list[tasks.RepoTask]) -> dict[str, tasks.RepoTask]:
    return {t.name: t for t in ts}


# --- resolution ---------------------------------------------------------------------------------
def test_relative_specifiers_name_ts_files():
    ws = ts_tasks.TsWorkspace.__new__(ts_tasks.TsWorkspace)
    ws.files = {k: None for k in ("a/x.ts", "a/dir/index.ts", "b.ts", "types.d.ts")}
    assert ws.module_path("a/y.ts", "./x.js") == "a/x.ts"
    assert ws.module_path("a/y.ts", "./x") == "a/x.ts"
    assert ws.module_path("a/y.ts", "./dir") == "a/dir/index.ts"
    assert ws.module_path("a/y.ts", "./dir/index.js") == "a/dir/index.ts"
    assert ws.module_path("a/y.ts", "../b") == "b.ts"
    assert ws.module_path("a/y.ts", "../types") is None  # a declaration file never resolves
    assert ws.module_path("a/y.ts", "zod") is None and ws.module_path("b.ts", "../outside") is None


def test_re_export_chains_default_and_namespace_imports_resolve(tmp_path):
    ws = ts_tasks.TsWorkspace(project(tmp_path), "shapes-pkg")
    imports = ws.imports(ws.files["app.ts"])
    assert "readFile" not in imports  # a package import is not cross-file
    got = {k: ws.target(v) for k, v in imports.items()}
    # lib -> export * from shapes/index.js -> export { Rect as Box } from ./rect.js
    assert (got["Box"].path, got["Box"].name) == ("shapes/rect.ts", "Rect")
    assert (got["Point"].path, got["ORIGIN"].path) == ("shapes/rect.ts", "shapes/rect.ts")  # through `export *` twice
    assert (got["assist"].path, got["assist"].name) == ("util.ts", "helper")  # export { helper as assist } from
    assert (got["makeId"].path, got["makeId"].name) == ("util.ts", "makeId")  # the default export
    assert got["shapes"] == ts_tasks.ModuleRef("shapes/index.ts")
    assert ws.resolve("lib.ts", "internal") is None and ws.resolve("lib.ts", "default") is None


# --- tasks --------------------------------------------------------------------------------------
def test_a_task_is_the_first_use_with_the_cursor_before_the_name(tmp_path):
    ws, ts = ws_tasks(tmp_path)
    t = by_name(ts)
    assert t["makeId"].truth == "makeId(name);" and t["makeId"].prefix.endswith("  const id = ")
    assert t["makeId"].task_id == "shapes-pkg/app.ts:11:14" and t["makeId"].tabs == ("util.ts",)
    assert t["makeId"].language == "typescript" and t["makeId"].kind == "code"
    assert t["Point"].truth == "Point = { x: 1, y: 2 };" and t["Point"].kind == "type"  # type positions count
    assert t["scale"].truth == "scale(new Box(size, size), 2);"
    assert t["scale"].names == ("scale", "Box") and t["scale"].tabs == ("shapes/rect.ts",)
    assert t["shapes"].truth == "shapes.Side.Left;"  # a namespace: the definitions it reads
    assert t["shapes"].context == (("shapes/rect.ts", "export enum Side { Left, Right }"),)
    assert t["assist"].truth == "assist(id) ? big : scale(big, double(size));"
    # every cross-file name in the reference, used above or not (as the Python set): their definitions, their files
    assert t["assist"].names == ("assist", "scale", "double") and t["assist"].tabs == ("util.ts", "shapes/rect.ts")
    for task in ts:
        assert task.prefix + task.truth + task.suffix == task.text and "\n" not in task.truth


def test_used_above_property_first_and_shadowing_give_no_task(tmp_path):
    ws, ts = ws_tasks(tmp_path)
    names = {t.name for t in ts}
    assert "Box" not in names  # first in the return type on line 10 (`Box {`: under 3 tokens), then used above
    assert "LIMIT" not in names  # first as a property name (`{ LIMIT: 3 }`): the file shows it already
    assert "Unit" not in names  # first as a parameter that shadows it
    assert "ORIGIN" not in names  # only in a string and a comment
    assert "Side" not in names  # `shapes.Side` above shows it (a property) before `Side.Left`
    side = ws.imports(ws.files["app.ts"])["Side"]
    assert ws.definitions(side, "Side.Left", "shapes/rect.ts") == []  # defined in the file itself: not cross-file


def test_used_above_in_code_gives_no_task(tmp_path):
    app = APP.replace("export function build(", "const hook = makeId;\n\nexport function build(")
    ws, ts = ws_tasks(tmp_path, app)
    assert "makeId" not in {t.name for t in ts}
    assert "hook = makeId" in app and by_name(ts)["scale"]  # the rest are still there


def test_line_rules(tmp_path):
    app = APP.replace("  const id = makeId(name);", "  const id = makeId(name); // an id").replace(
        "  const big = scale(new Box(size, size), 2);", "  const big = scale(`a\n${size}`, 2);")
    ws, ts = ws_tasks(tmp_path, app)
    names = {t.name for t in ts}
    assert "makeId" not in names  # a comment on the line
    assert "scale" not in names  # a template running past the line (and only the first use counts)
    short = APP.replace("  const big = scale(new Box(size, size), 2);", "  scale;")
    assert "scale" not in {t.name for t in ws_tasks(tmp_path / "b", short)[1]}  # `scale;`: under 3 tokens


def test_declaration_files_and_tests_are_skipped(tmp_path):
    root = project(tmp_path)
    cands = ts_tasks.candidates({"shapes-pkg": root})
    assert cands.skipped["shapes-pkg"] == {"declaration file": 1, "test": 1}
    assert cands.files["shapes-pkg"] == 5
    assert {t.path for t in cands.by_package["shapes-pkg"]} == {"app.ts"}
    assert all(t.language == "typescript" for t in cands.by_package["shapes-pkg"])
    assert tasks.sample(cands, 2, 1) == tasks.sample(cands, 2, 1) and len(tasks.sample(cands, 2, 1)) == 2


# --- the oracle ---------------------------------------------------------------------------------
def test_oracle_text(tmp_path):
    ws = ts_tasks.TsWorkspace(project(tmp_path), "shapes-pkg")
    rect = ws.resolve("shapes/rect.ts", "Rect").text
    assert rect == ("/**\n * A rectangle on the canvas.\n * Its origin is the top left corner.\n */\n"
                    "export class Rect {\n  public width: number;\n  constructor(width: number, public height: number);\n"
                    "  area(): number;\n}")
    assert ws.resolve("shapes/rect.ts", "scale").text == (
        "/** Scale a rectangle. */\nexport function scale(r: Rect, by: number): Rect;\n\n"
        "export function scale(r: Rect, by: number, around?: Point): Rect;")  # the overload and the implementation
    assert ws.resolve("shapes/rect.ts", "Point").text == "export interface Point {\n  x: number;\n  y: number;\n}"
    assert ws.resolve("shapes/rect.ts", "Unit").text == 'export type Unit = "px" | "em";'
    assert ws.resolve("shapes/rect.ts", "ORIGIN").text == "export const ORIGIN: Point = { x: 0, y: 0 };"
    assert ws.resolve("shapes/rect.ts", "double").text == "export const double = (n: number): number => { ... };"
    assert ws.resolve("util.ts", "default").text == "export default function makeId(prefix: string): string;"


def test_long_definitions_are_capped(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    methods = "\n".join(f"  method{i}(a: number, b: string): Promise<void> {{ return this.x; }}" for i in range(80))
    (root / "big.ts").write_text(f"export class Big {{\n{methods}\n}}\nexport const TABLE = {{ {', '.join(f'k{i}: {i}' for i in range(200))} }};\n")
    ws = ts_tasks.TsWorkspace(root, "p")
    big = ws.resolve("big.ts", "Big").text
    assert len(big) <= 2500 + 40 and big.endswith("more members\n}") and "method0(" in big
    table = ws.resolve("big.ts", "TABLE").text
    assert len(table) <= 400 and table.endswith(" ...")


def test_repository_prompt_of_a_ts_task(tmp_path):
    t = by_name(ws_tasks(tmp_path)[1])["makeId"]
    got = prompts.repo_prompt(t.package, t.context, t.path, "P", "S")
    assert got == ("<|repo_name|>shapes-pkg\n<|file_sep|>util.ts\n"
                   "export default function makeId(prefix: string): string;\n"
                   "<|file_sep|>app.ts\n<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>")


# --- the runner and the summary -----------------------------------------------------------------
class FakeRaw:
    async def complete(self, prefix, suffix, single_line):
        return RawAnswer("", 1.0, 0, "stop")

    async def complete_prompt(self, prompt):
        return RawAnswer("makeId(name);\n", 1.0, 3, "newline")


def test_a_ts_task_through_the_runner_and_kestrel_opens_typescript(tmp_path):
    root = project(tmp_path)
    ws = ts_tasks.TsWorkspace(root, "shapes-pkg")
    t = by_name(ts_tasks.file_tasks(ws, ws.files["app.ts"]))["makeId"]
    got = asyncio.run(runner.answer(t, "oracle", FakeRaw(), {}, {"shapes-pkg": root}))
    assert got["exact"] and got["uses_name"]
    repo = runner.KestrelRepo(runner.Endpoint("http://x", "m"), {"shapes-pkg": root}, tmp_path / "l.log",
                              language="typescript")
    opened = []

    class Client:
        def text_document_did_open(self, params):
            opened.append((params.text_document.uri.rsplit("/", 1)[1], params.text_document.language_id))

        def close_doc(self, uri):
            pass

        async def inline_items(self, params):
            return []

    repo.client = Client()
    ans = asyncio.run(repo.complete(root, t.path, t.prefix + t.suffix, t.start, t.tabs))
    assert isinstance(ans, LspAnswer) and opened == [("util.ts", "typescript"), ("app.ts", "typescript")]
    assert runner.WARM_UP["typescript"][0].endswith(".ts")
    repo.cwd.rmdir()


def test_the_ts_section_follows_the_python_one(tmp_path):
    recs = [{"task_id": f"p/x.ts:{i}:1", "package": "p", "path": "x.ts", "line": i, "kind": "type" if i % 2 else "code",
             "name": "f", "names": ["f"], "tabs": ["y.ts"], "context_chars": 10, "expected": "f(x)", "first": "raw",
             **{s: {"text": "f(x)", "latency_ms": 10.0, "shown": True, "exact": True, "edit_sim": 1.0, "ident_f1": 1.0,
                    "uses_name": True} for s in ("raw", "oracle")}} for i in range(4)]
    doc = {**summary.summarize(recs), "records": recs, "model": "m", "endpoint": "local llama.cpp", "wall_seconds": 1.0,
           "config": {"sample": 48, "full": False, "limit": None, "seed": 1, "asked": {"p": 4}, "ref_tokens": [3, 30],
                      "raw_cap": 64, "oracle_chars": 4000, "raw_window": {"prefix_tokens": 1500, "suffix_tokens": 400},
                      "out": "bench/out/x.json", "kestrel": None, "language": "typescript"},
           "packages": [{"name": "p", "version": "1", "published": "2026", "license": "MIT", "why": "w"}],
           "counts": {"tasks": 10, "per_package": {"p": {"files": 2, "tasks": 5}}}}
    md = summary.render_markdown(doc, "python -m bench.repo_context --language typescript")
    assert md.startswith(summary.TS_MARKER) and "real TypeScript packages" in md and "ts_tasks.py" in md
    assert "*type*: the name at the cursor is a type name" in md and "line started" not in md
    q = tmp_path / "QUALITY.md"
    q.write_text("# Python\n")
    summary.write_section(q, summary.MARKER + "\n## Repo v1\n")
    summary.write_section(q, md)
    summary.write_section(q, summary.MARKER + "\n## Repo v2\n")  # the Python section keeps the TS one after it
    text = q.read_text()
    assert text.startswith(f"# Python\n\n{summary.MARKER}\n## Repo v2\n\n{summary.TS_MARKER}\n") and "Repo v1" not in text
    summary.write_section(q, summary.TS_MARKER + "\n## TS v2\n")
    assert q.read_text() == f"# Python\n\n{summary.MARKER}\n## Repo v2\n\n{summary.TS_MARKER}\n## TS v2\n"


def test_a_line_repeated_in_another_file_is_one_candidate(tmp_path):
    root = project(tmp_path)
    (root / "app2.ts").write_text(APP.replace("const id = makeId(name);", "const id2 = makeId(name);"))
    cands = ts_tasks.candidates({"shapes-pkg": root})
    by_file = {}
    for t in cands.by_package["shapes-pkg"]:
        by_file.setdefault(t.path, []).append(t.name)
    assert by_file == {"app.ts": ["makeId", "Point", "scale", "shapes", "assist"], "app2.ts": ["makeId"]}
