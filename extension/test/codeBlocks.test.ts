import { describe, expect, it } from "vitest";
import { blockTarget, isShellLang, langFromPath, mergeBlock, stripFileComment } from "../src/chat/codeBlocks";

const lines = (...l: string[]) => l.join("\n");

describe("blockTarget: the file a block names", () => {
  it("reads the fence's info string in its usual forms", () => {
    expect(blockTarget("python", [], "x = 1")).toEqual({ lang: "python" });
    expect(blockTarget("python models.py", [], "x = 1")).toEqual({ lang: "python", file: "models.py" });
    expect(blockTarget('py title="models.py"', [], "x = 1")).toEqual({ lang: "py", file: "models.py" });
    expect(blockTarget("python:src/models.py", [], "x = 1")).toEqual({ lang: "python", file: "src/models.py" });
    expect(blockTarget("ts file=src/app.ts", [], "")).toEqual({ lang: "ts", file: "src/app.ts" });
    expect(blockTarget("models.py", [], "x = 1")).toEqual({ lang: "python", file: "models.py" });
    expect(blockTarget("makefile", [], "all:")).toEqual({ lang: "makefile" });
    expect(blockTarget("dockerfile", [], "FROM x")).toEqual({ lang: "dockerfile" });
  });

  it("reads a header line just before the fence", () => {
    expect(blockTarget("python", ["Here it is:", "", "**models.py**"], "x")).toEqual({ lang: "python", file: "models.py" });
    expect(blockTarget("python", ["`models.py`:"], "x").file).toBe("models.py");
    expect(blockTarget("python", ["### src/models.py", ""], "x").file).toBe("src/models.py");
    expect(blockTarget("python", ["In `utils.py`:"], "x").file).toBe("utils.py");
    expect(blockTarget("go", ["File: cmd/main.go"], "x").file).toBe("cmd/main.go");
  });

  it("reads a first-line comment that names the file", () => {
    expect(blockTarget("python", [], "# models.py\nx = 1").file).toBe("models.py");
    expect(blockTarget("ts", [], "// file: a.ts\nconst a = 1;").file).toBe("a.ts");
    expect(blockTarget("python", [], "# File: x.py\n").file).toBe("x.py");
    expect(blockTarget("", [], "// src/app.ts\n")).toEqual({ lang: "typescript", file: "src/app.ts" });
  });

  it("does not mistake prose, module names or shebangs for files", () => {
    expect(blockTarget("python", ["Use `os.path` like this:"], "import os").file).toBeUndefined();
    expect(blockTarget("python", ["Here is an example:"], "x = 1").file).toBeUndefined();
    expect(blockTarget("bash", [], "#!/bin/bash\necho hi").file).toBeUndefined();
    expect(blockTarget("python", [], "# compute the total\nx = 1").file).toBeUndefined();
    expect(blockTarget("python", ["See example.com:"], "x").file).toBeUndefined();
    // A header far above (not the line introducing the block) names nothing.
    expect(blockTarget("python", ["**models.py**", "", "", "Some text", ""], "x").file).toBeUndefined();
  });

  it("prefers the info string over a header", () => {
    expect(blockTarget("python b.py", ["**a.py**"], "x").file).toBe("b.py");
  });

  it("strips a first line that only names the file", () => {
    expect(stripFileComment("# models.py\nx = 1\n")).toBe("x = 1\n");
    expect(stripFileComment("# the total\nx = 1\n")).toBe("# the total\nx = 1\n");
  });

  it("knows languages by extension", () => {
    expect(langFromPath("src/a.tsx")).toBe("typescript");
    expect(langFromPath("x.unknown")).toBe("");
  });
});

describe("isShellLang", () => {
  it("recognises shell fences and nothing else", () => {
    for (const l of ["sh", "bash", "shell", "console", "zsh", "shellsession", "powershell", "ps1", "cmd", "bat", "fish", "Bash"]) expect(isShellLang(l)).toBe(true);
    for (const l of ["python", "", "ts", "text"]) expect(isShellLang(l)).toBe(false);
  });
});

const TASKS = lines(
  "import json",
  "",
  "",
  "# Formats one task for the list.",
  "def format_task(task):",
  '    return f"{task.title}"',
  "",
  "",
  "def load(path):",
  "    with open(path) as f:",
  "        return json.load(f)",
  "",
);

