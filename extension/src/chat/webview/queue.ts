/** Messages queued with Tab while an answer streams: each with its chips and what can be done with it. */
import type { FromWebview, QueuedMessage } from "../protocol";

export interface QueueActions {
  post(msg: FromWebview): void;
  /** Edit: the text goes back into the input (the queued copy is removed). */
  edit(text: string): void;
  /** Takes the message out of the queue at once, here and in the host. */
  remove(id: string): void;
}

export function renderQueue(bar: HTMLElement, queued: QueuedMessage[], busy: boolean, actions: QueueActions): void {
  bar.hidden = queued.length === 0;
  const caption = document.createElement("div");
  caption.className = "queue-caption";
  caption.textContent = busy ? "Queued: sent one by one when the answer ends" : "Queued (kept after Stop)";
  bar.replaceChildren(
    caption,
    ...queued.map((q) => {
      const row = document.createElement("div");
      row.className = "queued";
      const text = document.createElement("span");
      text.className = "queued-text";
      text.textContent = q.chips.length ? `${q.text} (with ${q.chips.join(", ")})` : q.text;
      text.title = q.text;
      row.appendChild(text);
      const buttons: [string, string, string, () => void][] = [
        ["queued-send-now", "Send now", "Send this message now", () => actions.post({ type: "queueSend", id: q.id })],
        ["queued-edit", "Edit", "Put this message back into the input", () => {
          actions.edit(q.text);
          actions.remove(q.id);
        }],
        ["queued-remove", "Remove", "Remove this message from the queue", () => actions.remove(q.id)],
      ];
      for (const [className, label, title, run] of buttons) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = className;
        b.textContent = label;
        b.title = className === "queued-send-now" && busy ? "Sent when the current answer ends (or Stop it first)" : title;
        if (className === "queued-send-now") b.disabled = busy;
        b.addEventListener("click", run);
        row.appendChild(b);
      }
      return row;
    }),
  );
}
