import type { Logger } from '../platform/log.js';
import { backoffDelay, type BackoffPolicy } from '../domain/backoff.js';
import { TerminalError } from '../domain/errors.js';

/** The longest delay setTimeout accepts (about 24.8 days); longer waits are done in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Handles a key. `release` gives its worker slot back before the handler ends (the key stays in
 * hand: not handled again until the handler ends); see {@link WorkQueueOptions.released}.
 */
export type Handler = (key: string, release: () => void) => Promise<void>;

export interface WorkQueueOptions {
  name: string;
  handler: Handler;
  /** Keys handled at the same time, at most (a handler that called `release` no longer counts). */
  concurrency: number;
  /**
   * Keys in hand at once may exceed `concurrency` by this many, counting handlers that gave their slot
   * back with `release` and still run (default 0: a released slot is taken again only as those end).
   * Bounds what piles up when the work after the release is slower than the work before it.
   */
  released?: number;
  /** Backoff of a key whose handler failed; reset by a success. */
  backoff?: BackoffPolicy;
  logger?: Logger;
  /** Called whenever the number of waiting keys changes (for the depth gauge). */
  onDepth?: (depth: number) => void;
  /** Called when a handler failed with a {@link TerminalError} and its key was dropped (for a counter). */
  onTerminal?: (key: string, err: TerminalError) => void;
}

/**
 * A work queue in the manner of client-go's: a key is in the queue at most once (adding it again while
 * it waits is a no-op), a key is never handled by two workers at once (adding it while it is handled
 * marks it dirty, and it runs once more afterwards), at most `concurrency` handlers run, and a handler
 * that throws puts its key back after an exponential backoff that a success resets, unless it threw a
 * {@link TerminalError} (controller-runtime's contract): retrying cannot fix that, so the key is dropped
 * (logged, counted) until it is added again, by a change of its object or a resync.
 *
 * Waiting keys run in the order they became due (earliest first; a key added now is due now), not in
 * the order they were added: when the workers fall behind (a refresh storm, a replica taking over a
 * dead one's share) the key that has waited longest goes first, wherever it came from.
 */
export class WorkQueue {
  readonly name: string;
  private readonly handler: Handler;
  private readonly concurrency: number;
  private readonly maxReleased: number;
  private readonly backoff: BackoffPolicy;
  private readonly logger: Logger | undefined;
  private readonly onDepth: ((depth: number) => void) | undefined;
  private readonly onTerminal: ((key: string, err: TerminalError) => void) | undefined;
  /** Keys ready to run, earliest due first. */
  private readonly queue = new DueHeap();
  /** Waiting keys and when each became due. */
  private readonly queued = new Map<string, number>();
  private readonly processing = new Set<string>();
  /** Keys added while they were being processed, with the earliest due time asked: run again when done, in that place. */
  private readonly dirty = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  /** Handlers holding a slot (started and not released). */
  private running = 0;
  private stopped = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(opts: WorkQueueOptions) {
    this.name = opts.name;
    this.handler = opts.handler;
    this.concurrency = Math.max(1, opts.concurrency);
    this.maxReleased = Math.max(0, opts.released ?? 0);
    this.backoff = opts.backoff ?? { baseMs: 100, maxMs: 5 * 60_000, jitter: 0.1 };
    this.logger = opts.logger;
    this.onDepth = opts.onDepth;
    this.onTerminal = opts.onTerminal;
  }

  /** Keys waiting to run (not counting those running or waiting on a timer). */
  get depth(): number {
    return this.queued.size;
  }

  get active(): number {
    return this.running;
  }

  /** Queues the key now; `dueAt` (ms since epoch, default now) orders it among the waiting keys. */
  add(key: string, dueAt: number = Date.now()): void {
    if (this.stopped) return;
    this.cancelTimer(key);
    if (this.processing.has(key)) {
      const asked = this.dirty.get(key);
      if (asked === undefined || dueAt < asked) this.dirty.set(key, dueAt);
      return;
    }
    const waiting = this.queued.get(key);
    if (waiting !== undefined && waiting <= dueAt) return;
    this.queued.set(key, dueAt);
    this.queue.push(key, dueAt);
    this.reportDepth();
    this.pump();
  }

  /**
   * Queues the key after `delayMs` (a negative delay: it has been due that long, and goes ahead of
   * keys due later). An earlier pending time for the same key wins, so a burst of schedules collapses
   * into the soonest one.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    const at = Date.now() + delayMs;
    if (delayMs <= 0) {
      this.add(key, at);
      return;
    }
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    this.cancelTimer(key);
    const step = Math.min(delayMs, MAX_TIMER_MS);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      if (step < delayMs) this.addAfter(key, at - Date.now());
      else this.add(key, at);
    }, step);
    timer.unref?.();
    this.timers.set(key, { at, timer });
  }

  /** Replaces any pending time of the key with `delayMs` from now (later or sooner; negative: overdue). */
  reschedule(key: string, delayMs: number): void {
    this.cancelTimer(key);
    this.addAfter(key, delayMs);
  }