describe("mergeBlock: Python", () => {
  it("replaces the function the block redefines, in place, once", () => {
    const block = lines("def format_task(task):", '    return f"[{task.done}] {task.title}"');
    const r = mergeBlock(TASKS, block, "python");
    expect(r.how).toBe("replaced");
    expect(r.replaced).toEqual(["format_task"]);
    expect(r.text).toBe(TASKS.replace('    return f"{task.title}"', '    return f"[{task.done}] {task.title}"'));
    expect(r.text.match(/def format_task/g)).toHaveLength(1);
    // Its doc comment stays (the block brought none).
    expect(r.text).toContain("# Formats one task for the list.\ndef format_task");
  });

  it("replaces two functions of one block", () => {
    const block = lines("def format_task(task):", "    return task.title.upper()", "", "", "def load(path):", "    return []");
    const r = mergeBlock(TASKS, block, "python");
    expect(r.replaced).toEqual(["format_task", "load"]);
    expect(r.text).toContain("    return task.title.upper()");
    expect(r.text).toContain("def load(path):\n    return []\n");
    expect(r.text).not.toContain("json.load");
    expect(r.text.startsWith("import json\n")).toBe(true);
  });

  it("appends a new function after one blank line", () => {
    const r = mergeBlock(TASKS, lines("def count(tasks):", "    return len(tasks)"), "python");
    expect(r.how).toBe("appended");
    expect(r.text).toBe(`${TASKS.trimEnd()}\n\ndef count(tasks):\n    return len(tasks)\n`);
  });

  it("appends a statement to a file of statements (the chatApply scenario)", () => {
    expect(mergeBlock("A = 0\n", "B = 2", "python")).toEqual({ text: "A = 0\n\nB = 2\n", how: "appended" });
  });

  it("adds an import the file lacks after its imports, and replaces the function", () => {
    const block = lines("import re", "", "def format_task(task):", '    return re.sub(r"\\s+", " ", task.title)');
    const r = mergeBlock(TASKS, block, "python");
    expect(r.text.startsWith("import json\nimport re\n\n")).toBe(true);
    expect(r.text.match(/import re/g)).toHaveLength(1);
    expect(r.replaced).toEqual(["format_task"]);
    // An import the file already has is not repeated.
    expect(mergeBlock(TASKS, lines("import json", "", "def f():", "    pass"), "python").text.match(/import json/g)).toHaveLength(1);
  });

  it("puts an import after the module docstring when the file has none", () => {
    const file = lines('"""Tasks."""', "", "def f():", "    return 1", "");
    const r = mergeBlock(file, lines("import os", "", "def f():", "    return os.sep"), "python");
    expect(r.text).toBe(lines('"""Tasks."""', "", "import os", "", "def f():", "    return os.sep", ""));
  });

  it("keeps decorators single: a decorated function replaces the decorated one", () => {
    const file = lines("from app import app", "", '@app.route("/")', "def index():", '    return "a"', "", "", "def other():", "    pass", "");
    const r = mergeBlock(file, lines('@app.route("/")', "def index():", '    return "b"'), "python");
    expect(r.text.match(/@app.route/g)).toHaveLength(1);
    expect(r.text).toContain('def index():\n    return "b"\n\n\ndef other():');
  });

  it("replaces a method inside its class, from a class block or from the method alone", () => {
    const file = lines(
      "class Task:",
      "    def __init__(self, title):",
      "        self.title = title",
      "",
      "    def describe(self):",
      "        return self.title",
      "",
      "",
      "def describe(x):",
      "    return str(x)",
      "",
    );
    const viaClass = mergeBlock(file, lines("class Task:", "    def describe(self):", '        return f"Task {self.title}"'), "python");
    expect(viaClass.replaced).toEqual(["Task.describe"]);
    expect(viaClass.text).toContain("self.title = title"); // the rest of the class stays
    expect(viaClass.text).toContain('    def describe(self):\n        return f"Task {self.title}"\n\n\ndef describe(x):\n    return str(x)');

    const alone = mergeBlock(file, lines("    def describe(self):", "        return self.title.upper()"), "python");
    expect(alone.replaced).toEqual(["Task.describe"]);
    expect(alone.text).toContain("    def describe(self):\n        return self.title.upper()\n");
    expect(alone.text).toContain("def describe(x):\n    return str(x)"); // the module function is another one
  });

  it("adds a new method at the end of its class, skipping placeholder comments", () => {
    const file = lines("class Task:", "    def __init__(self):", "        self.done = False", "", "", "x = 1", "");
    const block = lines("class Task:", "    # ... existing code ...", "", "    def finish(self):", "        self.done = True");
    const r = mergeBlock(file, block, "python");
    expect(r.text).toBe(lines("class Task:", "    def __init__(self):", "        self.done = False", "", "    def finish(self):", "        self.done = True", "", "", "x = 1", ""));
    expect(r.text).not.toContain("existing code");
  });

  it("is not fooled by a def inside a string", () => {
    const file = lines('TEMPLATE = """', "def format_task(task):", '    pass', '"""', "", "", "def format_task(task):", "    return 1", "");
    const r = mergeBlock(file, lines("def format_task(task):", "    return 2"), "python");
    expect(r.text).toContain('TEMPLATE = """\ndef format_task(task):\n    pass\n"""');
    expect(r.text).toContain("def format_task(task):\n    return 2\n");
    expect(r.text).not.toContain("return 1");
  });

  it("replaces a module constant the block redefines", () => {
    const r = mergeBlock(lines("MAX = 3", "", "def f():", "    return MAX", ""), "MAX = 5", "python");
    expect(r.text).toBe(lines("MAX = 5", "", "def f():", "    return MAX", ""));
    expect(r.replaced).toEqual(["MAX"]);
  });

  it("treats a block that keeps most of the file's names as the whole file", () => {
    const block = lines("import json", "", "def format_task(task):", "    return task.title", "", "def load(path):", "    return []");
    const r = mergeBlock(TASKS, block, "python");
    expect(r).toEqual({ text: `${block}\n`, how: "whole" });
    expect(mergeBlock("", "x = 1", "python")).toEqual({ text: "x = 1\n", how: "whole" });
  });

  it("keeps the file's CRLF line endings and drops a file-name comment", () => {
    const file = "def f():\r\n    return 1\r\n\r\n\r\ndef g():\r\n    return 2\r\n";
    const r = mergeBlock(file, "# models.py\ndef f():\n    return 3", "python");
    expect(r.text).toBe("def f():\r\n    return 3\r\n\r\n\r\ndef g():\r\n    return 2\r\n");
  });

  it("appends a block in a language it does not parse", () => {
    expect(mergeBlock("a: 1\n", "b: 2", "yaml")).toEqual({ text: "a: 1\n\nb: 2\n", how: "appended" });
    expect(mergeBlock("a: 1\nb: 2\nc: 3\n", "a: 1\nb: 3\nc: 3", "yaml").how).toBe("whole");
  });
});

