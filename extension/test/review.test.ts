/**
 * The code-block buttons (review.ts): Apply goes to the file a block names (or the active editor)
 * through a diff review and one WorkspaceEdit; Reject writes nothing; paths outside the workspace
 * and secret files are refused; Insert previews; Apply all asks through the Refactor Preview; Run
 * confirms with the command shown.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { fake, openEditor, Selection, textDocument, Uri, type WorkspaceEdit } from "./fakeVscode";
import { BlockActions, shellCommand } from "../src/chat/review";

const MODELS = "import json\n\n\ndef format_task(task):\n    return task.title\n\n\ndef other():\n    pass\n";

function workspace() {
  fake.workspaceFolders = [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
  const models = textDocument("/ws/src/models.py", MODELS);
  fake.documents.set(models.uri.toString(), models);
  return { actions: new BlockActions(), models };
}

/** The text `doc` would have after the edit's entries for it. */
function after(edit: WorkspaceEdit, doc: ReturnType<typeof textDocument>): string {
  let text = doc.getText();
  for (const e of edit.entries.filter((x) => x.uri.toString() === doc.uri.toString() && x.range).reverse()) {
    text = text.slice(0, doc.offsetAt(e.range!.start)) + e.text + text.slice(doc.offsetAt(e.range!.end));
  }
  return text;
}

const diffs = () => fake.executed.filter((e) => e.command === "vscode.diff");

beforeEach(() => fake.reset());

describe("Apply", () => {
  it("merges the block into the file it names after the review, as one edit", async () => {
    const { actions, models } = workspace();
    openEditor(textDocument("/ws/main.py", "print(1)\n")); // another file is active: the named one wins
    fake.infoAnswer = "Apply";
    await actions.apply({ code: "def format_task(task):\n    return task.title.upper()", lang: "python", file: "src/models.py" });
    expect(diffs()).toHaveLength(1);
    expect(diffs()[0].args[2]).toBe("Kestrel: review src/models.py");
    expect(fake.infos).toEqual(["Apply Kestrel's change to src/models.py?"]);
    expect(fake.applied).toHaveLength(1);
    const text = after(fake.applied[0], models);
    expect(text).toBe(MODELS.replace("return task.title\n", "return task.title.upper()\n"));
    expect(text.match(/def format_task/g)).toHaveLength(1);
    // The proposed side of the review is built from parts (no parsing of an encoded path).
    const proposed = diffs()[0].args[1] as Uri;
    expect(proposed.scheme).toBe("kestrel-proposed");
    expect(proposed.path).toBe("/ws/src/models.py");
  });

  it("Reject writes nothing", async () => {
    const { actions } = workspace();
    fake.infoAnswer = "Reject";
    await actions.apply({ code: "def format_task(task):\n    return 1", lang: "python", file: "src/models.py" });
    expect(diffs()).toHaveLength(1);
    expect(fake.applied).toEqual([]);
  });

  it("a file that does not exist yet is created by the edit", async () => {
    const { actions } = workspace();
    fake.infoAnswer = "Apply";
    await actions.apply({ code: "def helper():\n    return 1", lang: "python", file: "src/helpers.py" });
    const entries = fake.applied[0].entries;
    expect(entries.map((e) => [e.op, e.uri.path])).toEqual([["createFile", "/ws/src/helpers.py"], ["insert", "/ws/src/helpers.py"]]);
    expect(entries[1].text).toBe("def helper():\n    return 1\n");
  });

  it("refuses paths outside the workspace and secret files, with a message", async () => {
    const { actions } = workspace();
    fake.infoAnswer = "Apply";
    for (const file of ["../outside.py", "/etc/passwd.txt", ".env", "config/.env.local"]) {
      await actions.apply({ code: "x = 1", lang: "python", file });
    }
    expect(fake.applied).toEqual([]);
    expect(diffs()).toEqual([]);
    expect(fake.warnings).toHaveLength(4);
    expect(fake.warnings[0]).toContain("outside the workspace");
    expect(fake.warnings[2]).toContain("secret file");
  });

  it("refuses a named file that a link in the workspace takes outside it or to a secret", async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "kestrel-apply-")));
    try {
      mkdirSync(join(base, "ws"));
      mkdirSync(join(base, "home", ".vscode", "extensions", "x"), { recursive: true });
      mkdirSync(join(base, "home", ".ssh"), { recursive: true });
      writeFileSync(join(base, "home", ".ssh", "config"), "Host *\n");
      symlinkSync(join(base, "home", ".vscode", "extensions", "x"), join(base, "ws", "ext"));
      symlinkSync(join(base, "home", ".ssh", "config"), join(base, "ws", "notes.txt"));
      mkdirSync(join(base, "ws", "src"));
      symlinkSync(join(base, "ws", "src"), join(base, "ws", "lib")); // a link inside the workspace is fine
      fake.workspaceFolders = [{ uri: Uri.file(join(base, "ws")), name: "ws", index: 0 }];
      const actions = new BlockActions();
      fake.infoAnswer = "Apply";
      await actions.apply({ code: "module.exports = 1", lang: "javascript", file: "ext/extension.js" });
      await actions.apply({ code: "Host evil", lang: "text", file: "notes.txt" });
      expect(fake.applied).toEqual([]);
      expect(fake.warnings).toEqual([expect.stringContaining("ext/extension.js is a link to a file outside the workspace"),
        expect.stringContaining("notes.txt is a link to a secret file")]);
      await actions.apply({ code: "X = 1", lang: "python", file: "lib/new.py" });
      expect(fake.applied).toHaveLength(1);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("without a named file goes to the active editor; a fragment replaces the selection", async () => {
    workspace();
    const actions = new BlockActions();
    const doc = textDocument("/ws/main.py", "A = 0\n");
    openEditor(doc);
    fake.infoAnswer = "Apply";
    await actions.apply({ code: "B = 2", lang: "python" });
    expect(after(fake.applied[0], doc)).toBe("A = 0\n\nB = 2\n");
    const doc2 = textDocument("/ws/calc.py", "total = price * 2\n");
    openEditor(doc2, new Selection(0, 8, 0, 17));
    await actions.apply({ code: "price * 3", lang: "python" });
    expect(after(fake.applied[1], doc2)).toBe("total = price * 3\n");
  });
});

