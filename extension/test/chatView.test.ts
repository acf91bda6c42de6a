/**
 * The chat view's host side, driven as the webview drives it (messages in, messages out) against
 * a server stand-in whose answers the test streams and ends: chips that follow the editor, the
 * context a send attaches, Retry, the answer kept on disk while it streams and at Stop, the first
 * token posted at once, history rename/delete, the model line, focus, codebase answers (their
 * sources shown before the answer and kept with it; only the files the server named open).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { EventEmitter, fake, openEditor, Range, Selection, textDocument, Uri, vscode as fakeApi } from "./fakeVscode";
import { ChatViewProvider, type ChatClient } from "../src/chat/chatView";
import type { Conversation, FromWebview, ToWebview } from "../src/chat/protocol";
import type { StatusWithEffort } from "../src/chat/modelInfo";
import { ConversationStore } from "../src/chat/transcript";

/** A server stand-in: records requests; each kestrel/chat waits until the test ends it. */
function server() {
  const requests: { method: string; params: any }[] = [];
  const handlers = new Map<string, (p: any) => void>();
  const pending: ((r: unknown) => void)[] = [];
  const failures: ((e: Error) => void)[] = [];
  const client: ChatClient = {
    sendRequest: async <R>(method: string, params: unknown): Promise<R> => {
      requests.push({ method, params });
      if (method === "kestrel/chat")
        return new Promise<R>((resolve, reject) => {
          pending.push(resolve as (r: unknown) => void);
          failures.push(reject);
        });
      return null as R;
    },
    onNotification: (method, handler) => {
      handlers.set(method, handler);
      return { dispose: () => handlers.delete(method) };
    },
  };
  const chats = () => requests.filter((r) => r.method === "kestrel/chat");
  return {
    client,
    requests,
    chats,
    delta: (delta: string) => handlers.get("kestrel/chatDelta")?.({ id: chats().at(-1)!.params.id, delta }),
    sources: (sources: object[], id = chats().at(-1)!.params.id) => handlers.get("kestrel/chatSources")?.({ id, sources, searchMs: 7 }),
    answer: (result: object) => pending.shift()!({ id: chats().at(-1)!.params.id, steers: [], ...result }),
    fail: (message: string) => (pending.shift(), failures.shift()!(new Error(message))),
  };
}

function harness(options: { stored?: Conversation[]; current?: string } = {}) {
  // Stored the old way (one key for all): the store reads it and moves it to its own keys at the first write.
  const state = new Map<string, unknown>([["kestrel.chat.conversations", options.stored ?? []], ["kestrel.chat.current", options.current]]);
  const context = {
    workspaceState: { get: (k: string) => state.get(k), update: async (k: string, v: unknown) => void state.set(k, v) },
    extensionUri: Uri.file("/ext"),
  };
  const srv = server();
  const status = new EventEmitter<StatusWithEffort | undefined>();
  const statusSource = { status: { state: "ready", provider: "openai", model: "gpt-x" } as StatusWithEffort, onDidChangeStatus: status.event };
  const chat = new ChatViewProvider(context as never, () => srv.client, async () => true, statusSource);
  let toHost: ((m: FromWebview) => unknown) | undefined;
  const posted: ToWebview[] = [];
  chat.resolveWebviewView({
    webview: {
      options: {},
      html: "",
      cspSource: "self",
      asWebviewUri: (u: unknown) => u,
      onDidReceiveMessage: (l: (m: FromWebview) => unknown) => ((toHost = l), { dispose: () => undefined }),
      postMessage: async (m: ToWebview) => (posted.push(m), true),
    },
  } as never);
  /** What is on disk, read back by a fresh store (as the next window would). */
  const saved = () => new ConversationStore({ get: <T>(k: string) => state.get(k) as T, update: async () => undefined }).all();
  const of = <T extends ToWebview["type"]>(type: T) => posted.filter((m): m is Extract<ToWebview, { type: T }> => m.type === type);
  return { chat, srv, state, saved, posted, of, status, send: (m: FromWebview) => toHost!(m) };
}

