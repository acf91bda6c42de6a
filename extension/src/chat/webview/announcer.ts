/**
 * The screen-reader voice of the panel: a visually hidden `aria-live="polite"` region that new text
 * is appended to (a finished paragraph, "Copied", a notice). It is never rebuilt, so a reader hears
 * each piece once; the transcript itself is not live (it re-renders its last block every frame).
 */
const KEEP = 20; // older lines are removed (removals are not announced): the region stays small

export class Announcer {
  constructor(private readonly region: HTMLElement) {}

  say(text: string): void {
    const line = text.trim();
    if (!line) return;
    const p = document.createElement("p");
    p.textContent = line;
    this.region.appendChild(p);
    while (this.region.childElementCount > KEEP) this.region.firstElementChild?.remove();
  }
}
