/**
 * The mention picker in the chat input: `#` or `@` at a word start opens a listbox over the input
 * (its rows from the host: mentionPicker.ts there), typing filters it, ↑/↓ move, Enter or Tab
 * picks, Esc closes. The input keeps the focus throughout (the list is its `aria-activedescendant`).
 * A pick writes its marker into the text and becomes a chip in the input box (× or Delete on it
 * removes it, and its marker); deleting a marker from the text drops its chip.
 *
 * Each query's time from the keystroke to its rows on screen (the frame that paints them) is kept:
 * `data-mention-ms` on the body, the last ones in `data-mention-times`; `data-mention-asked` and
 * `data-mention-shown` are the last query sent and the last one shown. The e2e test reads them.
 */
import type { Mention, MentionItem, ToWebview } from "../protocol";
import { KIND_NAMES, mentionTrigger, type MentionTrigger } from "../mentions";
import { addPick, insertPick, markerBefore, mentionsIn, removeMarker } from "./mentionText";

export interface PickerHooks {
  post(msg: { type: "mentionQuery"; id: number; query: string }): void;
  announce(text: string): void;
  /** The input's text changed here (a pick, a chip removed): it resizes. */
  changed(): void;
}

const KEPT_TIMINGS = 200;

export class MentionPicker {
  private items: MentionItem[] = [];
  private active = -1;
  private trigger: MentionTrigger | undefined;
  private queryId = 0;
  /** When each query's keystroke happened (performance.now()). */
  private readonly typedAt = new Map<number, number>();
  /** Esc closed the picker for the trigger at this offset: it stays closed until another one. */
  private dismissed: number | undefined;
  private picked: Mention[] = [];
  private readonly timings: number[] = [];
  /** How many queries were ever measured: the kept list drops its oldest, so a reader counts from this. */
  private measuredCount = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly list: HTMLElement,
    private readonly chips: HTMLElement,
    private readonly hooks: PickerHooks,
  ) {
    list.addEventListener("mousedown", (e) => {
      const row = (e.target as HTMLElement).closest<HTMLElement>("[role=option]");
      if (!row) return;
      e.preventDefault(); // the input keeps the focus
      this.pick(Number(row.dataset.index));
    });
    input.addEventListener("blur", () => this.close());
  }

  get isOpen(): boolean {
    return !this.list.hidden;
  }

  /** The mentions to send with the input's text (the picked ones it still holds). */
  mentions(): Mention[] {
    return mentionsIn(this.input.value, this.picked);
  }

  /** After a send: no chips, no list. */
  reset(): void {
    this.picked = [];
    this.dismissed = undefined;
    this.close();
    this.renderChips();
  }

  /** The text or the caret moved: open, filter or close the list; drop chips whose marker is gone. */
  update(at = performance.now()): void {
    const kept = mentionsIn(this.input.value, this.picked);
    if (kept.length !== this.picked.length) {
      this.picked = kept;
      this.renderChips();
    }
    const { selectionStart, selectionEnd, value } = this.input;
    const t = selectionStart === selectionEnd ? mentionTrigger(value, selectionStart) : undefined;
    if (!t || t.start === this.dismissed) {
      if (!t) this.dismissed = undefined;
      return this.close();
    }
    if (this.trigger && this.trigger.start === t.start && this.trigger.query === t.query) {
      this.trigger = t;
      return;
    }
    this.trigger = t;
    const id = ++this.queryId;
    this.typedAt.set(id, at);
    if (this.typedAt.size > 50) this.typedAt.delete(this.typedAt.keys().next().value!);
    document.body.dataset.mentionAsked = String(id);
    this.hooks.post({ type: "mentionQuery", id, query: t.query });
  }

  /** The host's rows for a query: shown if it is still the current one. */
  onItems(msg: Extract<ToWebview, { type: "mentionItems" }>): void {
    if (msg.id !== this.queryId || !this.trigger) return;
    const wasOpen = this.isOpen;
    if (msg.append) {
      if (!msg.items.length) return;
      this.items = [...this.items, ...msg.items];
      if (this.active < 0) this.active = 0; // only symbols matched: the first is ready for Enter
    } else {
      this.items = msg.items;
      this.active = msg.items.length ? 0 : -1;
    }
    this.render();
    if (!msg.append) this.measured(msg.id);
    if (!wasOpen && this.items.length) this.hooks.announce(`${this.items.length} ${this.items.length === 1 ? "suggestion" : "suggestions"}: Up and Down to choose, Enter to mention`);
  }

  private measured(id: number): void {
    const typed = this.typedAt.get(id);
    this.typedAt.delete(id);
    if (typed === undefined) return;
    requestAnimationFrame(() => {
      const ms = performance.now() - typed;
      this.timings.push(Math.round(ms * 10) / 10);
      if (this.timings.length > KEPT_TIMINGS) this.timings.shift();
      this.measuredCount += 1;
      document.body.dataset.mentionCount = String(this.measuredCount);
      document.body.dataset.mentionMs = ms.toFixed(1);
      document.body.dataset.mentionTimes = this.timings.join(",");
      document.body.dataset.mentionShown = String(id);
    });
  }

  /** A key in the input; true when the picker acted on it (the caller does nothing more). */
  key(e: KeyboardEvent): boolean {
    if (e.isComposing) return false;
    if (e.key === "Backspace" && !e.ctrlKey && !e.altKey && !e.metaKey && this.input.selectionStart === this.input.selectionEnd) {
      const range = markerBefore(this.input.value, this.input.selectionStart, this.picked);
      if (!range) return false;
      e.preventDefault();
      this.input.setRangeText("", range.start, range.end, "end");
      this.update();
      this.hooks.changed();
      return true;
    }
    if (!this.isOpen) return false;
    const plain = !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey;
    switch (e.key) {
      case "ArrowDown":
      case "ArrowUp":
        if (!plain) return false;
        e.preventDefault();
        this.move(e.key === "ArrowDown" ? 1 : -1);
        return true;
      case "Enter":
      case "Tab":
        if (!plain || this.active < 0) return false;
        e.preventDefault();
        this.pick(this.active);
        return true;
      case "Escape":
        e.preventDefault();
        e.stopPropagation();
        this.dismissed = this.trigger?.start;
        this.close();
        return true;
    }
    return false;
  }

  private move(by: number): void {
    if (!this.items.length) return;
    this.active = (this.active + by + this.items.length) % this.items.length;
    this.list.querySelectorAll<HTMLElement>("[role=option]").forEach((row, i) => row.setAttribute("aria-selected", String(i === this.active)));
    const row = this.list.querySelector<HTMLElement>(`#mention-opt-${this.active}`);
    row?.scrollIntoView({ block: "nearest" });
    this.input.setAttribute("aria-activedescendant", `mention-opt-${this.active}`);
  }

  private pick(index: number): void {
    const item = this.items[index];
    const t = this.trigger;
    if (!item || !t) return;
    const { text, caret } = insertPick(this.input.value, t, item.marker);
    this.input.value = text;
    this.input.setSelectionRange(caret, caret);
    this.picked = addPick(this.picked, item);
    this.close();
    this.renderChips();
    this.hooks.changed();
    this.hooks.announce(`Mentioned ${KIND_NAMES[item.kind]} ${item.name}`);
  }

  close(): void {
    this.trigger = undefined;
    this.items = [];
    this.active = -1;
    if (!this.list.hidden) {
      this.list.hidden = true;
      this.list.replaceChildren();
    }
    this.input.removeAttribute("aria-activedescendant");
  }

  private render(): void {
    this.list.replaceChildren(
      ...this.items.map((item, i) => {
        const row = document.createElement("li");
        row.id = `mention-opt-${i}`;
        row.className = `mention-item kind-${item.kind}`;
        row.setAttribute("role", "option");
        row.setAttribute("aria-selected", String(i === this.active));
        row.dataset.index = String(i);
        row.dataset.kind = item.kind;
        row.title = item.marker;
        const kind = document.createElement("span");
        kind.className = "mention-kind";
        kind.textContent = KIND_NAMES[item.kind];
        const name = document.createElement("span");
        name.className = "mention-name";
        name.textContent = item.name;
        row.append(kind, name);
        if (item.detail) {
          const detail = document.createElement("span");
          detail.className = "mention-detail";
          detail.textContent = item.detail;
          row.append(detail);
        }
        return row;
      }),
    );
    this.list.hidden = !this.items.length;
    if (this.active >= 0) this.input.setAttribute("aria-activedescendant", `mention-opt-${this.active}`);
    else this.input.removeAttribute("aria-activedescendant");
  }

  /** The picked mentions as chips in the input box: the name, and a button that removes it. */
  private renderChips(): void {
    this.chips.replaceChildren(
      ...this.picked.map((m) => {
        const chip = document.createElement("span");
        chip.className = `mention-chip kind-${m.kind}`;
        chip.dataset.marker = m.marker;
        chip.title = m.marker;
        const name = document.createElement("span");
        name.className = "mention-chip-name";
        name.textContent = m.name;
        const remove = document.createElement("button");
        remove.type = "button";
        remove.className = "mention-remove";
        remove.setAttribute("aria-label", `Remove the mention of ${KIND_NAMES[m.kind]} ${m.name}`);
        remove.title = "Remove this mention";
        remove.textContent = "×";
        remove.addEventListener("click", () => this.remove(m));
        remove.addEventListener("keydown", (e) => {
          if (e.key === "Delete" || e.key === "Backspace") {
            e.preventDefault();
            this.remove(m);
          }
        });
        chip.append(name, remove);
        return chip;
      }),
    );
    this.chips.hidden = !this.picked.length;
  }

  private remove(m: Mention): void {
    this.input.value = removeMarker(this.input.value, m.marker);
    this.picked = this.picked.filter((p) => p !== m);
    this.renderChips();
    this.hooks.changed();
    this.hooks.announce(`Removed ${m.name}`);
    this.input.focus();
  }
}