  /** Queues the key after its backoff; each call without a {@link forget} in between doubles it. */
  addRateLimited(key: string): number {
    const attempt = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempt);
    const delay = backoffDelay(this.backoff, attempt);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears the key's failure count (its next backoff starts from the base again). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Drops the key: no pending timer, not waiting; a running handler finishes but does not run again. */
  remove(key: string): void {
    this.cancelTimer(key);
    this.dirty.delete(key);
    this.failures.delete(key);
    // Its heap entry stays and is skipped when it comes up (it no longer matches `queued`).
    if (this.queued.delete(key)) this.reportDepth();
  }

  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Whether the key is anywhere in the queue: running, waiting to run, or waiting on a timer. */
  holds(key: string): boolean {
    return this.processing.has(key) || this.queued.has(key) || this.timers.has(key);
  }

  /** Pending time of a key (ms since epoch), if it waits on a timer. */
  scheduledAt(key: string): number | undefined {
    return this.timers.get(key)?.at;
  }

  /** Stops taking work, clears timers and waiting keys, and waits for running handlers. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.clear();
    this.queued.clear();
    this.dirty.clear();
    this.reportDepth();
    await this.idle();
  }

  /** Resolves when nothing runs (released handlers included) and nothing waits to run (timers may still be pending). */
  idle(): Promise<void> {
    if (this.processing.size === 0 && this.queued.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private cancelTimer(key: string): void {
    const pending = this.timers.get(key);
    if (pending) {
      clearTimeout(pending.timer);
      this.timers.delete(key);
    }
  }

  private pump(): void {
    while (!this.stopped && this.running < this.concurrency && this.processing.size < this.concurrency + this.maxReleased) {
      const key = this.queue.pop((k, dueAt) => this.queued.get(k) === dueAt);
      if (key === undefined) break;
      this.queued.delete(key);
      this.reportDepth();
      this.processing.add(key);
      this.running++;
      void this.run(key);
    }
    if (this.processing.size === 0 && (this.queued.size === 0 || this.stopped)) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async run(key: string): Promise<void> {
    let failed = false;
    let terminal: TerminalError | undefined;
    let holdsSlot = true;
    const release = () => {
      if (!holdsSlot) return;
      holdsSlot = false;
      this.running--;
      this.pump();
    };
    try {
      await this.handler(key, release);
    } catch (err) {
      if (err instanceof TerminalError) {
        terminal = err;
        this.logger?.warn(
          { queue: this.name, key, code: err.code, err: err.message },
          'handler failed for good; not retried until the key is added again',
        );
      } else {
        failed = true;
        this.logger?.warn(
          { queue: this.name, key, err: err instanceof Error ? err.message : String(err) },
          'handler failed; retrying with backoff',
        );
      }
    } finally {
      this.processing.delete(key);
      if (holdsSlot) this.running--;
      holdsSlot = false; // a release() called after the handler ended must not give back a slot twice
    }
    if (!this.stopped) {
      if (failed) {
        this.dirty.delete(key);
        this.addRateLimited(key);
      } else {
        // A success, or a terminal failure: no backoff either way. A change that came in while the
        // handler ran (dirty) still runs: it may be what fixes a terminal failure.
        this.failures.delete(key);
        if (terminal) this.onTerminal?.(key, terminal);
        const dueAt = this.dirty.get(key);
        if (dueAt !== undefined) {
          this.dirty.delete(key);
          this.add(key, dueAt);
        }
      }
    }
    this.pump();
  }

  private reportDepth(): void {
    this.onDepth?.(this.queued.size);
  }
}

interface DueEntry {
  key: string;
  dueAt: number;
  /** Insertion order: keys due at the same time run first in, first out. */
  seq: number;
}

/** A binary min-heap of keys by due time; entries no longer current are dropped as they come up. */
class DueHeap {
  private readonly items: DueEntry[] = [];
  private seq = 0;

  push(key: string, dueAt: number): void {
    const items = this.items;
    items.push({ key, dueAt, seq: this.seq++ });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  /** The earliest entry for which `current` holds; entries for which it does not are discarded. */
  pop(current: (key: string, dueAt: number) => boolean): string | undefined {
    while (this.items.length > 0) {
      const top = this.takeTop();
      if (current(top.key, top.dueAt)) return top.key;
    }
    return undefined;
  }

  clear(): void {
    this.items.length = 0;
  }

  private takeTop(): DueEntry {
    const items = this.items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length === 0) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < items.length && before(items[l]!, items[m]!)) m = l;
      if (r < items.length && before(items[r]!, items[m]!)) m = r;
      if (m === i) return top;
      [items[i], items[m]] = [items[m]!, items[i]!];
      i = m;
    }
  }
}

function before(a: DueEntry, b: DueEntry): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
}
