/** Messages between the chat view (extension host) and its webview. Plain data only: no keys. */
import type { Range, SourceRef } from "../protocol";

export type Role = "user" | "assistant";
export type Effort = "low" | "medium" | "high" | "xhigh";
export type SteerMode = "native" | "emulated";

export interface SteerMark {
  at: number; // character offset in the assistant text where the steer landed
  text: string;
  mode: SteerMode;
}

export interface Turn {
  role: Role;
  text: string;
  steers?: SteerMark[];
  error?: string;
  stopped?: boolean;
  /** The answer was cut off by a reload or a crash; what had arrived is kept. */
  interrupted?: boolean;
  /** A user turn: what was attached, by name ("file models.py", "open files a.py, b.py"). */
  context?: string[];
  /** A user turn: the chip kinds it was sent with (Retry after a reload rebuilds the context from them). */
  chips?: Chip["kind"][];
  /** A user turn: what its text mentioned (`#file:…`, `#sym:…`), re-read when it is sent again. */
  mentions?: Mention[];
  at?: number; // when the turn was sent or answered (ms since epoch)
  /** An answer: the workspace code its prompt held (the server searched the codebase), best first. */
  sources?: SourceRef[];
  /** An answer: what it cited that names workspace code (`[2]`: its 2nd source; `[path:L-L]`), in order. */
  citations?: SourceRef[];
  /** An answer: cited paths that name no workspace file (shown struck out). */
  inventedCitations?: string[];
  inventedPaths?: string[];
  /** An answer: what its prompt left out to fit the model's context window (the embedded model's 2,048 tokens). */
  trimmed?: string;
  /** An answer that stopped at its token limit (it may end mid-sentence). */
  hitTokenLimit?: boolean;
  /** An agent's answer: what it did on the way, in order ("Read src/a.py", "You said: …"). */
  steps?: string[];
  /** An answer whose blocks went through Apply all: the files applied and left out, its checkpoint. */
  applied?: AppliedRecord;
}

export interface AppliedRecord {
  files: string[];
  left: string[];
  /** The key of the files' contents before Apply all (absent: too large to keep, no restore). */
  checkpoint?: string;
  restored?: boolean;
  /** "agent": the agent's changes kept in the Refactor Preview (else Apply all). */
  by?: "agent";
}

export interface Conversation {
  id: string;
  title: string;
  created: number;
  updated?: number;
  turns: Turn[];
}

export interface Chip {
  kind: "selection" | "file" | "openFiles" | "diagnostics";
  /** Exactly what the next send attaches for this chip, by name ("main.py", "2 open files"). */
  label: string;
  /** The names it attaches (tooltip and the sent turn's list). */
  detail?: string;
  enabled: boolean;
  /** Nothing to attach right now (no selection, no other tab): shown disabled. */
  available?: boolean;
}

/** What a mention is: a kind of thing the picker offers (mentions.ts serialises and parses them). */
export type MentionKind = "file" | "folder" | "symbol" | "selection" | "problems" | "diff" | "terminal" | "codebase" | "agent";

/**
 * A mention in the input: a picker's pick, kept in the text as its marker and sent as a URI that is
 * re-read when the message goes (the file's text then, the symbol's lines then, the problems then).
 */
export interface Mention {
  kind: MentionKind;
  /** What the text holds: `#file:src/app.py`, `#file:app.py:10-20`, `#sym:parse_due`, `#problems`. */
  marker: string;
  /** Where it is re-read: `file:///abs/app.py`, `file:///abs/app.py#L10-20`, `kestrel-problems:`, `kestrel-git-diff:`. */
  uri: string;
  /** The chip's text: `app.py`, `app.py:10-20`, `parse_due`, `problems`. */
  name: string;
}

/** A row of the picker: a mention and what tells it apart (its folder, the symbol's file and lines). */
export interface MentionItem extends Mention {
  detail?: string;
}

/** A message typed while an answer streamed (Tab), with the chips it was typed with. */
export interface QueuedMessage {
  id: string;
  text: string;
  chips: Chip["kind"][];
  mentions?: Mention[];
}

/** A fenced code block of an answer and the file it belongs to (codeBlocks.ts decides). */
export interface CodeBlock {
  code: string;
  lang: string;
  /** Workspace-relative path named by the fence/header, if any. */
  file?: string;
}

export interface HistoryItem {
  id: string;
  title: string;
  created: number;
  updated?: number;
}

/** What the webview shows about the model in use and what the effort picker can do there. */
export interface ModelInfo {
  provider?: string;
  model?: string;
  /** False where the provider has no reasoning effort: the picker is disabled with `effortNote` as its tooltip. */
  effortSupported: boolean;
  effortNote?: string;
}

/** webview → extension */
export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string; chips: Chip["kind"][]; mentions?: Mention[] }
  | { type: "steer"; text: string }
  | { type: "queue"; text: string; chips: Chip["kind"][]; mentions?: Mention[] }
  /** `#`/`@` typed at a word start: what the picker should list for the text after it (`id` grows). */
  | { type: "mentionQuery"; id: number; query: string }
  | { type: "queueSend"; id: string }
  | { type: "queueRemove"; id: string }
  | { type: "stop" }
  | { type: "retry" }
  | { type: "newChat" }
  | { type: "openChat"; id: string }
  | { type: "renameChat"; id: string }
  | { type: "deleteChat"; id: string }
  | { type: "effort"; value: Effort }
  | { type: "copy"; code: string }
  | { type: "insert"; block: CodeBlock }
  | { type: "apply"; block: CodeBlock }
  /** `turn`: the answer's index in the conversation (its Apply all is recorded there, with a checkpoint). */
  | { type: "applyAll"; blocks: CodeBlock[]; turn: number }
  /** Put back the files of the answer's Apply all as they were before it. */
  | { type: "restore"; turn: number }
  | { type: "run"; block: CodeBlock }
  /** A source or citation link: open `uri` there (the host opens only files the server named). */
  | { type: "openSource"; uri: string; range: Range }
  /** The chat benchmark's probe: the bare webview ⇄ extension-host round trip (answered at once). */
  | { type: "ping"; sent: number };

/** extension → webview */
export type ToWebview =
  | {
      type: "state";
      conversation: Conversation;
      history: HistoryItem[];
      effort: Effort;
      chips: Chip[];
      busy: boolean;
      queued: QueuedMessage[];
      model: ModelInfo;
    }
  /** The active editor, its selection or the open tabs changed: what the chips now attach. */
  | { type: "chips"; chips: Chip[] }
  | { type: "model"; model: ModelInfo }
  /** The open-chat shortcut: put the caret in the input. */
  | { type: "focus" }
  | { type: "delta"; delta: string }
  /** An agent step ended: the text streamed for it is done with (it held the tool calls); `lines` say what it did. */
  | { type: "agentStep"; lines: string[] }
  | { type: "agentReview"; files: string[]; command?: string; running?: boolean }
  | { type: "steered"; mark: SteerMark }
  /** The running answer's sources (the workspace code its prompt holds), before its first token. */
  | { type: "sources"; sources: SourceRef[]; searchMs?: number }
  | { type: "done"; turn: Turn; queued: QueuedMessage[] }
  | { type: "notice"; text: string }
  /** The picker's rows for query `id`: the files at once, the symbols appended when they arrive (`done`: no more). */
  | { type: "mentionItems"; id: number; items: MentionItem[]; append: boolean; done: boolean }
  | { type: "pong"; sent: number };
