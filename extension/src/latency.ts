/** Rolling round-trip statistics for inline completion requests (extension host ⇄ server). */
export class RollingStats {
  private values: number[] = [];
  private count = 0;

  constructor(readonly every = 25) {}

  /** Add a sample; every `every` samples, returns the summary of the last `every` and starts over. */
  push(ms: number): { n: number; p50: number; p95: number; max: number } | undefined {
    this.values.push(ms);
    this.count++;
    if (this.values.length < this.every) return undefined;
    const s = [...this.values].sort((a, b) => a - b);
    this.values = [];
    const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
    return { n: s.length, p50: at(0.5), p95: at(0.95), max: s[s.length - 1] };
  }

  get total(): number {
    return this.count;
  }
}