describe("mergeBlock: TypeScript / JavaScript", () => {
  const file = lines(
    'import { Task } from "./task";',
    "",
    "/** One line per task. */",
    "export function formatTask(t: Task): string {",
    '  const open = "{"; // a brace in a string: { ',
    "  const re = /[}]/g;",
    "  return `${open}${t.title.replace(re, \"\")}}`;",
    "}",
    "",
    "export class Store {",
    "  private tasks: Task[] = [];",
    "",
    "  add(t: Task): void {",
    "    this.tasks.push(t);",
    "  }",
    "",
    "  count(): number {",
    "    return this.tasks.length;",
    "  }",
    "}",
    "",
    "export const sum = (a: number, b: number) => {",
    "  return a + b;",
    "};",
    "",
  );

  it("replaces a function by name through strings, regexes and template literals with braces, keeping export and the doc comment", () => {
    const r = mergeBlock(file, lines("function formatTask(t: Task): string {", "  return t.title;", "}"), "typescript");
    expect(r.replaced).toEqual(["formatTask"]);
    expect(r.text).toContain("/** One line per task. */\nexport function formatTask(t: Task): string {\n  return t.title;\n}\n\nexport class Store {");
    expect(r.text).not.toContain("const re");
    expect(r.text).toContain("count(): number"); // the class is untouched
  });

  it("replaces a method inside its class from a partial class or the method alone", () => {
    const partial = mergeBlock(file, lines("class Store {", "  count(): number {", "    return 0;", "  }", "}"), "ts");
    expect(partial.replaced).toEqual(["Store.count"]);
    expect(partial.text).toContain("  add(t: Task): void {\n    this.tasks.push(t);\n  }");
    expect(partial.text).toContain("  count(): number {\n    return 0;\n  }\n}");
    const alone = mergeBlock(file, lines("  count(): number {", "    return -1;", "  }"), "ts");
    expect(alone.replaced).toEqual(["Store.count"]);
    expect(alone.text).toContain("  count(): number {\n    return -1;\n  }\n}");
  });

  it("adds a new method before the class's closing brace", () => {
    const r = mergeBlock(file, lines("class Store {", "  // ...", "  clear(): void {", "    this.tasks = [];", "  }", "}"), "ts");
    expect(r.text).toContain("    return this.tasks.length;\n  }\n\n  clear(): void {\n    this.tasks = [];\n  }\n}\n\nexport const sum");
  });

  it("replaces an arrow-function constant, appends a new function, adds a missing import", () => {
    const r = mergeBlock(file, lines('import { log } from "./log";', "", "const sum = (a: number, b: number) => a + b;", "", "function hello() {", '  log("hi");', "}"), "ts");
    expect(r.replaced).toEqual(["sum"]);
    expect(r.text).toContain('import { Task } from "./task";\nimport { log } from "./log";\n');
    expect(r.text).toContain("export const sum = (a: number, b: number) => a + b;\n");
    expect(r.text.endsWith('\n\nfunction hello() {\n  log("hi");\n}\n')).toBe(true);
  });
});

