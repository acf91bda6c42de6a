/** The scroll lock (scroll.ts) on #transcript and its "Jump to latest" button. */
import { ScrollFollower } from "./scroll";

const UP_KEYS = new Set(["ArrowUp", "PageUp", "Home"]);

export class ScrollView {
  private readonly follower = new ScrollFollower();

  constructor(private readonly box: HTMLElement, private readonly jumpButton: HTMLButtonElement, onJumped: () => void) {
    box.addEventListener("wheel", (e) => {
      if (e.deltaY < 0) this.follower.userMovedUp();
    }, { passive: true });
    box.addEventListener("keydown", (e) => {
      if (UP_KEYS.has(e.key) && e.target === box) this.follower.userMovedUp();
    });
    box.addEventListener("scroll", () => {
      this.follower.scrolled(box);
      this.updateJump();
    }, { passive: true });
    jumpButton.addEventListener("click", () => {
      this.set(this.follower.jump(box));
      this.updateJump();
      onJumped(); // the button hides: focus must go somewhere useful
    });
  }

  /** Content was added or changed: keep the bottom in view while following. */
  contentChanged(): void {
    const top = this.follower.follow(this.box);
    if (top !== undefined && Math.abs(this.box.scrollTop - top) > 0.5) this.set(top);
    this.updateJump();
  }

  /** A conversation was opened or started: show its end and follow. */
  toBottom(): void {
    this.set(this.follower.jump(this.box));
    this.updateJump();
  }

  private set(top: number): void {
    this.box.scrollTop = top;
    this.follower.settled(this.box.scrollTop);
  }

  private updateJump(): void {
    const show = this.follower.showJump(this.box);
    if (this.jumpButton.hidden === show) this.jumpButton.hidden = !show;
  }
}
