/** What a key in the chat input means (pure: the tests check the table, main.ts does the acting). */

export type InputKeyAction =
  | "submit" // Enter: send, or steer the running answer
  | "queue" // Tab while an answer runs: send after it
  | "stop" // Esc while an answer runs
  | "recallUp" // ↑: an earlier prompt (recall.ts decides whether there is one to show)
  | "recallDown"
  | undefined; // the textarea's own behaviour (Shift+Enter is a newline, Tab moves the focus when idle)

export interface KeyLike {
  key: string;
  shiftKey: boolean;
  ctrlKey: boolean;
  altKey: boolean;
  metaKey: boolean;
  /** An IME is composing: Enter picks the candidate, it does not send. */
  isComposing: boolean;
}

export function inputKeyAction(e: KeyLike, state: { busy: boolean; text: string }): InputKeyAction {
  if (e.isComposing) return undefined;
  const plain = !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey;
  if (e.key === "Enter" && !e.shiftKey && !e.altKey) return "submit";
  if (e.key === "Tab" && plain && state.busy && state.text.trim()) return "queue";
  if (e.key === "Escape" && plain && state.busy) return "stop";
  if (e.key === "ArrowUp" && plain) return "recallUp";
  if (e.key === "ArrowDown" && plain) return "recallDown";
  return undefined;
}

/** Ctrl+L (Cmd+L on macOS) anywhere in the panel: a new chat. */
export const isNewChatKey = (e: KeyLike) =>
  (e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "l";
