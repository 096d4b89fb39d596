/**
 * A bounded map of answers that expire: at most `maxEntries` (the least recently used goes first),
 * each until its own deadline. Keys are digests of tokens, never tokens. Concurrent misses of one key
 * share one lookup, so a burst of requests with a new token costs one API call.
 */
export class ReviewCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly pending = new Map<string, Promise<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached answer, or undefined when there is none or it expired. */
  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Most recently used last (a Map keeps insertion order): eviction takes the first.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.value;
  }

  /** Keeps `value` for `ttlMs` (not at all when it is not positive). */
  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (ttlMs <= 0 || this.maxEntries <= 0) return;
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  /**
   * The cached answer, or `lookup`'s (one lookup per key at a time), kept for the time `ttlOf` gives
   * it; `fresh` says whether this call's answer came from the lookup.
   */
  async getOrLookup(key: string, lookup: () => Promise<V>, ttlOf: (value: V) => number): Promise<{ value: V; fresh: boolean }> {
    const hit = this.get(key);
    if (hit !== undefined) return { value: hit, fresh: false };
    const running = this.pending.get(key);
    if (running) return { value: await running, fresh: false };
    const started = lookup().then(
      (value) => {
        this.pending.delete(key);
        this.set(key, value, ttlOf(value));
        return value;
      },
      (err: unknown) => {
        this.pending.delete(key);
        throw err;
      },
    );
    this.pending.set(key, started);
    return { value: await started, fresh: true };
  }
}
