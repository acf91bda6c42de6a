/**
 * #transcript: the conversation's turns, the answer streaming after them, the host's notices, and
 * the empty state. A refresh from the host re-renders only the turns that changed, so a state
 * message during a stream (a queued message, a renamed chat) neither flickers nor loses the answer.
 */
import type { MarkdownIt } from "markdown-it";
import type { Turn } from "../protocol";
import { type LiveHooks, LiveTurn } from "./stream";
import { element, turnElement } from "./turns";

interface Row {
  /** What the element shows: the turn, and whether it offers Retry. */
  signature: string;
  el: HTMLElement;
}

const signature = (turn: Turn, retry: boolean) => `${retry ? "R" : "-"}${JSON.stringify(turn)}`;

/** Retry is offered on a failed answer that is the conversation's last turn, while nothing runs. */
const offersRetry = (turns: Turn[], i: number, busy: boolean) => i === turns.length - 1 && !busy && Boolean(turns[i].error);

export class TranscriptView {
  private conversationId: string | undefined;
  private rows: Row[] = [];
  private notices: HTMLElement[] = [];
  live: LiveTurn | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly empty: HTMLElement,
    private readonly md: MarkdownIt,
    private readonly hooks: LiveHooks,
  ) {}

  /** Shows conversation `id` with `turns`; returns whether it is another conversation than before. */
  show(id: string, turns: Turn[], busy: boolean): boolean {
    const switched = id !== this.conversationId;
    if (switched) {
      this.rows.forEach((r) => r.el.remove());
      this.rows = [];
      this.clearNotices();
      this.dropLive();
      this.conversationId = id;
    }
    turns.forEach((turn, i) => {
      const sig = signature(turn, offersRetry(turns, i, busy));
      const row = this.rows[i];
      if (row?.signature === sig) return;
      const el = turnElement(turn, this.md, { retry: offersRetry(turns, i, busy) });
      el.dataset.turn = String(i); // the host's index of the turn (Apply all and Restore name it)
      if (row) {
        // The host's copy of a turn just streamed (saved with its time): keep its measurement.
        if (row.el.dataset.firstTokenMs) el.dataset.firstTokenMs = row.el.dataset.firstTokenMs;
        row.el.replaceWith(el);
      } else {
        this.root.insertBefore(el, this.anchor());
      }
      this.rows[i] = { signature: sig, el };
    });
    this.rows.splice(turns.length).forEach((r) => r.el.remove());
    this.updateEmpty();
    return switched;
  }

  /** The answer starts: an empty streaming turn after the last one, "thinking" until its first token. */
  startLive(startedAt?: number): LiveTurn {
    this.dropLive();
    this.clearNotices();
    this.live = new LiveTurn(this.md, this.hooks, startedAt);
    this.root.appendChild(this.live.el); // the notices were just cleared: it is the last element
    this.updateEmpty();
    return this.live;
  }

  /** The answer ended: the streaming element becomes the turn at `index` of the conversation. */
  finishLive(turns: Turn[], index: number): void {
    const live = this.live;
    if (!live) return;
    this.live = undefined;
    const retry = offersRetry(turns, index, false);
    live.finish(turns[index], { retry });
    live.el.dataset.turn = String(index);
    const old = this.rows[index];
    if (old && old.el !== live.el) old.el.remove();
    this.rows[index] = { signature: signature(turns[index], retry), el: live.el };
    // A failed turn before it offered Retry while it was the last; it no longer does.
    if (this.conversationId !== undefined) this.show(this.conversationId, turns, false);
  }

  dropLive(): void {
    this.live?.dispose();
    this.live?.el.remove();
    this.live = undefined;
    this.updateEmpty();
  }

  /** A message from the host about the last send ("Nothing was sent: ..."), after the turns. */
  addNotice(text: string): void {
    const el = element("div", "host-notice", text);
    this.root.appendChild(el);
    this.notices.push(el);
    this.updateEmpty();
  }

  private clearNotices(): void {
    this.notices.forEach((n) => n.remove());
    this.notices = [];
  }

  /** Where a turn goes: before the streaming answer and the notices. */
  private anchor(): Node | null {
    return this.live?.el ?? this.notices[0] ?? null;
  }

  private updateEmpty(): void {
    this.empty.hidden = this.rows.length > 0 || Boolean(this.live);
  }
}
