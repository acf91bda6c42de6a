/**
 * What the chat's chips attach (context.ts): never a secret or `kestrel.completion.excludeGlobs`
 * file, and never a workspace file that links to one (judged where it leads, as the server judges it).
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { fake, openEditor, textDocument, Uri } from "./fakeVscode";
import { attachables, chipsFor, contextFor, neverAttached } from "../src/chat/context";

const CANARY = "AKIA-LINKED-CANARY-5150";

function workspace() {
  const base = mkdtempSync(join(tmpdir(), "kestrel-chips-"));
  mkdirSync(join(base, "home", ".aws"), { recursive: true });
  writeFileSync(join(base, "home", ".aws", "credentials"), `aws_secret_access_key = ${CANARY}\n`);
  const ws = join(base, "ws");
  mkdirSync(join(ws, "private"), { recursive: true });
  symlinkSync(join(base, "home", ".aws", "credentials"), join(ws, "settings_notes.py"));
  writeFileSync(join(ws, "private", "keys.py"), `KEY = "${CANARY}-glob"\n`);
  writeFileSync(join(ws, "app.py"), "x = 1\n");
  fake.workspaceFolders = [{ uri: Uri.file(ws), name: "ws", index: 0 }];
  fake.settings["completion.excludeGlobs"] = { globalValue: ["private/**"] };
  const doc = (rel: string) => {
    const d = textDocument(join(ws, rel), rel === "app.py" ? "x = 1\n" : `${CANARY}\n`);
    fake.documents.set(d.uri.toString(), d);
    return d;
  };
  return { ws, app: doc("app.py"), linked: doc("settings_notes.py"), excluded: doc("private/keys.py") };
}

describe("chat chips", () => {
  beforeEach(() => fake.reset());

  it("judge a link by where it leads and a workspace-relative exclude glob by the path", () => {
    const { app, linked, excluded } = workspace();
    expect(neverAttached(linked.uri as never)).toBe(true);
    expect(neverAttached(excluded.uri as never)).toBe(true);
    expect(neverAttached(app.uri as never)).toBe(false);
    expect(neverAttached(Uri.file("/nowhere/settings.py") as never)).toBe(false); // not on disk: by its path
  });

  it("never attach an open tab or the active file that is a link to a secret or excluded", async () => {
    const { app, linked, excluded } = workspace();
    fake.tabs = [linked.uri, excluded.uri, app.uri];
    openEditor(linked);
    const state = attachables();
    expect(state.file?.secret).toBe(true);
    expect(state.openFiles.map((f) => f.rel)).toEqual(["app.py"]);
    const chips = chipsFor(state);
    expect(chips.find((c) => c.kind === "file")).toMatchObject({ available: false, label: "settings_notes.py (secret)" });
    const sent = await contextFor(["selection", "file", "openFiles", "diagnostics"], state);
    expect(sent.text).not.toContain(CANARY);
    expect(sent.text).toContain("Open file app.py");
    openEditor(excluded);
    expect((await contextFor(["file"])).text).toBe("");
  });
});
