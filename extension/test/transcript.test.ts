import { afterEach, describe, expect, it, vi } from "vitest";
import { AnswerRecorder, ConversationStore, MAX_CONVERSATIONS, appendTurn, newConversation, segments, titleFrom, toMessages } from "../src/chat/transcript";
import { DeltaBatcher } from "../src/chat/stream";
import type { Conversation } from "../src/chat/protocol";

function memoryStore(now = () => 1000) {
  const data = new Map<string, unknown>();
  const store = new ConversationStore({ get: <T>(k: string) => data.get(k) as T, update: async (k, v) => void data.set(k, v) }, now);
  return { data, store };
}

describe("chat transcript", () => {
  it("splits an answer at its steer marks without losing text", () => {
    const text = "Use a loop. OK, shorter: use dict(pairs).";
    const parts = segments(text, [{ at: 12, text: "shorter please", mode: "native" }]);
    expect(parts.map((p) => p.text).join("")).toBe(text);
    expect(parts[1].steer?.text).toBe("shorter please");
    expect(parts[0].text).toBe("Use a loop. ");
  });

  it("clamps marks beyond the text and keeps order", () => {
    const parts = segments("abc", [{ at: 99, text: "b", mode: "emulated" }, { at: 1, text: "a", mode: "native" }]);
    expect(parts.filter((p) => p.steer).map((p) => p.steer!.text)).toEqual(["a", "b"]);
    expect(parts.map((p) => p.text).join("")).toBe("abc");
  });

  it("builds model messages with history and context before the question", () => {
    let conv = newConversation(0, "c1");
    conv = appendTurn(conv, { role: "user", text: "What is x?" });
    conv = appendTurn(conv, { role: "assistant", text: "x is 1." });
    const msgs = toMessages(conv, "And y?", "File a.py:\n```\ny = 2\n```");
    expect(msgs.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(msgs[3].content.endsWith("And y?")).toBe(true);
    expect(msgs[3].content.startsWith("File a.py")).toBe(true);
    expect(conv.title).toBe("What is x?");
  });

  it("titles are short single lines", () => {
    expect(titleFrom("a".repeat(100) + "\nmore")).toHaveLength(48);
    expect(titleFrom("  ")).toBe("New chat");
    expect(titleFrom("#file:src/tasks.py what does #sym:summary return? #problems")).toBe("tasks.py what does summary return? #problems");
  });

  it("stores conversations per workspace, newest first, bounded", async () => {
    const data = new Map<string, unknown>();
    const store = new ConversationStore({ get: <T>(k: string) => data.get(k) as T, update: async (k, v) => void data.set(k, v) });
    for (let i = 0; i < MAX_CONVERSATIONS + 5; i++) await store.save(newConversation(i, `c${i}`));
    expect(store.all()).toHaveLength(MAX_CONVERSATIONS);
    expect(store.all()[0].id).toBe(`c${MAX_CONVERSATIONS + 4}`);
    await store.save({ ...store.get("c20")!, title: "renamed" });
    expect(store.all()[0].title).toBe("renamed");
  });
});

describe("conversation store", () => {
  it("stamps updated on every save, renames in place, removes, lists history with dates", async () => {
    let clock = 10;
    const { store } = memoryStore(() => clock);
    await store.save(newConversation(1, "a"));
    clock = 20;
    await store.save(newConversation(2, "b"));
    expect(store.all().map((c) => [c.id, c.updated])).toEqual([["b", 20], ["a", 10]]);
    clock = 30;
    await store.rename("a", "Alpha");
    expect(store.all().map((c) => [c.id, c.title, c.updated])).toEqual([["b", "New chat", 20], ["a", "Alpha", 30]]); // order kept
    const fresh = newConversation(3, "c");
    expect(store.history(fresh).map((h) => h.id)).toEqual(["c", "b", "a"]);
    expect(store.history(fresh)[2]).toEqual({ id: "a", title: "Alpha", created: 1, updated: 30 });
    await store.remove("b");
    expect(store.history().map((h) => h.id)).toEqual(["a"]);
  });

  it("keeps each conversation under its own key: a save writes that one and the small index", async () => {
    const { data, store } = memoryStore();
    await store.save({ ...newConversation(1, "a"), turns: [{ role: "user", text: "x".repeat(1000) }] });
    const writes: string[] = [];
    const spy = new ConversationStore({ get: <T>(k: string) => data.get(k) as T, update: async (k, v) => void (writes.push(k), data.set(k, v)) });
    await spy.save(newConversation(2, "b"));
    expect(writes).toEqual(["kestrel.chat.conversation.b", "kestrel.chat.index"]);
    expect(store.all().map((c) => c.id)).toEqual(["b", "a"]);
    await store.remove("a");
    expect(data.get("kestrel.chat.conversation.a")).toBeUndefined();
    expect(store.all().map((c) => c.id)).toEqual(["b"]);
  });

  it("reads conversations stored the old way (one key) and moves them at the first write", async () => {
    const { data, store } = memoryStore();
    data.set("kestrel.chat.conversations", [newConversation(2, "b"), newConversation(1, "a")]);
    expect(store.history().map((h) => h.id)).toEqual(["b", "a"]);
    expect(store.get("a")?.id).toBe("a");
    await store.save(newConversation(3, "c"));
    expect(store.all().map((c) => c.id)).toEqual(["c", "b", "a"]);
    expect(data.get("kestrel.chat.conversations")).toBeUndefined();
  });

  it("serializes writes: a slower earlier write cannot overwrite a later one", async () => {
    const data = new Map<string, unknown>();
    const delays = [30, 0];
    const store = new ConversationStore({
      get: <T>(k: string) => data.get(k) as T,
      update: (k, v) => new Promise<void>((r) => setTimeout(() => (data.set(k, v), r()), delays.shift() ?? 0)),
    });
    const conv = newConversation(1, "a");
    const first = store.save({ ...conv, title: "first" });
    await store.save({ ...conv, title: "second" });
    await first;
    await new Promise((r) => setTimeout(r, 50)); // every write has landed
    expect(store.get("a")!.title).toBe("second");
  });

  it("a conversation the user named keeps its name at the first question", () => {
    const named = { ...newConversation(0, "x"), title: "My topic" };
    expect(appendTurn(named, { role: "user", text: "hello" }).title).toBe("My topic");
    expect(appendTurn(newConversation(0, "y"), { role: "user", text: "hello" }).title).toBe("hello");
  });
});

describe("answer recorder", () => {
  afterEach(() => vi.useRealTimers());

  it("saves the answer so far at most every 250 ms as interrupted, at Stop as stopped, nothing after finish", async () => {
    vi.useFakeTimers();
    const { store } = memoryStore();
    let conv: Conversation = appendTurn(newConversation(0, "c"), { role: "user", text: "q" });
    const rec = new AnswerRecorder(store, () => conv, 250, () => 5);
    await rec.begin();
    expect(store.get("c")!.turns.at(-1)).toEqual({ role: "assistant", text: "", interrupted: true, at: 5 });
    rec.delta("a");
    rec.delta("b");
    await vi.advanceTimersByTimeAsync(249);
    expect(store.get("c")!.turns.at(-1)!.text).toBe("");
    await vi.advanceTimersByTimeAsync(1);
    expect(store.get("c")!.turns.at(-1)!.text).toBe("ab");
    rec.steered({ at: 2, text: "shorter", mode: "native" });
    rec.delta("c");
    await rec.stop();
    expect(store.get("c")!.turns.at(-1)).toEqual({ role: "assistant", text: "abc", stopped: true, steers: [{ at: 2, text: "shorter", mode: "native" }], at: 5 });
    rec.finish();
    rec.delta("d");
    conv = appendTurn(conv, { role: "assistant", text: "final" });
    await store.save(conv);
    await vi.advanceTimersByTimeAsync(1000);
    expect(store.get("c")!.turns.map((t) => t.text)).toEqual(["q", "final"]);
  });

  it("drops an agent step's streamed text (its tool calls) and keeps what the step did, steers included", async () => {
    const { store } = memoryStore();
    const conv: Conversation = appendTurn(newConversation(0, "c"), { role: "user", text: "q" });
    const rec = new AnswerRecorder(store, () => conv, 250, () => 5);
    rec.delta('<tool_call>{"name": "grep"}');
    rec.steered({ at: 3, text: "only tests", mode: "native" });
    rec.step(["Searched files for /x/"]);
    rec.delta("It is in a.py.");
    expect(rec.received).toBe("It is in a.py.");
    expect(rec.steps).toEqual(["You said: only tests", "Searched files for /x/"]);
    await rec.stop();
    expect(store.get("c")!.turns.at(-1)).toEqual({ role: "assistant", text: "It is in a.py.", steps: ["You said: only tests", "Searched files for /x/"], stopped: true, at: 5 });
  });
});

describe("delta batcher", () => {
  afterEach(() => vi.useRealTimers());

  it("posts the first delta at once and the rest once per frame", async () => {
    vi.useFakeTimers();
    const posted: string[] = [];
    const b = new DeltaBatcher((d) => posted.push(d));
    b.push("A");
    expect(posted).toEqual(["A"]);
    b.push("b");
    b.push("c");
    expect(posted).toEqual(["A"]);
    await vi.advanceTimersByTimeAsync(16);
    expect(posted).toEqual(["A", "bc"]);
    b.push("d");
    b.flush();
    expect(posted).toEqual(["A", "bc", "d"]);
  });
});