describe("mergeBlock: Go", () => {
  const file = lines(
    "package main",
    "",
    "import (",
    '\t"fmt"',
    ")",
    "",
    "type Server struct {",
    "\tname string",
    "}",
    "",
    "func (s *Server) Handle() string {",
    "\treturn `raw { string`",
    "}",
    "",
    "func main() {",
    '\tfmt.Println("}")',
    "}",
    "",
  );

  it("replaces a method by receiver and name and adds the import into the group", () => {
    const block = lines('import "strings"', "", "func (s *Server) Handle() string {", "\treturn strings.ToUpper(s.name)", "}");
    const r = mergeBlock(file, block, "go");
    expect(r.replaced).toEqual(["Server.Handle"]);
    expect(r.text).toContain('import (\n\t"fmt"\n\t"strings"\n)');
    expect(r.text).toContain("func (s *Server) Handle() string {\n\treturn strings.ToUpper(s.name)\n}\n\nfunc main() {");
    expect(r.text).toContain('fmt.Println("}")');
  });

  it("appends a new function", () => {
    const r = mergeBlock(file, lines("func helper() int {", "\treturn 1", "}"), "go");
    expect(r.how).toBe("appended");
    expect(r.text).toBe(`${file.trimEnd()}\n\nfunc helper() int {\n\treturn 1\n}\n`);
  });
});

