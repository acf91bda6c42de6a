/** The history panel: past conversations with their dates, a title search, open/rename/delete. */
import type { HistoryItem } from "../protocol";

const DAY_MS = 86_400_000;
const startOfDay = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();

/** "Today 14:02", "Yesterday 09:10", "Monday 17:45" (this week), "12 Mar 08:00", "12 Mar 2023 08:00". */
export function formatWhen(ts: number, now: number = Date.now()): string {
  const d = new Date(ts);
  const n = new Date(now);
  const time = d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const days = Math.round((startOfDay(n) - startOfDay(d)) / DAY_MS);
  if (days === 0) return `Today ${time}`;
  if (days === 1) return `Yesterday ${time}`;
  if (days > 1 && days < 7) return `${d.toLocaleDateString(undefined, { weekday: "long" })} ${time}`;
  const sameYear = d.getFullYear() === n.getFullYear();
  return `${d.toLocaleDateString(undefined, { day: "numeric", month: "short", year: sameYear ? undefined : "numeric" })} ${time}`;
}

/** Whether `item` matches the search text (case-insensitive, every word somewhere in the title). */
export function matchesSearch(item: HistoryItem, query: string): boolean {
  const title = item.title.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((word) => title.includes(word));
}

export interface HistoryActions {
  open(id: string): void;
  rename(id: string): void;
  remove(id: string): void;
}

function iconButton(className: string, glyph: string, label: string, run: () => void): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `icon-button ${className}`;
  b.setAttribute("aria-label", label);
  b.title = label;
  const g = document.createElement("span");
  g.setAttribute("aria-hidden", "true");
  g.textContent = glyph;
  b.appendChild(g);
  b.addEventListener("click", run);
  return b;
}

/** Rows for `items` in `list`; rows not matching `query` are hidden. Returns how many are shown. */
export function renderHistory(list: HTMLElement, items: HistoryItem[], currentId: string | undefined, query: string, actions: HistoryActions): number {
  let shown = 0;
  list.replaceChildren(
    ...items.map((item) => {
      const li = document.createElement("li");
      li.className = "history-item";
      li.dataset.id = item.id;
      if (item.id === currentId) li.setAttribute("aria-current", "true");
      li.hidden = !matchesSearch(item, query);
      if (!li.hidden) shown += 1;
      const title = document.createElement("button");
      title.type = "button";
      title.className = "history-title";
      title.textContent = item.title;
      title.title = `Open “${item.title}”`;
      title.addEventListener("click", () => actions.open(item.id));
      const at = item.updated ?? item.created;
      const date = document.createElement("time");
      date.className = "history-date";
      date.dateTime = new Date(at).toISOString();
      date.textContent = formatWhen(at);
      date.title = new Date(at).toLocaleString();
      li.append(
        title,
        date,
        iconButton("history-rename", "✎", `Rename “${item.title}”`, () => actions.rename(item.id)),
        iconButton("history-delete", "✕", `Delete “${item.title}”`, () => actions.remove(item.id)),
      );
      return li;
    }),
  );
  return shown;
}

/** Re-applies the search to the rows already shown (typing in the search box). */
export function filterHistory(list: HTMLElement, items: HistoryItem[], query: string): number {
  let shown = 0;
  for (const li of Array.from(list.querySelectorAll<HTMLElement>(".history-item"))) {
    const item = items.find((h) => h.id === li.dataset.id);
    li.hidden = !item || !matchesSearch(item, query);
    if (!li.hidden) shown += 1;
  }
  return shown;
}
