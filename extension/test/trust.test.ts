/**
 * Workspace trust (issue #20, finding 9): in an untrusted workspace every path that sends code to
 * the model waits for the user's answer, and "Not now" sends nothing. Each path is driven through
 * the real feature code (chat view, inline edit, next edit, quick-fix middleware, inline
 * completions) wired as extension.ts wires it, against a client that records what reaches it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { fake, openEditor, Selection, textDocument, Uri } from "./fakeVscode";
import { ChatViewProvider, type ChatClient } from "../src/chat/chatView";
import { explainInChat } from "../src/chat/explain";
import { InlineEditController } from "../src/edit/inlineEdit";
import { NEXT_EDIT_DELAY_MS, NextEditController } from "../src/edit/nextEdit";
import { InlineCompletions } from "../src/inlineCompletions";
import { ALLOW, NOT_NOW, TrustDeclined, WorkspaceTrustGate } from "../src/trust";

const SOURCE = "import os\n\ndef secret_algorithm(x):\n    return x * 42\n";

/** The language client as the features see it: records every request that reaches the server. */
function recordingClient() {
  const sent: { method: string; params: unknown }[] = [];
  const client: ChatClient = {
    sendRequest: async <R>(method: string, params: unknown): Promise<R> => {
      sent.push({ method, params });
      if (method === "kestrel/chat") return { id: "x", text: "an answer" } as R;
      if (method === "kestrel/edit") return { id: "x", error: "stub" } as R;
      if (method === "kestrel/steer") return { accepted: true } as R;
      return null as R;
    },
    onNotification: () => ({ dispose: () => undefined }),
  };
  return { client, sent };
}

/** Everything extension.ts builds around one gate, on one recording client. */
function kestrel() {
  const gate = new WorkspaceTrustGate();
  const raw = recordingClient();
  const running = gate.guardClient(() => raw.client);
  const context = {
    workspaceState: { get: () => undefined, update: async () => undefined },
    extensionUri: Uri.file("/ext"),
  } as never;
  const chat = new ChatViewProvider(context, running, gate.mayUseCode);
  let toChat: ((m: unknown) => unknown) | undefined;
  const posted: { type: string }[] = [];
  chat.resolveWebviewView({
    webview: {
      options: {},
      html: "",
      cspSource: "self",
      asWebviewUri: (u: unknown) => u,
      onDidReceiveMessage: (l: (m: unknown) => unknown) => ((toChat = l), { dispose: () => undefined }),
      postMessage: async (m: { type: string }) => (posted.push(m), true),
    },
  } as never);
  const inlineEdits = new InlineEditController(running);
  const nextEdits = new NextEditController(running, inlineEdits);
  const completions = new InlineCompletions({ info: () => undefined } as never, gate.mayUseCode, () => undefined);
  const executeCommand = gate.guardCommands(explainInChat(chat));
  return { gate, sent: raw.sent, posted, running, chat, toChat: (m: unknown) => toChat?.(m), inlineEdits, nextEdits, completions, executeCommand };
}

type Kestrel = ReturnType<typeof kestrel>;

/**
 * Each path that can send code, as the user (or the editor) starts it. `forwarded` counts what
 * went past the client-side gate through the LSP middleware's `next` (the library would send it).
 */
