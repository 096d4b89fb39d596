/**
 * Status writes of successful scheduled refreshes held back while refreshes are waiting for a slot.
 *
 * A refresh's credentials are in its Secret as soon as it is done: that is what the API's readers and
 * the proxy use. The Connection's status (expiresAt, lastRefreshedAt, the conditions) is bookkeeping,
 * and its write is the dearest API call of a refresh (bench/refresh-storm-notes.md). When tokens
 * expire together, the API server's time goes to the refreshes first: the status writes wait until no
 * refresh is waiting, and never longer than `maxDelayMs`, then all go to the connection reconciler.
 */
export interface DeferredStatusOptions {
  /** Hands a key to the connection reconciler (the status write of its refresh). */
  flush: (key: string) => void;
  /** Longest a key waits (default five minutes). */
  maxDelayMs?: number;
  /** Told the number of keys waiting whenever it changes. */
  onSize?: (size: number) => void;
}

export const DEFERRED_STATUS_MAX_MS = 5 * 60_000;

export class DeferredStatus {
  private readonly keys = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly maxDelayMs: number;

  constructor(private readonly opts: DeferredStatusOptions) {
    this.maxDelayMs = opts.maxDelayMs ?? DEFERRED_STATUS_MAX_MS;
  }

  get size(): number {
    return this.keys.size;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Holds the key's status write back; the first key held starts the bound for all held with it. */
  hold(key: string): void {
    if (this.keys.has(key)) return;
    this.keys.add(key);
    if (!this.timer) {
      this.timer = setTimeout(() => this.release(), this.maxDelayMs);
      this.timer.unref?.();
    }
    this.opts.onSize?.(this.keys.size);
  }

  /** Drops the key without a flush (forgotten, or another outcome asks for its reconcile itself). */
  delete(key: string): void {
    if (!this.keys.delete(key)) return;
    if (this.keys.size === 0) this.clearTimer();
    this.opts.onSize?.(this.keys.size);
  }

  /** Hands every held key to the reconciler (no refresh is waiting, or the bound passed). */
  release(): void {
    this.clearTimer();
    if (this.keys.size === 0) return;
    const keys = [...this.keys];
    this.keys.clear();
    this.opts.onSize?.(0);
    for (const key of keys) this.opts.flush(key);
  }

  /** Forgets every held key (the session ends: whoever owns them next reconciles them). */
  stop(): void {
    this.clearTimer();
    this.keys.clear();
    this.opts.onSize?.(0);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
