/**
 * Apply all's checkpoints (src/chat/checkpoints.ts): kept bounded, too-large batches get none; the
 * answer records what was applied and left out; the model is told on the next turn (appliedNote).
 */
import { describe, expect, it } from "vitest";
import { CheckpointStore, MAX_CHECKPOINTS, MAX_CHECKPOINT_CHARS, appliedRecord, withApplied } from "../src/chat/checkpoints";
import { appendTurn, newConversation, toMessages } from "../src/chat/transcript";

function kv() {
  const data = new Map<string, unknown>();
  return { data, store: { get: <T>(k: string) => data.get(k) as T, update: async (k: string, v: unknown) => void (v === undefined ? data.delete(k) : data.set(k, v)) } };
}

const file = (path: string, before: string | null, after: string) => ({ uri: `file:///ws/${path}`, path, before, after });

describe("Apply all checkpoints", () => {
  it("keeps a batch's contents to restore, the newest ones only, and none for a batch too large", async () => {
    const { data, store } = kv();
    const checkpoints = new CheckpointStore(store);
    const id = await checkpoints.save([file("a.py", "old", "new"), file("b.py", null, "created")]);
    expect(checkpoints.get(id!)).toEqual([file("a.py", "old", "new"), file("b.py", null, "created")]);
    for (let i = 0; i < MAX_CHECKPOINTS; i++) await checkpoints.save([file("c.py", "x", `y${i}`)]);
    expect(checkpoints.get(id!)).toBeUndefined(); // the oldest went
    expect([...data.keys()].filter((k) => k.startsWith("kestrel.checkpoint.")).length).toBe(MAX_CHECKPOINTS);
    expect(await checkpoints.save([file("big.py", "x".repeat(MAX_CHECKPOINT_CHARS), "y")])).toBeUndefined();
    const last = (data.get("kestrel.checkpoints") as string[])[0];
    await checkpoints.drop(last);
    expect(checkpoints.get(last)).toBeUndefined();
    expect(data.get("kestrel.checkpoints")).not.toContain(last);
  });

  it("records the outcome on the answer and tells the model on the next turn", () => {
    let conv = appendTurn(newConversation(0, "c"), { role: "user", text: "change both" });
    conv = appendTurn(conv, { role: "assistant", text: "Here." });
    const record = appliedRecord({ applied: [file("models.py", "a", "b")], left: ["utils.py"] }, "cp1");
    expect(record).toEqual({ files: ["models.py"], left: ["utils.py"], checkpoint: "cp1" });
    expect(withApplied(conv, 0, record)).toBeUndefined(); // a question has no Apply all
    const updated = withApplied(conv, 1, record)!;
    expect(conv.turns[1].applied).toBeUndefined(); // the old conversation object is left as it was
    const sent = toMessages(updated, "next?", "");
    expect(sent[2].content).toBe("Here.\n\n(the user applied the changes to models.py; left out utils.py (do not propose those changes again unless asked).)");
    const restored = withApplied(updated, 1, { ...record, checkpoint: undefined, restored: true })!;
    expect(toMessages(restored, "next?", "")[2].content).toMatch(/then restored those files to what they were before\.\)$/);
  });
});