describe("Insert", () => {
  it("previews the insertion and inserts at the cursor on Insert", async () => {
    workspace();
    const actions = new BlockActions();
    const doc = textDocument("/ws/main.py", "def f():\n    \n");
    openEditor(doc, new Selection(1, 4, 1, 4));
    fake.infoAnswer = "Cancel";
    await actions.insert({ code: "x = 1\nreturn x", lang: "python" });
    expect(diffs()[0].args[2]).toBe("Kestrel: insert into main.py");
    expect(fake.infos).toEqual(["Insert Kestrel's code at the cursor in main.py?"]);
    expect(fake.applied).toEqual([]);
    fake.infoAnswer = "Insert";
    await actions.insert({ code: "x = 1\nreturn x", lang: "python" });
    expect(after(fake.applied[0], doc)).toBe("def f():\n    x = 1\n    return x\n"); // takes the cursor's indentation
  });
});

describe("Apply all", () => {
  it("one edit over every named file, each entry needing confirmation (the Refactor Preview)", async () => {
    const { actions, models } = workspace();
    await actions.applyAll([
      { code: "def format_task(task):\n    return 'x'", lang: "python", file: "src/models.py" },
      { code: "def helper():\n    pass", lang: "python", file: "src/helpers.py" },
      { code: "print()", lang: "python" },
    ]);
    expect(fake.applied).toHaveLength(1);
    const edit = fake.applied[0];
    expect(edit.size).toBe(2);
    expect(after(edit, models)).toContain("    return 'x'\n");
    expect(fake.warnings[0]).toContain("1 block names no file");
    // The files' entries start checked in the preview; the preview is opened by exactly one entry that
    // needs confirmation and changes nothing (creating an existing file, ignoreIfExists).
    const confirm = (e: { metadata?: unknown }) => (e.metadata as { needsConfirmation: boolean }).needsConfirmation;
    const fileEntries = edit.entries.filter((e) => !confirm(e));
    expect(fileEntries.map((e) => [e.op, e.uri.path])).toEqual([
      ["replace", "/ws/src/models.py"],
      ["createFile", "/ws/src/helpers.py"],
      ["insert", "/ws/src/helpers.py"],
    ]);
    const trigger = edit.entries.filter(confirm);
    expect(trigger).toHaveLength(1);
    expect(trigger[0]).toEqual(expect.objectContaining({ op: "createFile", options: { ignoreIfExists: true } }));
    expect(trigger[0].uri.path).toBe("/ws/src/models.py"); // exists: nothing is created
  });

  it("lists no file that already holds its block", async () => {
    const { actions } = workspace();
    await actions.applyAll([{ code: "def format_task(task):\n    return task.title", lang: "python", file: "src/models.py" }]);
    expect(fake.applied).toEqual([]);
    expect(fake.infos).toEqual(["Kestrel: the files already contain these blocks."]);
  });
});

