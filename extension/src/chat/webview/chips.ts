/**
 * Context chips: what the next message attaches. The host sends the chips (labels, availability)
 * whenever the editor changes; what the user turned on or off for a kind is the user's choice and
 * stays, across those refreshes, until a new chat.
 */
import type { Chip } from "../protocol";

export class ChipChoices {
  private readonly chosen = new Map<Chip["kind"], boolean>();

  /** The host's chips with the user's choices applied. */
  apply(chips: Chip[]): Chip[] {
    return chips.map((c) => (this.chosen.has(c.kind) ? { ...c, enabled: this.chosen.get(c.kind)! } : c));
  }

  choose(kind: Chip["kind"], enabled: boolean): void {
    this.chosen.set(kind, enabled);
  }

  reset(): void {
    this.chosen.clear();
  }
}

/** A chip attaches something when it is on and there is something to attach. */
export const isAttached = (chip: Chip) => chip.enabled && chip.available !== false;

/** The kinds a send attaches. */
export const attachedKinds = (chips: Chip[]) => chips.filter(isAttached).map((c) => c.kind);

/**
 * What the question shows as attached until the host's own list arrives: the same wording as the
 * host's ("file main.py", "open files a.py, b.py"), from what the chips say.
 */
export function contextLabels(chips: Chip[]): string[] {
  return chips.filter(isAttached).map((c) => {
    switch (c.kind) {
      case "selection":
        return `selection ${c.label}`;
      case "file":
        return `file ${c.label}`;
      case "openFiles":
        return `open files ${c.detail || c.label}`;
      case "diagnostics":
        return c.label;
    }
  });
}

/** The chip buttons; `toggle` is called with the chip the user clicked. */
export function renderChips(bar: HTMLElement, chips: Chip[], toggle: (chip: Chip) => void): void {
  const active = document.activeElement as HTMLElement | null;
  const focusedKind = active && bar.contains(active) ? active.dataset.kind : undefined;
  bar.replaceChildren(
    ...chips.map((chip) => {
      const on = isAttached(chip);
      const b = document.createElement("button");
      b.type = "button";
      b.className = `chip ${on ? "on" : "off"}`;
      b.dataset.kind = chip.kind;
      b.setAttribute("aria-pressed", String(on));
      b.disabled = chip.available === false;
      const mark = document.createElement("span");
      mark.className = "chip-mark";
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = on ? "✓" : "+";
      const label = document.createElement("span");
      label.className = "chip-label";
      label.textContent = chip.label;
      b.append(mark, label);
      b.title = chip.detail || chip.label;
      b.addEventListener("click", () => toggle(chip));
      return b;
    }),
  );
  // A refresh while a chip had the focus (the user toggling it) keeps the focus on it.
  if (focusedKind) bar.querySelector<HTMLElement>(`.chip[data-kind="${focusedKind}"]:not([disabled])`)?.focus();
}
