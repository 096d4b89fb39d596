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
    const b = this.filled(key);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return this.waitFor(b);
  }

  /** Like {@link take} without taking: 0 when a token is there, otherwise ms until one is. */
  peek(key: string): number {
    if (this.perMinute <= 0) return 0;
    const b = this.buckets.get(key);
    if (!b) return 0;
    const tokens = Math.min(this.capacity, b.tokens + ((this.now() - b.at) * this.perMinute) / 60_000);
    return tokens >= 1 ? 0 : this.waitFor({ tokens });
  }

  /** Returns a token {@link take} took (the request was refused further on, so it did not use it). */
  giveBack(key: string): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(this.capacity, b.tokens + 1);
  }

  get size(): number {
    return this.buckets.size;
  }

  /** The key's bucket, refilled for the time since it was last used. */
  private filled(key: string): { tokens: number; at: number } {
    const now = this.now();
    this.sweep(now);
    const b = this.buckets.get(key) ?? { tokens: this.capacity, at: now };
    b.tokens = Math.min(this.capacity, b.tokens + ((now - b.at) * this.perMinute) / 60_000);
    b.at = now;
    this.buckets.delete(key); // re-inserted last: the Map's order is then least recently used first
    this.buckets.set(key, b);
    return b;
  }

  private waitFor(b: { tokens: number }): number {
    return Math.ceil(((1 - b.tokens) * 60_000) / this.perMinute);
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
