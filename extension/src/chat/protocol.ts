/** Messages between the chat view (extension host) and its webview. Plain data only: no keys. */

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
  context?: string[]; // labels of the context chips sent with a user turn
}

export interface Conversation {
  id: string;
  title: string;
  created: number;
  turns: Turn[];
}

export interface Chip {
  kind: "selection" | "file" | "openFiles" | "diagnostics";
  label: string;
  enabled: boolean;
}

/** A message typed while an answer streamed (Tab), with the chips it was typed with. */
export interface QueuedMessage {
  id: string;
  text: string;
  chips: Chip["kind"][];
}

/** webview → extension */
export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string; chips: Chip["kind"][] }
  | { type: "steer"; text: string }
  | { type: "queue"; text: string; chips: Chip["kind"][] }
  | { type: "queueSend"; id: string }
  | { type: "queueRemove"; id: string }
  | { type: "stop" }
  | { type: "newChat" }
  | { type: "openChat"; id: string }
  | { type: "effort"; value: Effort }
  | { type: "copy"; code: string }
  | { type: "insert"; code: string }
  | { type: "apply"; code: string };

/** extension → webview */
export type ToWebview =
  | { type: "state"; conversation: Conversation; history: { id: string; title: string }[]; effort: Effort; chips: Chip[]; busy: boolean; queued: QueuedMessage[] }
  | { type: "delta"; delta: string }
  | { type: "steered"; mark: SteerMark }
  | { type: "done"; turn: Turn; queued: QueuedMessage[] }
  | { type: "notice"; text: string };
