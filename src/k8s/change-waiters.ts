/**
 * Callers waiting for the next change of one object (by its namespace/name key), woken by whoever sees
 * the change (a watch event, a write of this process). Nothing is polled; a caller's own bound is its
 * AbortSignal.
 */
export class ChangeWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Resolves at the next {@link wake} of `key`, or when `signal` aborts. */
  wait(key: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        const set = this.waiters.get(key);
        set?.delete(done);
        if (set?.size === 0) this.waiters.delete(key);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      set.add(done);
    });
  }

  wake(key: string): void {
    const set = this.waiters.get(key);
    if (set) for (const done of [...set]) done();
  }

  wakeAll(): void {
    for (const key of [...this.waiters.keys()]) this.wake(key);
  }

  /** Callers waiting now (for tests: waiters do not pile up). */
  get waiting(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }
}
