/** Pure conversation logic: building model messages, steer marks, titles, persistence. */
import type { Conversation, SteerMark, Turn } from "./protocol";

export const MAX_CONVERSATIONS = 30;

export function newConversation(now: number, id: string): Conversation {
  return { id, title: "New chat", created: now, turns: [] };
}

export function titleFrom(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 48 ? `${line.slice(0, 47)}…` : line || "New chat";
}

/** The model sees the conversation as alternating messages; context goes before the question. */
export function toMessages(conv: Conversation, question: string, context: string): { role: string; content: string }[] {
  const messages: { role: string; content: string }[] = [
    { role: "system", content: "You are Kestrel, a concise coding assistant inside VS Code. Answer in Markdown; put code in fenced blocks with a language." },
  ];
  for (const turn of conv.turns) {
    if (turn.text) messages.push({ role: turn.role, content: turn.text });
  }
  messages.push({ role: "user", content: context ? `${context}\n\n${question}` : question });
  return messages;
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

/** Conversations per workspace (VS Code workspaceState), newest first, bounded. */
export class ConversationStore {
  constructor(private readonly store: KeyValueStore, private readonly key = "kestrel.chat.conversations") {}

  all(): Conversation[] {
    return this.store.get<Conversation[]>(this.key) ?? [];
  }

  get(id: string): Conversation | undefined {
    return this.all().find((c) => c.id === id);
  }

  async save(conv: Conversation): Promise<void> {
    const rest = this.all().filter((c) => c.id !== conv.id);
    await this.store.update(this.key, [conv, ...rest].slice(0, MAX_CONVERSATIONS));
  }
}

export function appendTurn(conv: Conversation, turn: Turn): Conversation {
  const turns = [...conv.turns, turn];
  const title = conv.turns.length === 0 && turn.role === "user" ? titleFrom(turn.text) : conv.title;
  return { ...conv, title, turns };
}
