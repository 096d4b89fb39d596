import type { KubernetesObject } from './kubernetes-client.js';
import type { Change, ChangeFeed } from './change-feed.js';
import { ChangeWaiters } from './change-waiters.js';

export interface BoundedCacheOptions<T extends KubernetesObject> {
  /** At most this many objects are kept; the least recently read goes first. */
  maxEntries: number;
  /** One object from the API server; undefined when there is none. */
  read(namespace: string, name: string): Promise<T | undefined>;
  /** What tells this cache that an object changed elsewhere (metadata-only watches of the same collection, one per namespace or one for all). */
  feeds: ChangeFeed[];
  /** Whether an object belongs in this cache (label-selected collections). */
  selects?(obj: T): boolean;
  /** Puts an object in its cached shape (slimmed, strings shared) before it is kept. */
  shape?(obj: T): void;
}

/**
 * Objects read on demand and kept up to `maxEntries`, least recently read out first: memory follows
 * the cache's size, not the collection's. An object is kept only while the change feed can tell
 * this process when it changes: the feed's event for a newer version (another replica's write), or
 * its deletion, drops it; while the feed is down nothing is served from memory and nothing is kept,
 * and a feed that lost history empties the cache. A read that overlaps a change of its object is
 * answered but not kept, so an older version read before the event can never outlive it here.
 */
export class BoundedCache<T extends KubernetesObject> {
  /** Kept objects, the least recently read first (see {@link get}); each with the {@link moves} count at its last move. */
  private readonly entries = new Map<string, { obj: T; movedAt: number }>();
  /** Entries moved to the newest end (or added) so far. */
  private moves = 0;
  /** Reads in flight by key: one API call per key however many ask, and the newest version the feed reported meanwhile. */
  private readonly loading = new Map<string, { promise: Promise<T | undefined>; newest: number }>();
  /** Bumped when the feed resets: a read started before it may have missed a change. */
  private epoch = 0;
  private readonly waiters = new ChangeWaiters();

  constructor(private readonly opts: BoundedCacheOptions<T>) {
    for (const feed of opts.feeds) {
      feed.onChange((c) => this.changed(c));
      feed.onReset(() => {
        this.epoch += 1;
        this.entries.clear();
        this.waiters.wakeAll();
      });
    }
  }

  /** Every feed watching: what is kept follows the API server. */
  private get following(): boolean {
    for (const feed of this.opts.feeds) if (!feed.isFresh) return false;
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  get hasSynced(): boolean {
    return true;
  }

  get isFresh(): boolean {
    return this.following;
  }

  get restarts(): number {
    return this.opts.feeds.reduce((n, f) => n + f.restarts, 0);
  }

  async start(): Promise<void> {
    await Promise.all(this.opts.feeds.map((f) => f.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.opts.feeds.map((f) => f.stop()));
  }

  /**
   * The kept object, if any (a miss says nothing about the API server: see {@link load}). The Map's
   * order is the eviction order: a read moves its entry to the newest end, unless fewer moves than
   * half the capacity happened since its own last one (then it is in the newer half anyway, far from
   * eviction). So an entry read often is not moved on every read: a delete and set per read made the
   * Map rebuild its table again and again, garbage on every fetch (docs/benchmarks.md, hot paths).
   */
  get(name: string, namespace?: string): T | undefined {
    if (!this.following) return undefined;
    const k = key(name, namespace);
    const found = this.entries.get(k);
    if (found && this.moves - found.movedAt >= this.opts.maxEntries / 2) this.keep(k, found.obj);
    return found?.obj;
  }

  /** The object, from memory or else from the API server (kept then, if it may be). */
  async load(name: string, namespace: string): Promise<T | undefined> {
    const found = this.get(name, namespace);
    if (found) return found;
    const k = key(name, namespace);
    const running = this.loading.get(k);
    if (running) return running.promise;
    const epoch = this.epoch;
    const entry: { newest: number; promise: Promise<T | undefined> } = { newest: 0, promise: Promise.resolve(undefined) };
    entry.promise = (async () => {
      try {
        const obj = await this.opts.read(namespace, name);
        if (!obj) return undefined;
        this.opts.shape?.(obj);
        // Kept only if nothing newer was reported while it was read and the feed saw all that happened.
        if (epoch === this.epoch && this.following && rv(obj) >= entry.newest) this.keep(k, obj);
        return obj;
      } finally {
        this.loading.delete(k);
      }
    })();
    this.loading.set(k, entry);
    return entry.promise;
  }

  /**
   * An object this process wrote (the API server's answer) or read: kept if it is not older than
   * what is kept already and the feed follows the collection.
   */
  remember(obj: T): void {
    if (this.opts.selects && !this.opts.selects(obj)) return;
    const k = key(obj.metadata!.name!, obj.metadata!.namespace);
    const kept = this.entries.get(k)?.obj;
    if (kept && rv(kept) > rv(obj)) return;
    const pending = this.loading.get(k);
    if (pending) pending.newest = Math.max(pending.newest, rv(obj));
    if (this.following) this.keep(k, obj);
    else this.entries.delete(k);
    this.wake(k);
  }

  /** An object this process deleted. */
  forget(name: string, namespace: string | undefined, _lastResourceVersion?: string): void {
    const k = key(name, namespace);
    this.entries.delete(k);
    const pending = this.loading.get(k);
    if (pending) pending.newest = Number.MAX_SAFE_INTEGER;
    this.wake(k);
  }

  /** Resolves at the next change of one object this process sees (the feed, or its own write), or when `signal` aborts. */
  whenChanged(name: string, namespace: string | undefined, signal: AbortSignal): Promise<void> {
    return this.waiters.wait(key(name, namespace), signal);
  }

  /** Callers waiting in {@link whenChanged}. */
  get waiting(): number {
    return this.waiters.waiting;
  }

  private keep(k: string, obj: T): void {
    this.entries.delete(k);
    this.entries.set(k, { obj, movedAt: ++this.moves });
    while (this.entries.size > this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  private changed(c: Change): void {
    const k = key(c.name, c.namespace);
    const version = c.deleted ? Number.MAX_SAFE_INTEGER : versionOf(c.resourceVersion);
    const pending = this.loading.get(k);
    if (pending) pending.newest = Math.max(pending.newest, version);
    const kept = this.entries.get(k)?.obj;
    // Our own write coming back through the watch is the version kept: nothing changed.
    if (kept && rv(kept) < version) this.entries.delete(k);
    this.wake(k);
  }

  private wake(k: string): void {
    this.waiters.wake(k);
  }
}

function key(name: string, namespace: string | undefined): string {
  return `${namespace ?? ''}/${name}`;
}

/** Resource versions compare as integers (Kubernetes 1.34 made that a guarantee: ./cache.ts). */
function rv(obj: KubernetesObject): number {
  const n = Number(obj.metadata?.resourceVersion ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** A reported version; one that is not a number counts as newer than anything kept (dropped, never trusted). */
function versionOf(v: string): number {
  const n = Number(v);
  return Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER;
}
