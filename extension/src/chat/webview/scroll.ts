/**
 * Scroll lock: the transcript follows a streaming answer only while the reader is at the bottom.
 * Scrolling up (wheel, keys, scrollbar) stops following and offers "Jump to latest"; scrolling back
 * to the bottom, or the jump, follows again. Pure state; scrollView.ts binds it to the DOM.
 */

/** Within this many pixels of the bottom the reader counts as being at the bottom. */
export const NEAR_BOTTOM_PX = 30;

export interface ScrollBox {
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
}

const fromBottom = (box: ScrollBox) => box.scrollHeight - box.scrollTop - box.clientHeight;

export class ScrollFollower {
  following = true;
  /** The scrollTop last seen or set: a scroll event compares against it to know the direction. */
  private lastTop = 0;

  /** A wheel turn or key that moves up: stop following now, before the smooth scroll's first step
   * (a step of less than NEAR_BOTTOM_PX would otherwise be undone by the next frame's follow). */
  userMovedUp(): void {
    this.following = false;
  }

  /** After a scroll event (the reader's or ours). */
  scrolled(box: ScrollBox): void {
    const top = box.scrollTop;
    if (top > this.lastTop + 0.5 && fromBottom(box) <= NEAR_BOTTOM_PX) this.following = true; // came back down
    // Up and away from the bottom (a scrollbar drag). Content that shrank clamps scrollTop too, but
    // leaves it at the bottom: that is no reason to stop following.
    else if (top < this.lastTop - 0.5 && fromBottom(box) > NEAR_BOTTOM_PX) this.following = false;
    this.lastTop = top;
  }

  /** Content changed: the scrollTop to set (the bottom) while following, else undefined (stay). */
  follow(box: ScrollBox): number | undefined {
    if (!this.following) return undefined;
    return Math.max(0, box.scrollHeight - box.clientHeight);
  }

  /** We set scrollTop (to what the browser made of it): the scroll event it fires is no move. */
  settled(top: number): void {
    this.lastTop = top;
  }

  /** "Jump to latest": follow again from the bottom. */
  jump(box: ScrollBox): number {
    this.following = true;
    return Math.max(0, box.scrollHeight - box.clientHeight);
  }

  /** Whether "Jump to latest" is offered: not following and something below the view. */
  showJump(box: ScrollBox): boolean {
    return !this.following && fromBottom(box) > NEAR_BOTTOM_PX;
  }
}
