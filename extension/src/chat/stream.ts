/**
 * Answer deltas on their way to the webview. The first delta of an answer is posted at once: it is
 * the token the user waits for (Enter → first rendered token). The rest are batched per 16 ms (a
 * frame), so a fast stream costs one webview message per frame, not one per token.
 */
export class DeltaBatcher {
  private first = true;
  private batch = "";
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly post: (delta: string) => void,
    private readonly frameMs = 16,
  ) {}

  push(delta: string): void {
    if (!delta) return;
    if (this.first) {
      this.first = false;
      this.post(delta);
      return;
    }
    this.batch += delta;
    this.timer ??= setTimeout(() => this.flush(), this.frameMs);
  }

  /** Posts what is batched now (before a steer mark, at the end). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.batch) this.post(this.batch);
    this.batch = "";
  }
}