const PATHS: { name: string; run: (k: Kestrel, forwarded: string[]) => Promise<unknown> }[] = [
  {
    name: "inline completion (textDocument/inlineCompletion)",
    run: (k, forwarded) => {
      const doc = textDocument("/ws/a.py", SOURCE);
      const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose: () => undefined }) };
      return Promise.resolve(
        k.completions.provideInlineCompletionItems(doc as never, { line: 3, character: 4 } as never, { triggerKind: 1 } as never, token as never,
          (() => (forwarded.push("textDocument/inlineCompletion"), null)) as never),
      );
    },
  },
  {
    name: "Fix with Kestrel (codeAction/resolve)",
    run: (k, forwarded) =>
      Promise.resolve(k.gate.resolveCodeAction({ title: "Fix with Kestrel" } as never, {} as never,
        ((item: unknown) => (forwarded.push("codeAction/resolve"), item)) as never)),
  },
  {
    name: "kestrel.fix command (workspace/executeCommand)",
    run: (k, forwarded) =>
      Promise.resolve(k.executeCommand("kestrel.fix", [{ uri: "file:///ws/a.py" }], (() => forwarded.push("kestrel.fix")) as never)),
  },
  {
    name: "Explain with Kestrel (kestrel.explain -> chat)",
    run: (k, forwarded) => {
      fake.documents.set("file:///ws/a.py", textDocument("/ws/a.py", SOURCE));
      return Promise.resolve(k.executeCommand("kestrel.explain", [{ uri: "file:///ws/a.py", message: "bad", startLine: 2, endLine: 3 }],
        (() => forwarded.push("kestrel.explain")) as never));
    },
  },
  {
    name: "chat message with the current file (kestrel/chat)",
    run: async (k) => {
      openEditor(textDocument("/ws/a.py", SOURCE));
      await k.toChat({ type: "send", text: "what does this do?", chips: ["file"] });
      // The webview does not wait for the answer: wait for the chat's outcome (sent, or declined).
      await vi.waitFor(() => expect(k.posted.some((m) => m.type === "done" || m.type === "notice")).toBe(true));
    },
  },
  {
    name: "Edit Selection (kestrel/edit)",
    run: async (k) => {
      openEditor(textDocument("/ws/a.py", SOURCE), new Selection(2, 0, 3, 17));
      const done = k.inlineEdits.start();
      await vi.waitFor(() => expect(fake.inputBoxes.length).toBe(1));
      fake.inputBoxes[0].enter("make it faster");
      await done;
    },
  },
  {
    name: "next edit (kestrel/nextEdit)",
    run: async () => {
      fake.settings["nextEdit.enabled"] = { defaultValue: false, globalValue: true };
      const editor = openEditor(textDocument("/ws/a.py", SOURCE));
      vi.useFakeTimers();
      try {
        fake.onDidChangeTextDocument.fire({ document: editor.document, contentChanges: [{ text: "y" }] });
        await vi.advanceTimersByTimeAsync(NEXT_EDIT_DELAY_MS + 10);
      } finally {
        vi.useRealTimers();
      }
    },
  },
  {
    name: "steer (kestrel/steer)",
    run: (k) => k.running()!.sendRequest("kestrel/steer", { id: "edit-1", text: "also rename x" }).catch(() => undefined),
  },
];

/**
 * Lets every promise continuation already queued run (the answer being handled, the request
 * being sent or dropped): nothing on these paths waits for a timer or I/O.
 */
const settle = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => fake.reset());
afterEach(() => vi.useRealTimers());

