"""Repository context for TypeScript and JavaScript: exported declarations outlined as a .d.ts shows
them, relative imports resolved (`./x`, `./x.js` naming `./x.ts`, `./dir/index.ts`, re-exports and
`export *`), and the model receives them with a TypeScript file open alone."""

from __future__ import annotations

from pathlib import Path

from conftest import complete, kestrel, mock_options, open_doc
from kestrel.context.ts_outline import import_statements_ts, imported_names_ts, outline_ts
from kestrel.context.workspace_index import WorkspaceIndex

SHAPES = '''import { helper } from "./util";

/**
 * A rectangle on the canvas.
 * Its origin is the top left corner.
 */
export class Rect {
  public width: number;
  private cache = new Map();
  constructor(width: number, public height: number) { this.width = width; }
  area(): number { return this.width * this.height; }
  #secret(): void {}
  protected inner(): void {}
}

export function scale(r: Rect, by: number): Rect {
  return new Rect(r.width * by, r.height * by);
}

export interface Style { stroke: string; fill?: string }
export type Unit = "px" | "em";
export const ORIGIN: { x: number; y: number } = { x: 0, y: 0 };
export const double = (n: number): number => n * 2;
function internal(): void {}
'''


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "web"
    (ws / "src" / "geometry").mkdir(parents=True)
    (ws / "src" / "geometry" / "shapes.ts").write_text(SHAPES)
    (ws / "src" / "geometry" / "index.ts").write_text('export * from "./shapes";\nexport { double as twice } from "./shapes";\n')
    (ws / "src" / "util.ts").write_text("export function helper(): void {}\n")
    return ws


def test_exports_are_outlined_as_declarations():
    out = outline_ts(SHAPES)
    assert out.definitions["Rect"] == (
        "/** A rectangle on the canvas. */\nexport class Rect {\n  public width: number;\n"
        "  constructor(width: number, public height: number);\n  area(): number;\n}")
    assert out.definitions["scale"] == "export function scale(r: Rect, by: number): Rect;"
    assert out.definitions["Style"] == "export interface Style { stroke: string; fill?: string }"
    assert out.definitions["Unit"] == 'export type Unit = "px" | "em";'
    assert out.definitions["ORIGIN"] == "export const ORIGIN: { x: number; y: number };"
    assert out.definitions["double"] == "export const double = (n: number): number => ...;"
    assert "internal" not in out.definitions and "helper" not in out.definitions
    assert out.header("Rect") == "export class Rect { ... }"


def test_imports_of_a_file_only_relative_ones():
    src = ('import React from "react";\nimport { Rect, scale as grow, type Style } from "./geometry";\n'
           'import * as util from "../util.js";\nimport Default, { Unit } from "./geometry/shapes";\n'
           'const s = "import x from \'./nope\'";\n')
    statements = import_statements_ts(src)
    assert len(statements) == 4
    names = [(n.bound, n.module, n.name) for n in imported_names_ts("\n".join(statements))]
    assert names == [("Rect", "./geometry", "Rect"), ("grow", "./geometry", "scale"), ("Style", "./geometry", "Style"),
                     ("util", "../util.js", None), ("Unit", "./geometry/shapes", "Unit"),
                     ("Default", "./geometry/shapes", "default")]


def test_relative_specifiers_resolve_through_index_files_js_names_and_star_exports(tmp_path):
    ws = workspace(tmp_path)
    index = WorkspaceIndex()
    index.set_roots([str(ws)])
    app = ws / "src" / "app.ts"
    shapes = (ws / "src" / "geometry" / "shapes.ts").resolve()
    assert index.resolve_module(app, 0, "./geometry/shapes") == shapes
    assert index.resolve_module(app, 0, "./geometry/shapes.js") == shapes  # TS source names its output
    package = index.resolve_module(app, 0, "./geometry")
    assert package == (ws / "src" / "geometry" / "index.ts").resolve()
    assert index.resolve_module(app, 0, "react") is None
    found = index.definition(package, "scale")  # through `export * from "./shapes"`
    assert found is not None and found.path == "src/geometry/shapes.ts"
    twice = index.definition(package, "twice")  # `export { double as twice } from`
    assert twice is not None and twice.text.startswith("export const double")


async def test_the_model_receives_imported_declarations_for_a_typescript_file(mock, tmp_path):
    ws = workspace(tmp_path)
    app = ws / "src" / "app.ts"
    text = 'import { Rect, scale } from "./geometry";\n\nconst r = new Rect(1, 2);\nconst big = '
    mock.configure(text="scale(r, 2);")
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b"), workspace=ws) as client:
        open_doc(client, app.as_uri(), text, language="typescript")
        await complete(client, app.as_uri(), 3, 12)
        prompt = mock.stats()["last_request"]["prompt"]
    assert prompt.startswith(f"<|repo_name|>{ws.name}\n<|file_sep|>src/geometry/shapes.ts\n"
                             "/** A rectangle on the canvas. */\nexport class Rect {")
    assert "export function scale(r: Rect, by: number): Rect;" in prompt
    assert "<|file_sep|>src/app.ts\n<|fim_prefix|>import { Rect, scale }" in prompt
