/** Bounded automatic restarts: at most `max` crashes within `windowMs`, then stop and tell the user. */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    readonly max = 5,
    readonly windowMs = 3 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Record a crash; `restart` says whether to start the server again. */
  crashed(): { restart: boolean; count: number } {
    const t = this.now();
    this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
    this.crashes.push(t);
    return { restart: this.crashes.length <= this.max, count: this.crashes.length };
  }

  reset(): void {
    this.crashes = [];
  }
}