/** Lets the host's awaits (trust, context, saves) run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => fake.reset());
afterEach(() => vi.useRealTimers());

describe("chips tell the truth", () => {
  it("push the active file, the selection and every other open tab (no secrets) when the editor changes", async () => {
    vi.useFakeTimers();
    const h = harness();
    const main = textDocument("/ws/main.py", "a = 1\nb = 2\nc = 3\n");
    fake.documents.set(Uri.file("/ws/models.py").toString(), textDocument("/ws/models.py", "class M: ...\n"));
    openEditor(main, new Selection(1, 0, 2, 5));
    fake.tabs = [Uri.file("/ws/main.py"), Uri.file("/ws/models.py"), Uri.file("/ws/utils.py"), Uri.file("/ws/.env")];
    fake.onDidChangeActiveTextEditor.fire(undefined);
    fake.onDidChangeTabs.fire(undefined);
    await vi.advanceTimersByTimeAsync(50);
    expect(h.of("chips")).toHaveLength(0); // debounced: one push for the burst
    await vi.advanceTimersByTimeAsync(100);
    const chips = h.of("chips");
    expect(chips).toHaveLength(1);
    expect(chips[0].chips).toEqual([
      expect.objectContaining({ kind: "selection", label: "main.py:2-3", enabled: true, available: true }),
      expect.objectContaining({ kind: "file", label: "main.py", enabled: true, available: true }),
      expect.objectContaining({ kind: "openFiles", label: "2 open files", detail: "models.py, utils.py", enabled: false, available: true }),
      expect.objectContaining({ kind: "diagnostics", available: false }),
    ]);
    // Selection changes follow too.
    fake.activeTextEditor = { ...(fake.activeTextEditor as object), selection: new Selection(0, 0, 0, 0) };
    fake.onDidChangeTextEditorSelection.fire(undefined);
    await vi.advanceTimersByTimeAsync(150);
    expect(h.of("chips")[1].chips[0]).toEqual(expect.objectContaining({ kind: "selection", available: false, enabled: false }));
  });

  it("a send attaches what the chips said and names each item on the user turn", async () => {
    const h = harness();
    openEditor(textDocument("/ws/main.py", "a = 1\nb = 2\nc = 3\n"), new Selection(0, 0, 1, 5));
    fake.documents.set(Uri.file("/ws/models.py").toString(), textDocument("/ws/models.py", "MODEL = 1\n"));
    fake.documents.set(Uri.file("/ws/utils.py").toString(), textDocument("/ws/utils.py", "UTIL = 2\n"));
    fake.tabs = [Uri.file("/ws/models.py"), Uri.file("/ws/utils.py")];
    fake.diagnostics = [{ range: new Range(2, 0, 2, 1), message: "c is unused" }];
    await h.send({ type: "send", text: "Explain", chips: ["selection", "file", "openFiles", "diagnostics"] });
    await settle();
    const question = h.srv.chats()[0].params.messages.at(-1).content as string;
    expect(question).toContain("Selected lines 1-2 of main.py");
    expect(question).toContain("Open file models.py:\n```python\nMODEL = 1");
    expect(question).toContain("UTIL = 2");
    expect(question).toContain("line 3: c is unused");
    expect(question.endsWith("Explain")).toBe(true);
    h.srv.answer({ text: "ok" });
    await settle();
    const user = h.saved()[0].turns[0];
    expect(user.context).toEqual(["selection main.py:1-2", "file main.py", "open files models.py, utils.py", "diagnostics main.py (1)"]);
    expect(user.chips).toEqual(["selection", "file", "openFiles", "diagnostics"]);
    expect(user.at).toEqual(expect.any(Number));
  });

  it("never attaches a secret active file", async () => {
    const h = harness();
    openEditor(textDocument("/ws/.env", "API_KEY=sk-123\n", "dotenv"), new Selection(0, 0, 0, 5));
    await h.send({ type: "send", text: "hi", chips: ["selection", "file"] });
    await settle();
    expect(JSON.stringify(h.srv.chats()[0].params.messages)).not.toContain("sk-123");
  });
});

describe("speed: the request goes first", () => {
  it("sends kestrel/chat before the question is saved, and posts the first delta at once", async () => {
    const h = harness();
    let saves = 0;
    const update = (h.chat as any).store.store.update;
    (h.chat as any).store.store.update = async (k: string, v: unknown) => {
      saves++;
      await new Promise((r) => setTimeout(r, 50)); // a slow disk
      return update(k, v);
    };
    await h.send({ type: "send", text: "hi", chips: [] });
    expect(h.srv.chats()).toHaveLength(1); // sent without waiting for the save…
    expect(saves).toBe(0); // …which starts right after it
    await settle();
    expect(saves).toBeGreaterThan(0);
    vi.useFakeTimers();
    h.srv.delta("Hel");
    expect(h.of("delta").map((d) => d.delta)).toEqual(["Hel"]); // no timer for the first token
    h.srv.delta("lo");
    h.srv.delta(" world");
    expect(h.of("delta")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(20);
    expect(h.of("delta").map((d) => d.delta)).toEqual(["Hel", "lo world"]); // the rest per frame
  });
});

describe("retry", () => {
  it("resends exactly the same messages in place of the failed answer, once per click", async () => {
    const h = harness();
    openEditor(textDocument("/ws/main.py", "x = 1\n"));
    await h.send({ type: "send", text: "Why?", chips: ["file"] });
    await settle();
    h.srv.fail("connection reset");
    await settle();
    expect(h.of("done").at(-1)!.turn.error).toContain("connection reset");
    expect(h.saved()[0].turns.map((t) => t.role)).toEqual(["user", "assistant"]);
    // The file changes meanwhile: Retry still sends what was sent.
    openEditor(textDocument("/ws/main.py", "x = 2\n"));
    void h.send({ type: "retry" });
    void h.send({ type: "retry" }); // a double click
    await settle();
    expect(h.srv.chats()).toHaveLength(2);
    expect(h.srv.chats()[1].params.messages).toEqual(h.srv.chats()[0].params.messages);
    const state = h.of("state").at(-1)!;
    expect(state.busy).toBe(true);
    expect(state.conversation.turns.map((t) => t.role)).toEqual(["user"]); // the failed answer is gone
    h.srv.answer({ text: "Because." });
    await settle();
    expect(h.saved()[0].turns.map((t) => [t.role, t.text, t.error])).toEqual([["user", "Why?", undefined], ["assistant", "Because.", undefined]]);
  });

  it("after a reload rebuilds the context from the turn's chips", async () => {
    const stored: Conversation = {
      id: "c1",
      title: "Why?",
      created: 1,
      turns: [
        { role: "user", text: "Why?", context: ["file main.py"], chips: ["file"] },
        { role: "assistant", text: "Partial", interrupted: true },
      ],
    };
    const h = harness({ stored: [stored], current: "c1" });
    openEditor(textDocument("/ws/main.py", "y = 3\n"));
    await h.send({ type: "retry" });
    await settle();
    const messages = h.srv.chats()[0].params.messages;
    expect(messages.map((m: any) => m.role)).toEqual(["system", "user"]);
    expect(messages[1].content).toContain("File main.py:\n```python\ny = 3");
    expect(messages[1].content.endsWith("Why?")).toBe(true);
  });

  it("is ignored while an answer streams", async () => {
    const h = harness();
    await h.send({ type: "send", text: "a", chips: [] });
    await h.send({ type: "retry" });
    expect(h.srv.chats()).toHaveLength(1);
  });
});

describe("never lose a conversation", () => {
  it("saves the streaming answer as interrupted every ~250 ms, and the final turn at the end", async () => {
    vi.useFakeTimers();
    const h = harness();
    await h.send({ type: "send", text: "Tell me", chips: [] });
    await vi.advanceTimersByTimeAsync(0);
    expect(h.saved()[0].turns.map((t) => [t.role, t.text, t.interrupted])).toEqual([["user", "Tell me", undefined], ["assistant", "", true]]);
    h.srv.delta("Once upon");
    await vi.advanceTimersByTimeAsync(100);
    expect(h.saved()[0].turns[1].text).toBe(""); // throttled
    await vi.advanceTimersByTimeAsync(200);
    expect(h.saved()[0].turns[1]).toEqual(expect.objectContaining({ text: "Once upon", interrupted: true }));
    h.srv.delta(" a time");
    h.srv.answer({ text: "Once upon a time." });
    await vi.advanceTimersByTimeAsync(1000);
    const last = h.saved()[0].turns[1];
    expect(last.text).toBe("Once upon a time.");
    expect(last.interrupted).toBeUndefined();
    expect(h.saved()[0].updated).toEqual(expect.any(Number));
  });

  it("saves what arrived the moment Stop is pressed, before the server confirms", async () => {
    const h = harness();
    await h.send({ type: "send", text: "Long", chips: [] });
    h.srv.delta("Part one");
    await h.send({ type: "stop" });
    await settle();
    expect(h.srv.requests.map((r) => r.method)).toContain("kestrel/stopChat");
    expect(h.saved()[0].turns[1]).toEqual(expect.objectContaining({ text: "Part one", stopped: true }));
    expect(h.saved()[0].turns[1].interrupted).toBeUndefined();
  });

  it("loads a conversation cut off mid-answer with its interrupted turn", async () => {
    const stored: Conversation = { id: "c1", title: "t", created: 1, turns: [{ role: "user", text: "q" }, { role: "assistant", text: "half", interrupted: true }] };
    const h = harness({ stored: [stored], current: "c1" });
    await h.send({ type: "ready" });
    expect(h.of("state")[0].conversation.turns[1]).toEqual(expect.objectContaining({ text: "half", interrupted: true }));
  });
});

describe("history", () => {
  const stored = (): Conversation[] => [
    { id: "c2", title: "Second", created: 2, turns: [{ role: "user", text: "b" }] },
    { id: "c1", title: "First", created: 1, turns: [{ role: "user", text: "a" }] },
  ];

  it("renames through an input box prefilled with the title; Escape keeps it", async () => {
    const h = harness({ stored: stored(), current: "c2" });
    fake.inputBoxAnswer = undefined;
    await h.send({ type: "renameChat", id: "c1" });
    await settle();
    expect(fake.inputBoxOptions[0]).toEqual(expect.objectContaining({ value: "First" }));
    expect(h.saved().find((c) => c.id === "c1")!.title).toBe("First");
    fake.inputBoxAnswer = "Renamed";
    await h.send({ type: "renameChat", id: "c1" });
    await settle();
    expect(h.saved().find((c) => c.id === "c1")!.title).toBe("Renamed");
    expect(h.of("state").at(-1)!.history.map((x) => x.title)).toEqual(["Second", "Renamed"]);
  });

  it("deletes after a modal confirmation; deleting the open one opens a new chat", async () => {
    const h = harness({ stored: stored(), current: "c2" });
    fake.answer = undefined;
    await h.send({ type: "deleteChat", id: "c2" });
    await settle();
    expect(fake.warnings).toEqual(["Delete the conversation “Second”?"]);
    expect(h.saved()).toHaveLength(2);
    fake.answer = "Delete";
    await h.send({ type: "deleteChat", id: "c2" });
    await settle();
    expect(h.saved().map((c) => c.id)).toEqual(["c1"]);
    const state = h.of("state").at(-1)!;
    expect(state.conversation.turns).toEqual([]);
    expect(state.conversation.id).not.toBe("c2");
    expect(state.history.map((x) => x.id)).toEqual([state.conversation.id, "c1"]);
    expect(state.history[1]).toEqual(expect.objectContaining({ title: "First", created: 1 }));
  });
});

describe("model line and focus", () => {
  it("sends the model in the state and again when the server's status changes (effort supported unless it says not)", async () => {
    const h = harness();
    await h.send({ type: "ready" });
    expect(h.of("state")[0].model).toEqual({ provider: "openai", model: "gpt-x", effortSupported: true });
    h.status.fire({ state: "ready", provider: "ollama", model: "llama", effortSupported: false, effortNote: "no effort here" });
    expect(h.of("model")).toEqual([{ type: "model", model: { provider: "ollama", model: "llama", effortSupported: false, effortNote: "no effort here" } }]);
    h.status.fire({ state: "busy", provider: "ollama", model: "llama", effortSupported: false, effortNote: "no effort here" });
    expect(h.of("model")).toHaveLength(1); // unchanged: not sent again
  });

  it("focus is posted at once when the webview is up, else once it says ready", async () => {
    const h = harness();
    await h.chat.focus();
    expect(h.of("focus")).toHaveLength(0);
    expect(fake.executed.map((e) => e.command)).toContain("kestrel.chat.focus");
    await h.send({ type: "ready" });
    expect(h.of("focus")).toHaveLength(1);
    await h.chat.focus();
    expect(h.of("focus")).toHaveLength(2);
  });
});

describe("codebase answers", () => {
  const span = (first: number, last: number) => ({ start: { line: first - 1, character: 0 }, end: { line: last, character: 0 } });
  const INVOICE = { uri: "file:///ws/invoice.py", path: "invoice.py", range: span(4, 7), name: "invoice_total" };

  it("forwards the sources before the first token and keeps them, the citations and the invented paths with the answer", async () => {
    const h = harness();
    await h.send({ type: "send", text: "What does `invoice_total` return?", chips: [] });
    await settle();
    h.srv.sources([INVOICE], "another-turn"); // not this turn's
    expect(h.of("sources")).toHaveLength(0);
    h.srv.sources([INVOICE]);
    h.srv.delta("It sums [invoice.py:4-7].");
    const order = h.posted.filter((m) => m.type === "sources" || m.type === "delta").map((m) => m.type);
    expect(order).toEqual(["sources", "delta"]);
    expect(h.of("sources")[0]).toEqual({ type: "sources", sources: [INVOICE], searchMs: 7 });
    // A reload mid-answer gets the sources again, before the text so far.
    await h.send({ type: "ready" });
    const replay = h.posted.slice(h.posted.map((m) => m.type).lastIndexOf("state"));
    expect(replay.filter((m) => m.type === "sources" || m.type === "delta").map((m) => m.type)).toEqual(["sources", "delta"]);
    h.srv.answer({
      text: "It sums [invoice.py:4-7]. Also [legacy.py:1].",
      sources: [INVOICE],
      citations: [{ ...INVOICE, name: undefined }],
      inventedCitations: ["legacy.py"],
    });
    await settle();
    const done = h.of("done").at(-1)!.turn;
    expect(done.sources).toEqual([INVOICE]);
    expect(done.citations).toHaveLength(1);
    expect(done.inventedCitations).toEqual(["legacy.py"]);
    const saved = h.saved()[0].turns[1];
    expect(saved).toEqual(expect.objectContaining({ sources: [INVOICE], inventedCitations: ["legacy.py"] }));
    // The conversation reopened (history, a new window): the turn still has them.
    await h.send({ type: "ready" });
    expect(h.of("state").at(-1)!.conversation.turns[1].sources).toEqual([INVOICE]);
  });

  it("keeps the sources in the snapshot saved while the answer streams, and on a failed answer", async () => {
    vi.useFakeTimers();
    const h = harness();
    await h.send({ type: "send", text: "Where is `invoice_total`?", chips: [] });
    await vi.advanceTimersByTimeAsync(0);
    h.srv.sources([INVOICE]);
    h.srv.delta("Partial");
    await vi.advanceTimersByTimeAsync(300);
    expect(h.saved()[0].turns[1]).toEqual(expect.objectContaining({ text: "Partial", interrupted: true, sources: [INVOICE] }));
    h.srv.fail("connection reset");
    await vi.advanceTimersByTimeAsync(0);
    expect(h.saved()[0].turns[1]).toEqual(expect.objectContaining({ error: expect.stringContaining("connection reset"), sources: [INVOICE] }));
  });

  it("opens a source the server sent, with the caret at its first line and the span revealed", async () => {
    const h = harness();
    const doc = textDocument("/ws/invoice.py", "import math\n\n\ndef invoice_total(lines, tax):\n    s = sum(lines)\n    return s\n\n");
    fake.documents.set(doc.uri.toString(), doc);
    const revealed: unknown[] = [];
    const show = vi.spyOn(fakeApi.window, "showTextDocument").mockImplementation(async () => ({ revealRange: (r: unknown) => revealed.push(r) }) as never);
    try {
      await h.send({ type: "send", text: "What does `invoice_total` return?", chips: [] });
      await settle();
      h.srv.sources([INVOICE]);
      // While the answer streams, its sources already open.
      await h.send({ type: "openSource", uri: INVOICE.uri, range: INVOICE.range });
      await settle();
      expect(show).toHaveBeenCalledTimes(1);
      const [shownDoc, options] = show.mock.calls[0] as unknown as [unknown, { selection: Range }];
      expect(shownDoc).toBe(doc);
      expect(options.selection.start).toEqual(expect.objectContaining({ line: 3, character: 0 }));
      expect(options.selection.isEmpty).toBe(true);
      expect(revealed[0]).toEqual(expect.objectContaining({ start: expect.objectContaining({ line: 3 }), end: expect.objectContaining({ line: 7 }) }));
      h.srv.answer({ text: "ok", sources: [INVOICE] });
      await settle();
      // A line past the end of the file (the file changed since): the last line.
      await h.send({ type: "openSource", uri: INVOICE.uri, range: span(90, 95) });
      await settle();
      expect((show.mock.calls[1] as unknown as [unknown, { selection: Range }])[1].selection.start.line).toBe(doc.lineCount - 1);
    } finally {
      show.mockRestore();
    }
  });

  it("ignores files the server did not name for this conversation, and other schemes", async () => {
    const h = harness();
    // Every file exists: only the check keeps them closed.
    fake.documents.set("file:///etc/passwd", textDocument("/etc/passwd", "root:x:0:0\n"));
    fake.documents.set("untitled://Untitled-1", textDocument("Untitled-1", "x\n"));
    fake.documents.set(INVOICE.uri, textDocument("/ws/invoice.py", "def invoice_total(): ...\n"));
    const show = vi.spyOn(fakeApi.window, "showTextDocument");
    try {
      await h.send({ type: "send", text: "What does `invoice_total` return?", chips: [] });
      await settle();
      h.srv.sources([INVOICE, { ...INVOICE, uri: "untitled:Untitled-1" }]);
      await h.send({ type: "openSource", uri: "file:///etc/passwd", range: span(1, 1) });
      await h.send({ type: "openSource", uri: "untitled:Untitled-1", range: span(1, 1) });
      await h.send({ type: "openSource", uri: INVOICE.uri, range: "everything" } as never);
      h.srv.answer({ text: "ok" });
      await settle();
      // A new chat: the earlier conversation's files are no longer this conversation's.
      await h.send({ type: "newChat" });
      await h.send({ type: "openSource", uri: INVOICE.uri, range: INVOICE.range });
      await settle();
      expect(show).not.toHaveBeenCalled();
    } finally {
      show.mockRestore();
    }
  });
});

describe("#agent and the workspace's trust", () => {
  const agentRequest = async (trusted: boolean) => {
    fake.trusted = trusted;
    // The user allows pytest; the workspace's own .vscode/settings.json tries to allow curl.
    fake.settings = { "agent.allowedCommands": { defaultValue: [], globalValue: ["pytest"], workspaceFolderValue: ["curl"] } };
    const h = harness();
    await h.send({ type: "send", text: "#agent run the tests", chips: [] });
    await settle();
    return h.srv.requests.find((r) => r.method === "kestrel/agent")?.params;
  };

  it("a trusted workspace's agent may propose writes and ask to run commands, with the user's allow-list only", async () => {
    expect(await agentRequest(true)).toEqual(expect.objectContaining({ allowWrites: true, allowCommands: true, allowedCommands: ["pytest"] }));
  });

  it("an untrusted workspace's agent reads only: no writes, no commands, no allow-list", async () => {
    expect(await agentRequest(false)).toEqual(expect.objectContaining({ allowWrites: false, allowCommands: false, allowedCommands: [] }));
  });
});