describe("Run in terminal", () => {
  it("asks with the command shown, then types it into a Kestrel terminal, reused once its shell is back at the prompt", async () => {
    const actions = new BlockActions();
    fake.answer = undefined;
    await actions.run({ code: "pytest -q\n", lang: "bash" });
    expect(fake.warnings).toEqual(["Run this command in a terminal?"]);
    expect(fake.terminals).toEqual([]);
    fake.answer = "Run";
    await actions.run({ code: "pytest -q\n", lang: "bash" });
    expect(fake.terminals).toHaveLength(1);
    const [first] = fake.terminals;
    expect(first.name).toBe("Kestrel");
    // Its shell reports commands; pytest started and ended: the shell is at its prompt.
    first.shellIntegration = {};
    fake.onDidStartTerminalShellExecution.fire({ terminal: first });
    fake.onDidEndTerminalShellExecution.fire({ terminal: first });
    await actions.run({ code: "ls", lang: "sh" });
    expect(fake.terminals).toHaveLength(1);
    expect(first.sent).toEqual(["pytest -q", "ls"]);
  });

  it("never types a command into a program still running in the Kestrel terminal (ssh, a REPL): it gets a terminal of its own", async () => {
    const actions = new BlockActions();
    fake.answer = "Run";
    await actions.run({ code: "ssh prod.example.com", lang: "bash" });
    const [first] = fake.terminals;
    first.shellIntegration = {};
    fake.onDidStartTerminalShellExecution.fire({ terminal: first }); // ssh runs: no end yet
    await actions.run({ code: "rm -rf build", lang: "bash" });
    expect(fake.terminals).toHaveLength(2);
    expect(first.sent).toEqual(["ssh prod.example.com"]);
    expect(fake.terminals[1].sent).toEqual(["rm -rf build"]);
    // The second terminal's shell gives no reports: nobody can tell it is at a prompt, so it is not reused either.
    await actions.run({ code: "make", lang: "bash" });
    expect(fake.terminals).toHaveLength(3);
    // ssh ended: the first terminal is idle again and takes the next command.
    fake.onDidEndTerminalShellExecution.fire({ terminal: first });
    await actions.run({ code: "ls", lang: "bash" });
    expect(first.sent).toEqual(["ssh prod.example.com", "ls"]);
    expect(fake.terminals).toHaveLength(3);
  });

  it("uses only terminals it opened and that are still open", async () => {
    const actions = new BlockActions();
    fake.answer = "Run";
    // Another extension's (or a task's) terminal named Kestrel is somebody else's shell.
    const stranger = { name: "Kestrel", sent: [] as string[], exitStatus: undefined, shellIntegration: {}, show: () => undefined, sendText(t: string) { this.sent.push(t); } };
    fake.terminals.push(stranger);
    await actions.run({ code: "ls", lang: "bash" });
    expect(stranger.sent).toEqual([]);
    const ours = fake.terminals[1];
    ours.shellIntegration = {};
    fake.onDidCloseTerminal.fire(ours);
    await actions.run({ code: "pwd", lang: "bash" });
    expect(ours.sent).toEqual(["ls"]);
    expect(fake.terminals).toHaveLength(3);
    expect(fake.terminals[2].sent).toEqual(["pwd"]);
  });

  it("never runs a command with invisible control characters (what the dialog shows is what runs)", async () => {
    const actions = new BlockActions();
    fake.answer = "Run";
    // A terminal's line editor reads \b and ^A^D as keys: this would run `touch x`, shown as the echo.
    await actions.run({ code: "echo 'touch /tmp/x'\x08\x01\x04\x04\x04\x04\x04\x04", lang: "bash" });
    await actions.run({ code: "ls \u202etxt.exe", lang: "bash" });
    expect(fake.terminals).toEqual([]);
    expect(fake.warnings).toEqual([expect.stringContaining("U+0008"), expect.stringContaining("U+202E")]);
  });

  it("runs only the prompted lines of a console transcript, and no non-shell block", async () => {
    expect(shellCommand({ code: "$ npm test\n> kestrel@1 test\nok\n$ npm run build", lang: "console" })).toBe("npm test\nnpm run build");
    const actions = new BlockActions();
    fake.answer = "Run";
    await actions.run({ code: "import os", lang: "python" });
    expect(fake.terminals).toEqual([]);
  });
});
