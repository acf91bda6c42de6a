import { describe, expect, it } from "vitest";
import { ScrollFollower, type ScrollBox } from "../src/chat/webview/scroll";

/** A transcript 500 px high whose content grows as an answer streams. */
function transcript() {
  const box: ScrollBox = { scrollTop: 0, scrollHeight: 500, clientHeight: 500 };
  const follower = new ScrollFollower();
  const grow = (px: number) => {
    box.scrollHeight += px;
    const top = follower.follow(box);
    if (top !== undefined) {
      box.scrollTop = top;
      follower.settled(box.scrollTop);
    }
  };
  const userScrollTo = (top: number) => {
    box.scrollTop = top;
    follower.scrolled(box);
  };
  return { box, follower, grow, userScrollTo };
}

describe("webview scroll lock", () => {
  it("follows the stream at the bottom", () => {
    const { box, follower, grow } = transcript();
    grow(300);
    grow(300);
    expect(box.scrollTop).toBe(600);
    expect(follower.showJump(box)).toBe(false);
  });

  it("stays where the reader scrolled up to while the answer grows, and offers the jump", () => {
    const { box, follower, grow, userScrollTo } = transcript();
    grow(1000);
    follower.userMovedUp(); // the wheel, before the smooth scroll's first step
    userScrollTo(990); // a first small step up (within 30 px) must not bring following back
    userScrollTo(700);
    grow(400);
    grow(400);
    expect(box.scrollTop).toBe(700);
    expect(follower.showJump(box)).toBe(true);
  });

  it("stops following on a scrollbar drag up (no wheel event)", () => {
    const { box, follower, grow, userScrollTo } = transcript();
    grow(1000);
    userScrollTo(400);
    grow(100);
    expect(box.scrollTop).toBe(400);
    expect(follower.following).toBe(false);
  });

  it("follows again when the reader scrolls back to the bottom, or jumps", () => {
    const { box, follower, grow, userScrollTo } = transcript();
    grow(1000);
    follower.userMovedUp();
    userScrollTo(500);
    userScrollTo(985); // back down, within 30 px of the bottom
    grow(200);
    expect(box.scrollTop).toBe(1200);
    follower.userMovedUp();
    userScrollTo(300);
    grow(100);
    expect(box.scrollTop).toBe(300);
    box.scrollTop = follower.jump(box);
    follower.settled(box.scrollTop);
    grow(100);
    expect(box.scrollTop).toBe(1400);
    expect(follower.showJump(box)).toBe(false);
  });

  it("keeps following when content shrinks and the browser clamps scrollTop", () => {
    const { box, follower, grow, userScrollTo } = transcript();
    grow(1000);
    box.scrollHeight -= 50; // a table replaced its two-line paragraph
    userScrollTo(950); // the clamp fires a scroll event upwards
    grow(100);
    expect(follower.following).toBe(true);
    expect(box.scrollTop).toBe(1050);
  });
});
