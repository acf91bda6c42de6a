/** Conversation logic without VS Code: building model messages, steer marks, titles, and persistence
 * (the store and the recorder that keeps a streaming answer on disk). */
import type { SourceRef } from "../protocol";
import type { AppliedRecord, Conversation, HistoryItem, SteerMark, Turn } from "./protocol";

export const MAX_CONVERSATIONS = 30;
export const DEFAULT_TITLE = "New chat";

export function newConversation(now: number, id: string): Conversation {
  return { id, title: DEFAULT_TITLE, created: now, turns: [] };
}

export function titleFrom(text: string): string {
  // A mention reads as what it names: "#file:src/app.py why?" → "app.py why?".
  const named = text.replace(/(?<![\w#@/])#(?:file|folder|sym):(\S+)/g, (_, arg: string) => arg.replace(/\/+$/, "").split("/").pop() || arg);
  const line = named.trim().split("\n")[0] ?? "";
  return line.length > 48 ? `${line.slice(0, 47)}…` : line || DEFAULT_TITLE;
}

/** The model sees the conversation as alternating messages; context goes before the question. */
export function toMessages(conv: Conversation, question: string, context: string): { role: string; content: string }[] {
  const messages: { role: string; content: string }[] = [
    // Naming the file in the fence lets "Apply" put a block into the right file (codeBlocks.blockTarget).
    {
      role: "system",
      content:
        "You are Kestrel, a concise coding assistant inside VS Code. Answer in Markdown; put code in fenced blocks with a language. " +
        "When a block changes a file of the workspace, write its path after the language (```python src/models.py) and show whole functions.",
    },
  ];
  for (const turn of conv.turns) {
    if (turn.text) messages.push({ role: turn.role, content: turn.text + appliedNote(turn.applied) });
  }
  messages.push({ role: "user", content: context ? `${context}\n\n${question}` : question });
  return messages;
}

/** What the user did with an answer's changes, told to the model with it: what it left out is not proposed again. */
export function appliedNote(applied: AppliedRecord | undefined): string {
  if (!applied?.files.length) return "";
  const parts = [`the user applied the changes to ${applied.files.join(", ")}`];
  if (applied.left.length) parts.push(`left out ${applied.left.join(", ")} (do not propose those changes again unless asked)`);
  if (applied.restored) parts.push("then restored those files to what they were before");
  return `\n\n(${parts.join("; ")}.)`;
}

/** Split an assistant text at its steer marks: [{text, steer?}] for rendering the transcript. */
export function segments(text: string, steers: SteerMark[] = []): { text: string; steer?: SteerMark }[] {
  const out: { text: string; steer?: SteerMark }[] = [];
  let from = 0;
  for (const mark of [...steers].sort((a, b) => a.at - b.at)) {
    const at = Math.max(from, Math.min(mark.at, text.length));
    out.push({ text: text.slice(from, at) });
    out.push({ text: "", steer: mark });
    from = at;
  }
  out.push({ text: text.slice(from) });
  return out.filter((s) => s.text || s.steer);
}

export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

/**
 * Conversations per workspace (VS Code workspaceState), most recently saved first, bounded.
 * Each conversation has its own key and a small index lists them: a save while an answer streams
 * (every ~250 ms) writes that one conversation, not the whole history (workspaceState crosses to
 * the window's process on every write; in code-server, over the network).
 * Writes are serialized: each reads what the previous one wrote, none overwrites a newer one.
 */
export class ConversationStore {
  private writing: Promise<void> = Promise.resolve();
  private readonly indexKey: string;
  /** Before per-conversation keys: one key holding every conversation (read once, then moved). */
  private readonly legacyKey: string;

  constructor(
    private readonly store: KeyValueStore,
    private readonly now: () => number = Date.now,
    private readonly prefix = "kestrel.chat",
  ) {
    this.indexKey = `${prefix}.index`;
    this.legacyKey = `${prefix}.conversations`;
  }

  private key(id: string): string {
    return `${this.prefix}.conversation.${id}`;
  }

  private index(): HistoryItem[] {
    const index = this.store.get<HistoryItem[]>(this.indexKey);
    if (index) return index;
    return (this.store.get<Conversation[]>(this.legacyKey) ?? []).map(({ id, title, created, updated }) => ({ id, title, created, updated }));
  }

  all(): Conversation[] {
    return this.index().map((h) => this.get(h.id)).filter((c): c is Conversation => Boolean(c));
  }

  get(id: string): Conversation | undefined {
    return this.store.get<Conversation>(this.key(id)) ?? this.store.get<Conversation[]>(this.legacyKey)?.find((c) => c.id === id);
  }

  /** Saves `conv` (stamped `updated`) as the most recent one. */
  save(conv: Conversation): Promise<void> {
    return this.write(async () => {
      const saved = { ...conv, updated: this.now() };
      await this.store.update(this.key(conv.id), saved);
      const item = { id: saved.id, title: saved.title, created: saved.created, updated: saved.updated };
      const index = [item, ...this.index().filter((h) => h.id !== conv.id)];
      for (const dropped of index.slice(MAX_CONVERSATIONS)) await this.store.update(this.key(dropped.id), undefined);
      await this.store.update(this.indexKey, index.slice(0, MAX_CONVERSATIONS));
    });
  }

  /** A new title, without making it the most recent one. */
  rename(id: string, title: string): Promise<void> {
    return this.write(async () => {
      const conv = this.get(id);
      if (!conv) return;
      const updated = this.now();
      await this.store.update(this.key(id), { ...conv, title, updated });
      await this.store.update(this.indexKey, this.index().map((h) => (h.id === id ? { ...h, title, updated } : h)));
    });
  }

  remove(id: string): Promise<void> {
    return this.write(async () => {
      await this.store.update(this.indexKey, this.index().filter((h) => h.id !== id));
      await this.store.update(this.key(id), undefined);
    });
  }

  /** The history list: `current` first when it is not saved yet (a new chat). */
  history(current?: Conversation): HistoryItem[] {
    const saved = this.index();
    if (!current || saved.some((h) => h.id === current.id)) return saved;
    const { id, title, created, updated } = current;
    return [{ id, title, created, updated }, ...saved];
  }

  /** Moves conversations stored the old way (all under one key) to their own keys, once. */
  private async migrate(): Promise<void> {
    const legacy = this.store.get<Conversation[]>(this.legacyKey);
    if (!legacy || this.store.get<HistoryItem[]>(this.indexKey)) return;
    for (const conv of legacy.slice(0, MAX_CONVERSATIONS)) await this.store.update(this.key(conv.id), conv);
    await this.store.update(this.indexKey, legacy.slice(0, MAX_CONVERSATIONS).map(({ id, title, created, updated }) => ({ id, title, created, updated })));
    await this.store.update(this.legacyKey, undefined);
  }

  private write(change: () => Promise<void>): Promise<void> {
    const run = async () => {
      await this.migrate();
      await change();
    };
    this.writing = this.writing.then(run, run);
    return this.writing;
  }
}

/** A new conversation takes its first question as title, unless the user named it already. */
export function appendTurn(conv: Conversation, turn: Turn): Conversation {
  const turns = [...conv.turns, turn];
  const title = conv.turns.length === 0 && turn.role === "user" && conv.title === DEFAULT_TITLE ? titleFrom(turn.text) : conv.title;
  return { ...conv, title, turns };
}

/**
 * Keeps a streaming answer on disk while it arrives, so that a reload, a crash or a closed window
 * loses nothing: the conversation is saved with a trailing assistant turn marked `interrupted`
 * (what arrived so far; at most `throttleMs` old), or `stopped` the moment the user presses Stop.
 * The caller saves the real final turn at the end, which replaces it.
 */
export class AnswerRecorder {
  private text = "";
  private readonly steers: SteerMark[] = [];
  private found: SourceRef[] | undefined;
  private readonly done: string[] = [];
  private stopped = false;
  private finished = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly store: ConversationStore,
    /** The conversation the answer belongs to, as it is now (its last turn is the question). */
    private readonly conversation: () => Conversation,
    private readonly throttleMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** What arrived so far. */
  get received(): string {
    return this.text;
  }

  get wasStopped(): boolean {
    return this.stopped;
  }

  /** The question is asked: saved at once, with an empty interrupted answer after it. */
  begin(): Promise<void> {
    return this.save();
  }

  delta(delta: string): void {
    this.text += delta;
    if (this.finished || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.save();
    }, this.throttleMs);
  }

  steered(mark: SteerMark): void {
    this.steers.push(mark);
  }

  /** An agent step ended: its streamed text (the tool calls as written) is dropped, its steers and
   * `lines` (what it did) are kept as the answer's steps. */
  step(lines: string[]): void {
    this.done.push(...this.steers.map((s) => `You said: ${s.text}`), ...lines);
    this.text = "";
    this.steers.length = 0;
  }

  /** What the agent did so far (`step`). */
  get steps(): string[] {
    return [...this.done];
  }

  /** The workspace code the prompt holds (`kestrel/chatSources`): in every snapshot from now on (no
   * write of its own: it comes just before the first token, whose throttled save takes it along). */
  sources(sources: SourceRef[]): void {
    this.found = sources;
  }

  /** Stop pressed: saved now, before the server confirms (the window may close meanwhile). */
  stop(): Promise<void> {
    this.stopped = true;
    return this.save();
  }

  /** The answer ended: no snapshot is written after this (the final turn replaces it). */
  finish(): void {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The conversation with the answer so far as its last turn. */
  snapshot(): Conversation {
    const conv = this.conversation();
    const turn: Turn = { role: "assistant", text: this.text, at: this.now() };
    if (this.steers.length) turn.steers = [...this.steers];
    if (this.found?.length) turn.sources = this.found;
    if (this.done.length) turn.steps = [...this.done];
    if (this.stopped) turn.stopped = true;
    else turn.interrupted = true;
    return { ...conv, turns: [...conv.turns, turn] };
  }

  private save(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return this.store.save(this.snapshot());
  }
}
