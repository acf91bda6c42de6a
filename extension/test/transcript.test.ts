import { describe, expect, it } from "vitest";
import { ConversationStore, MAX_CONVERSATIONS, appendTurn, newConversation, segments, titleFrom, toMessages } from "../src/chat/transcript";

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
