/**
 * Token buckets by key, in memory (one replica's view: with N replicas a client gets up to N times
 * the rate, which still bounds it). A bucket holds `capacity` tokens and regains `perMinute` a
 * minute; each request takes one. Idle buckets are dropped, so memory follows active keys only.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private lastSweep = 0;

  constructor(
    private readonly perMinute: number,
    private readonly capacity: number,
    private readonly now: () => number,
    /** Most keys kept; beyond it the oldest are dropped (a flood of fresh keys cannot grow memory). */
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes one token for `key`: 0 when allowed, otherwise ms until one is available. */
  take(key: string): number {
    if (this.perMinute <= 0) return 0; // 0 turns the limit off
    const now = this.now();
    this.sweep(now);
    const b = this.buckets.get(key) ?? { tokens: this.capacity, at: now };
    b.tokens = Math.min(this.capacity, b.tokens + ((now - b.at) * this.perMinute) / 60_000);
    b.at = now;
    this.buckets.delete(key); // re-inserted last: the Map's order is then least recently used first
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - b.tokens) * 60_000) / this.perMinute);
  }

  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    while (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    // A bucket idle long enough to be full again is the same as no bucket.
    const fullAfter = (this.capacity * 60_000) / this.perMinute;
    if (now - this.lastSweep < fullAfter) return;
    this.lastSweep = now;
    for (const [key, b] of this.buckets) if (now - b.at >= fullAfter) this.buckets.delete(key);
  }
}
