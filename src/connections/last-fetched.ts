import type { Logger } from '../platform/log.js';
import type { Clock } from '../domain/clock.js';
import type { ConnectionStore } from '../k8s/store.js';
import { ConnectionStatusWriter } from '../domain/connection-status-writers.js';

export interface LastFetchedDeps {
  connections: ConnectionStore;
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
  /** Newest fetch time not yet written, by namespace, then name (no key to build per fetch). */
  private readonly pending = new Map<string, Map<string, number>>();
  /** When this replica last wrote each connection's time. */
  private readonly written = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(private readonly deps: LastFetchedDeps) {}

  /** On the request path: memory only. */
  record(namespace: string, name: string, at: number): void {
    let names = this.pending.get(namespace);
    if (!names) this.pending.set(namespace, (names = new Map()));
    if ((names.get(name) ?? 0) < at) names.set(name, at);
  }

  /** Connections whose time is waiting to be written. */
  get pendingCount(): number {
    let n = 0;
    for (const names of this.pending.values()) n += names.size;
    return n;
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
    const due: Array<[namespace: string, name: string, at: number]> = [];
    for (const [namespace, names] of this.pending) {
      for (const [name, at] of names) {
        if (!all && (this.written.get(`${namespace}/${name}`) ?? -Infinity) > now - this.deps.intervalMs) continue;
        due.push([namespace, name, at]);
        names.delete(name);
      }
      if (names.size === 0) this.pending.delete(namespace);
    }
    const queue = due[Symbol.iterator]();
    const worker = async () => {
      for (const [namespace, name, at] of queue) await this.writeOne(namespace, name, at, now);
    };
    await Promise.all(Array.from({ length: this.deps.concurrency ?? 4 }, worker));
    // Forget connections not fetched for a while, so the map does not grow with every connection ever seen.
    for (const [key, at] of this.written) {
      if (at >= now - 2 * this.deps.intervalMs) continue;
      const slash = key.indexOf('/');
      if (!this.pending.get(key.slice(0, slash))?.has(key.slice(slash + 1))) this.written.delete(key);
    }
  }

  private async writeOne(namespace: string, name: string, at: number, now: number): Promise<void> {
    const key = `${namespace}/${name}`;
    try {
      await this.deps.connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.LastFetched, (s) => {
        // Another replica may have written a later time meanwhile: never move it back.
        const previous = s.lastFetchedAt ? Date.parse(s.lastFetchedAt) : 0;
        return previous >= at ? undefined : { ...s, lastFetchedAt: new Date(at).toISOString() };
      });
      this.written.set(key, now);
    } catch (err) {
      if ((await this.deps.connections.findConnectionByName(namespace, name)) === undefined) return; // deleted meanwhile
      this.deps.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record last_fetched_at; kept for the next flush');
      this.record(namespace, name, at);
    }
  }
}
