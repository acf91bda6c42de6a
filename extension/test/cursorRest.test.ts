import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { CursorRest, REST_MS } from "../src/cursorRest";
import type { CursorParams } from "../src/protocol";
import { fake, Selection, textDocument } from "./fakeVscode";

const GATES = { enabled: true, languages: { "*": true, markdown: false }, debounceMs: 0 };

describe("CursorRest (kestrel/cursor)", () => {
  let sent: CursorParams[];
  let allowed: boolean;
  let readAhead: boolean;
  let rest: CursorRest;
  let doc: ReturnType<typeof textDocument>;

  const editor = (selection: Selection) => ({ document: doc, selection });
  function move(selection: Selection): void {
    const e = editor(selection);
    fake.activeTextEditor = e;
    fake.onDidChangeTextEditorSelection.fire({ textEditor: e, selections: [selection] });
  }

  beforeEach(() => {
    vi.useFakeTimers();
    fake.reset();
    sent = [];
    allowed = true;
    readAhead = true;
    doc = textDocument("/ws/orders.py", "def total(items):\n    \n");
    rest = new CursorRest({ send: (p) => sent.push(p), gates: () => GATES, allowed: () => allowed, readAhead: () => readAhead });
  });
  afterEach(() => {
    rest.dispose();
    vi.useRealTimers();
  });

  it("sends where the cursor came to rest, once, after REST_MS still", () => {
    move(new Selection(0, 3, 0, 3));
    vi.advanceTimersByTime(100);
    move(new Selection(1, 4, 1, 4)); // moved on before resting: only the second place counts
    vi.advanceTimersByTime(REST_MS - 1);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([{ uri: "file:///ws/orders.py", position: { line: 1, character: 4 } }]);
    vi.advanceTimersByTime(5 * REST_MS);
    expect(sent).toHaveLength(1);
  });

  it("an edit restarts the wait; a selection, another editor or a changed document sends nothing", () => {
    move(new Selection(1, 4, 1, 4));
    vi.advanceTimersByTime(REST_MS / 2);
    fake.onDidChangeTextDocument.fire({ document: doc, contentChanges: [{ text: "x" }] });
    vi.advanceTimersByTime(REST_MS);
    expect(sent).toEqual([]);
    move(new Selection(0, 0, 1, 4)); // text selected: not where a suggestion goes
    vi.advanceTimersByTime(REST_MS);
    expect(sent).toEqual([]);
    move(new Selection(1, 4, 1, 4));
    doc.version = 2; // typed meanwhile (the change event may come later than the version)
    vi.advanceTimersByTime(REST_MS);
    expect(sent).toEqual([]);
  });

  it("never for a language completions are off for, with read-ahead off, or where code needs a question", () => {
    doc = textDocument("/ws/notes.md", "# notes\n", "markdown");
    move(new Selection(0, 2, 0, 2));
    vi.advanceTimersByTime(REST_MS);
    doc = textDocument("/ws/orders.py", "def total(items):\n    \n");
    readAhead = false;
    move(new Selection(1, 4, 1, 4));
    vi.advanceTimersByTime(REST_MS);
    readAhead = true;
    allowed = false; // an untrusted workspace the user did not allow: a cursor move never asks
    move(new Selection(1, 4, 1, 4));
    vi.advanceTimersByTime(REST_MS);
    expect(sent).toEqual([]);
    expect(fake.warnings).toEqual([]);
  });
});