describe("mergeBlock: Rust", () => {
  const file = lines(
    "use std::fmt;",
    "",
    "#[derive(Debug)]",
    "struct Rect {",
    "    w: u32,",
    "    h: u32,",
    "}",
    "",
    "impl Rect {",
    "    fn area(&self) -> u32 {",
    "        self.w * self.h",
    "    }",
    "",
    "    fn label<'a>(&self, s: &'a str) -> &'a str {",
    "        let _c = '}';",
    "        s",
    "    }",
    "}",
    "",
    "fn main() {",
    '    println!("{}", Rect { w: 1, h: 2 }.area());',
    "}",
    "",
  );

  it("replaces a method of an impl from the method alone (lifetimes and char literals do not confuse it)", () => {
    const r = mergeBlock(file, lines("fn area(&self) -> u32 {", "    self.w * self.h * 2", "}"), "rust");
    expect(r.replaced).toEqual(["impl Rect.area"]);
    expect(r.text).toContain("impl Rect {\n    fn area(&self) -> u32 {\n        self.w * self.h * 2\n    }\n\n    fn label<'a>");
    expect(r.text).toContain("fn main() {");
  });

  it("replaces an attributed struct without doubling the attribute, adds a use", () => {
    const r = mergeBlock(file, lines("use std::collections::HashMap;", "", "#[derive(Debug, Clone)]", "struct Rect {", "    w: u32,", "    h: u32,", "    d: u32,", "}"), "rust");
    expect(r.replaced).toEqual(["Rect"]);
    expect(r.text.match(/#\[derive/g)).toHaveLength(1);
    expect(r.text).toContain("#[derive(Debug, Clone)]\nstruct Rect {\n    w: u32,\n    h: u32,\n    d: u32,\n}\n\nimpl Rect {");
    expect(r.text.startsWith("use std::fmt;\nuse std::collections::HashMap;\n")).toBe(true);
  });
});

describe("mergeBlock: Java and C", () => {
  it("replaces a Java method shown alone inside its class, keeping the annotation single", () => {
    const file = lines("public class A {", "    @Override", "    public String toString() {", '        return "a";', "    }", "", "    int n() { return 1; }", "}", "");
    const r = mergeBlock(file, lines("@Override", "public String toString() {", '    return "b";', "}"), "java");
    expect(r.replaced).toEqual(["A.toString"]);
    expect(r.text).toBe(file.replace('return "a"', 'return "b"'));
  });

  it("replaces a C definition, not its prototype", () => {
    const file = lines("int twice(int x);", "", "int twice(int x) {", "    return x * 2;", "}", "");
    const r = mergeBlock(file, lines("int twice(int x) {", "    return x + x;", "}"), "c");
    expect(r.text).toBe(lines("int twice(int x);", "", "int twice(int x) {", "    return x + x;", "}", ""));
  });
});

describe("mergeBlock: the chat e2e project", () => {
  const models = lines(
    "from dataclasses import dataclass",
    "",
    "",
    "@dataclass",
    "class Task:",
    "    title: str",
    "    done: bool = False",
    "",
    "",
    "def format_task(task):",
    '    mark = "x" if task.done else " "',
    '    return f"[{mark}] {task.title}"',
    "",
    "",
    "def new_task(title):",
    "    return Task(title.strip())",
    "",
  );

  it("replaces format_task after a decorated dataclass, leaving the rest byte for byte", () => {
    const next = 'def format_task(task):\n    state = "done" if task.done else "todo"\n    return f"{state}: {task.title.strip()}"\n';
    const r = mergeBlock(models, next, "python");
    expect(r.text).toBe(models.replace('def format_task(task):\n    mark = "x" if task.done else " "\n    return f"[{mark}] {task.title}"\n', next));
  });

  it("adds a field to the dataclass from a partial class block", () => {
    const r = mergeBlock(models, lines("@dataclass", "class Task:", "    title: str", "    done: bool = False", "    priority: int = 0", "", "    def describe(self):", "        return self.title"), "python");
    // All the class's members are shown: the class is replaced whole, once, with its decorator once.
    expect(r.text.match(/@dataclass/g)).toHaveLength(1);
    expect(r.text).toContain("    priority: int = 0\n\n    def describe(self):\n        return self.title\n\n\ndef format_task");
  });
});

describe("mergeBlock: what a whole file is", () => {
  it("a block with every function but not the module docstring is a part, not the file", () => {
    const file = lines('"""Helpers."""', "", "", "def a():", "    return 1", "", "", "def b():", "    return 2", "");
    const r = mergeBlock(file, lines("def a():", "    return 10", "", "", "def b():", "    return 20"), "python");
    expect(r.how).toBe("replaced");
    expect(r.text.startsWith('"""Helpers."""\n')).toBe(true);
    expect(r.text).toContain("return 10");
    expect(r.text).toContain("return 20");
  });

  it("keeps `export default` on a function shown without it", () => {
    const file = lines("export default function App() {", "  return 1;", "}", "");
    expect(mergeBlock(file, lines("function App() {", "  return 2;", "}"), "tsx").text).toBe(lines("export default function App() {", "  return 2;", "}", ""));
  });

  it("semicolon-free JavaScript statements end at their line", () => {
    const file = lines("const a = 1", "const b = 2", "", "function f() {", "  return a", "}", "");
    const r = mergeBlock(file, lines("function f() {", "  return b", "}"), "javascript");
    expect(r.text).toBe(lines("const a = 1", "const b = 2", "", "function f() {", "  return b", "}", ""));
  });
});
