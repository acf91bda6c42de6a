/**
 * Apply all's checkpoints: what the files of an applied answer held before, so that Restore can put
 * them back. Kept in the workspace's state, bounded (the newest MAX_CHECKPOINTS, each at most
 * MAX_CHECKPOINT_CHARS of text: a larger batch is applied without a checkpoint and says so).
 */
import type { AppliedRecord, Conversation } from "./protocol";
import type { KeyValueStore } from "./transcript";
import type { AppliedFile, ApplyOutcome } from "./review";

export const MAX_CHECKPOINTS = 20;
export const MAX_CHECKPOINT_CHARS = 2_000_000;
const INDEX = "kestrel.checkpoints";
const key = (id: string) => `kestrel.checkpoint.${id}`;

export class CheckpointStore {
  constructor(private readonly kv: KeyValueStore, private readonly now: () => number = Date.now) {}

  /** Keeps the files' contents; the checkpoint's id, or undefined when they are too large to keep. */
  async save(files: AppliedFile[]): Promise<string | undefined> {
    const size = files.reduce((n, f) => n + (f.before?.length ?? 0) + f.after.length, 0);
    if (size > MAX_CHECKPOINT_CHARS) return undefined;
    const id = `${this.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    await this.kv.update(key(id), files);
    const ids = [id, ...(this.kv.get<string[]>(INDEX) ?? [])];
    for (const old of ids.splice(MAX_CHECKPOINTS)) await this.kv.update(key(old), undefined);
    await this.kv.update(INDEX, ids);
    return id;
  }

  get(id: string): AppliedFile[] | undefined {
    return this.kv.get<AppliedFile[]>(key(id));
  }

  async drop(id: string): Promise<void> {
    await this.kv.update(key(id), undefined);
    await this.kv.update(INDEX, (this.kv.get<string[]>(INDEX) ?? []).filter((i) => i !== id));
  }
}

/** The record of an Apply all on the answer: what was applied, what was left out, its checkpoint. */
export function appliedRecord(outcome: ApplyOutcome, checkpoint: string | undefined): AppliedRecord {
  const record: AppliedRecord = { files: outcome.applied.map((f) => f.path), left: outcome.left };
  if (checkpoint) record.checkpoint = checkpoint;
  return record;
}

/** The conversation with `record` on its turn `index` (an answer), or undefined when there is none. */
export function withApplied(conv: Conversation, index: number, record: AppliedRecord): Conversation | undefined {
  if (conv.turns[index]?.role !== "assistant") return undefined;
  return { ...conv, turns: conv.turns.map((t, i) => (i === index ? { ...t, applied: record } : t)) };
}
