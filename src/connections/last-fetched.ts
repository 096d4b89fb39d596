import type { Logger } from '../platform/log.js';
import type { Clock } from '../domain/clock.js';
import type { KubeStore } from '../k8s/store.js';
import { ConnectionStatusWriter } from '../domain/connection-status-writers.js';

export interface LastFetchedDeps {
  store: KubeStore;
  logger: Logger;
  clock: Clock;
  /** At most one `status.lastFetchedAt` write per connection per this many ms. */
  intervalMs: number;
  /** Writes in flight at once during a flush. Default 4. */
  concurrency?: number;
}

/**
 * `last_fetched_at` without a write per fetch: a fetch only records its time in memory (the answer
 * carries that time itself); a timer flushes the recorded times in batches, off the request path,
 * at most one status write per connection per interval. A replica that stops flushes what it holds
 * ({@link stop}), whatever the interval. A failed write is logged and the time kept for the next flush.
 */
export class LastFetchedRecorder {
  /** Newest fetch time not yet written, by namespace/name. */
  private readonly pending = new Map<string, number>();
  /** When this replica last wrote each connection's time. */
  private readonly written = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(private readonly deps: LastFetchedDeps) {}

  /** On the request path: memory only. */
  record(namespace: string, name: string, at: number): void {
    const key = `${namespace}/${name}`;
    if ((this.pending.get(key) ?? 0) < at) this.pending.set(key, at);
  }

  /** Connections whose time is waiting to be written. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Flushes on a timer (a fraction of the interval, at most every 30 s); the timer keeps no process alive. */
  start(): void {
    if (this.timer) return;
    const tick = Math.max(1000, Math.min(30_000, Math.floor(this.deps.intervalMs / 5)));
    this.timer = setInterval(() => void this.flush(), tick);
    this.timer.unref();
  }

  /** Stops the timer and writes every recorded time now (a stopping replica loses none). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush({ all: true });
  }

  /**
   * Writes the recorded times whose connection was not written within the interval (all of them
   * with `all`). One flush at a time; a call during one waits for it and then runs its own.
   */
  async flush(opts: { all?: boolean } = {}): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.writeDue(opts.all ?? false).finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  private async writeDue(all: boolean): Promise<void> {
    const now = this.deps.clock.now();
    const due = [...this.pending.entries()].filter(([key]) => all || (this.written.get(key) ?? -Infinity) <= now - this.deps.intervalMs);
    for (const [key] of due) this.pending.delete(key);
    const queue = due[Symbol.iterator]();
    const worker = async () => {
      for (const [key, at] of queue) await this.writeOne(key, at, now);
    };
    await Promise.all(Array.from({ length: this.deps.concurrency ?? 4 }, worker));
    // Forget connections not fetched for a while, so the map does not grow with every connection ever seen.
    for (const [key, at] of this.written) if (at < now - 2 * this.deps.intervalMs && !this.pending.has(key)) this.written.delete(key);
  }

  private async writeOne(key: string, at: number, now: number): Promise<void> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    try {
      await this.deps.store.updateConnectionStatus(namespace, name, ConnectionStatusWriter.LastFetched, (s) => {
        // Another replica may have written a later time meanwhile: never move it back.
        const previous = s.lastFetchedAt ? Date.parse(s.lastFetchedAt) : 0;
        return previous >= at ? undefined : { ...s, lastFetchedAt: new Date(at).toISOString() };
      });
      this.written.set(key, now);
    } catch (err) {
      if ((await this.deps.store.findConnectionByName(namespace, name)) === undefined) return; // deleted meanwhile
      this.deps.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record last_fetched_at; kept for the next flush');
      this.record(namespace, name, at);
    }
  }
}
