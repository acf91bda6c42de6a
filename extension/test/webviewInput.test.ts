import { describe, expect, it } from "vitest";
import { type KeyLike, inputKeyAction, isNewChatKey } from "../src/chat/webview/keys";
import { PromptRecall } from "../src/chat/webview/recall";

const key = (k: string, mods: Partial<KeyLike> = {}): KeyLike => ({ key: k, shiftKey: false, ctrlKey: false, altKey: false, metaKey: false, isComposing: false, ...mods });

describe("webview input keys", () => {
  const idle = { busy: false, text: "hello" };
  const busy = { busy: true, text: "more" };

  it("Enter submits (send when idle, steer while busy); Shift+Enter and an IME's Enter do not", () => {
    expect(inputKeyAction(key("Enter"), idle)).toBe("submit");
    expect(inputKeyAction(key("Enter"), busy)).toBe("submit");
    expect(inputKeyAction(key("Enter", { shiftKey: true }), idle)).toBeUndefined();
    expect(inputKeyAction(key("Enter", { isComposing: true }), idle)).toBeUndefined();
  });

  it("Tab queues only while busy and with text; otherwise it moves the focus", () => {
    expect(inputKeyAction(key("Tab"), busy)).toBe("queue");
    expect(inputKeyAction(key("Tab"), idle)).toBeUndefined();
    expect(inputKeyAction(key("Tab"), { busy: true, text: "  " })).toBeUndefined();
    expect(inputKeyAction(key("Tab", { shiftKey: true }), busy)).toBeUndefined();
  });

  it("Esc stops only while busy", () => {
    expect(inputKeyAction(key("Escape"), busy)).toBe("stop");
    expect(inputKeyAction(key("Escape"), idle)).toBeUndefined();
  });

  it("Ctrl+L (or Cmd+L) is a new chat; L alone or with Shift is not", () => {
    expect(isNewChatKey(key("l", { ctrlKey: true }))).toBe(true);
    expect(isNewChatKey(key("L", { metaKey: true }))).toBe(true);
    expect(isNewChatKey(key("l"))).toBe(false);
    expect(isNewChatKey(key("L", { ctrlKey: true, shiftKey: true }))).toBe(false);
  });
});

describe("webview prompt recall", () => {
  const prompts = ["first", "second", "third"];

  it("↑ from an empty input goes back one prompt at a time and stops at the oldest", () => {
    const recall = new PromptRecall(() => prompts);
    expect(recall.up("")).toBe("third");
    expect(recall.up("third")).toBe("second");
    expect(recall.up("second")).toBe("first");
    expect(recall.up("first")).toBe("first");
  });

  it("↓ comes forward again and ends in an empty input", () => {
    const recall = new PromptRecall(() => prompts);
    recall.up("");
    recall.up("third");
    expect(recall.down("second")).toBe("third");
    expect(recall.down("third")).toBe("");
    expect(recall.down("")).toBeUndefined();
  });

  it("leaves the arrows to the caret once the text is the user's own", () => {
    const recall = new PromptRecall(() => prompts);
    expect(recall.up("typed text")).toBeUndefined();
    recall.up("");
    expect(recall.up("third, edited")).toBeUndefined();
    expect(recall.down("third, edited")).toBeUndefined();
  });

  it("has nothing to recall in a new conversation, and starts from the newest after a send", () => {
    expect(new PromptRecall(() => []).up("")).toBeUndefined();
    const list = ["a", "b"];
    const recall = new PromptRecall(() => list);
    recall.up("");
    recall.up("b");
    list.push("c");
    recall.reset();
    expect(recall.up("")).toBe("c");
  });
});