describe("an untrusted workspace", () => {
  it.each(PATHS)("$name: asks, and sends nothing on 'Not now'", async ({ run }) => {
    fake.answer = NOT_NOW;
    const k = kestrel();
    const forwarded: string[] = [];
    await run(k, forwarded);
    await vi.waitFor(() => expect(fake.warnings.length).toBe(1)); // the question was asked
    await settle();
    expect(k.sent).toEqual([]);
    expect(forwarded).toEqual([]);
  });

  it.each(PATHS)("$name: sends once the user allows it for this session", async ({ run }) => {
    fake.answer = ALLOW;
    const k = kestrel();
    const forwarded: string[] = [];
    await run(k, forwarded);
    await vi.waitFor(() => expect(k.sent.length + forwarded.length).toBeGreaterThan(0));
    expect(fake.warnings.length).toBe(1);
  });

  it.each(PATHS)("$name: a trusted workspace is never asked", async ({ run }) => {
    fake.trusted = true;
    const k = kestrel();
    const forwarded: string[] = [];
    await run(k, forwarded);
    await vi.waitFor(() => expect(k.sent.length + forwarded.length).toBeGreaterThan(0));
    expect(fake.warnings).toEqual([]);
  });

  it("nothing is sent while the question is open", async () => {
    let answer: ((choice: string) => void) | undefined;
    let questions = 0;
    const gate = new WorkspaceTrustGate({ isTrusted: () => false, ask: () => (questions++, new Promise((r) => (answer = r))) });
    const raw = recordingClient();
    const pending = gate.guardClient(() => raw.client)()!.sendRequest("kestrel/edit", { instruction: "x" });
    const second = gate.guardClient(() => raw.client)()!.sendRequest("kestrel/chat", { messages: [] });
    await vi.waitFor(() => expect(answer).toBeDefined()); // the question is on screen
    expect(questions).toBe(1); // one question for both
    expect(raw.sent).toEqual([]);
    answer!(ALLOW);
    await Promise.all([pending, second]);
    expect(raw.sent.map((s) => s.method)).toEqual(["kestrel/edit", "kestrel/chat"]);
  });

  it("'Not now' keeps automatic requests quiet for the session; a command asks again", async () => {
    const asked: string[] = [];
    const gate = new WorkspaceTrustGate({ isTrusted: () => false, ask: async () => (asked.push("?"), NOT_NOW) });
    const raw = recordingClient();
    const client = gate.guardClient(() => raw.client)()!;
    await expect(client.sendRequest("kestrel/nextEdit", {})).rejects.toBeInstanceOf(TrustDeclined);
    await expect(client.sendRequest("kestrel/nextEdit", {})).rejects.toBeInstanceOf(TrustDeclined);
    expect(await gate.mayUseCode()).toBe(false); // inline completions: automatic
    expect(asked.length).toBe(1);
    await expect(client.sendRequest("kestrel/edit", {})).rejects.toBeInstanceOf(TrustDeclined);
    expect(asked.length).toBe(2);
    expect(raw.sent).toEqual([]);
  });

  it("a kestrel/* request the gate does not know waits for consent too (default deny)", async () => {
    const gate = new WorkspaceTrustGate({ isTrusted: () => false, ask: async () => NOT_NOW });
    const raw = recordingClient();
    await expect(gate.guardClient(() => raw.client)()!.sendRequest("kestrel/someNewFeature", { text: SOURCE })).rejects.toBeInstanceOf(TrustDeclined);
    expect(raw.sent).toEqual([]);
  });

  it("requests that carry no code (stop, status) are sent without asking", async () => {
    const asked: string[] = [];
    const gate = new WorkspaceTrustGate({ isTrusted: () => false, ask: async () => (asked.push("?"), NOT_NOW) });
    const raw = recordingClient();
    const client = gate.guardClient(() => raw.client)()!;
    await client.sendRequest("kestrel/stopChat", { id: "chat-1" });
    await client.sendRequest("kestrel/getStatus", {});
    expect(raw.sent.map((s) => s.method)).toEqual(["kestrel/stopChat", "kestrel/getStatus"]);
    expect(asked).toEqual([]);
  });

  it("a workspace cannot turn on next edit suggestions (restricted setting)", async () => {
    fake.answer = ALLOW;
    fake.settings["nextEdit.enabled"] = { defaultValue: false, workspaceFolderValue: true };
    const k = kestrel();
    const editor = openEditor(textDocument("/ws/a.py", SOURCE));
    vi.useFakeTimers();
    fake.onDidChangeTextDocument.fire({ document: editor.document, contentChanges: [{ text: "y" }] });
    await vi.advanceTimersByTimeAsync(NEXT_EDIT_DELAY_MS + 10);
    vi.useRealTimers();
    expect(fake.warnings).toEqual([]); // not even asked: the feature is off
    expect(k.sent).toEqual([]);
  });
});
