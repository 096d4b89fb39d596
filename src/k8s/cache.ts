import type { KubernetesObject } from './kubernetes-client.js';
import type { ResilientInformer } from './informer.js';
import { ChangeWaiters } from './change-waiters.js';

type Listener<T> = (obj: T) => void;

interface OverlayEntry<T> {
  obj: T | undefined; // undefined: deleted by us
  resourceVersion: number;
  expiresAt: number;
}

const OVERLAY_TTL_MS = 60_000;
/** Expired entries are swept once this many writes were remembered since the last sweep. */
const SWEEP_EVERY_WRITES = 256;

/**
 * Informer-backed reads for one kind, across one informer per watched namespace (or one for all).
 *
 * Writes made by this process are put in a short-lived overlay so that a read right after a write
 * sees it even before the watch event arrives (read-your-writes). The overlay entry wins only while
 * its resourceVersion is newer than the informer's (Kubernetes resource versions are comparable
 * integers since 1.34), so a later change by anyone else still shows.
 *
 * The overlay stays bounded by the writes still in flight: an entry is dropped as soon as the watch
 * delivers the same or a newer version of its object (or its deletion), and expired entries are
 * swept every few hundred writes, so objects written once and never read again do not pile up.
 */
export class ResourceCache<T extends KubernetesObject> {
  private readonly overlay = new Map<string, OverlayEntry<T>>();
  private writesSinceSweep = 0;
  /** Callers waiting for the next change of one object, by namespace/name. */
  private readonly waiters = new ChangeWaiters();

  constructor(
    private readonly informers: ResilientInformer<T>[],
    private readonly now: () => number = Date.now,
    /**
     * Whether the informers' selector takes an object (label-selected caches). A write of an object
     * they will never deliver is not remembered: no watch event would ever end its overlay entry,
     * and the cache would answer for objects outside its selection.
     */
    private readonly selects: (obj: KubernetesObject) => boolean = () => true,
  ) {
    for (const verb of ['add', 'update'] as const) this.on(verb, (obj) => this.supersede(obj, false));
    this.on('delete', (obj) => this.supersede(obj, true));
    this.onChange((obj) => this.wake(key(obj.metadata!.name!, obj.metadata!.namespace)));
  }

  /**
   * Resolves at the next change of one object: a watch event, or a write or deletion this process
   * remembered. Resolves as well when `signal` aborts (the caller's bound); nothing is polled.
   */
  whenChanged(name: string, namespace: string | undefined, signal: AbortSignal): Promise<void> {
    return this.waiters.wait(key(name, namespace), signal);
  }

  /** Callers waiting in {@link whenChanged} (for tests: waiters do not pile up). */
  get waiting(): number {
    return this.waiters.waiting;
  }

  private wake(k: string): void {
    this.waiters.wake(k);
  }

  /** Entries in the read-your-writes overlay (bounded by writes whose watch event has not arrived). */
  get overlaySize(): number {
    return this.overlay.size;
  }

  async start(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  get hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced);
  }

  /** Every informer listed and watching now (none is recovering from a watch error). */
  get isFresh(): boolean {
    return this.informers.every((i) => i.isFresh);
  }

  get restarts(): number {
    return this.informers.reduce((n, i) => n + i.restarts, 0);
  }

  on(verb: 'add' | 'update' | 'delete', cb: Listener<T>): void {
    for (const i of this.informers) i.on(verb, cb);
  }

  /** Any add, update or delete. */
  onChange(cb: Listener<T>): void {
    for (const verb of ['add', 'update', 'delete'] as const) this.on(verb, cb);
  }

  get(name: string, namespace?: string): T | undefined {
    const fromInformer = this.fromInformers(name, namespace);
    // Nothing of ours waiting for the watch (nearly always): no key to build for the overlay.
    if (this.overlay.size === 0) return fromInformer;
    const entry = this.overlay.get(key(name, namespace));
    if (!entry) return fromInformer;
    if (entry.expiresAt < this.now() || (fromInformer && rv(fromInformer) >= entry.resourceVersion)) {
      this.overlay.delete(key(name, namespace));
      return fromInformer;
    }
    return entry.obj;
  }

  list(namespace?: string): T[] {
    // Nothing of ours waiting for the watch (an idle replica): the informer's own copy, without a
    // map of every object (at 100,000 connections, the sweeper's and resync's walks made one each).
    if (this.overlay.size === 0 && this.informers.length === 1) return this.informers[0]!.list(namespace) as T[];
    const out = new Map<string, T>();
    for (const informer of this.informers) {
      for (const obj of informer.list(namespace)) {
        out.set(key(obj.metadata!.name!, obj.metadata!.namespace), obj);
      }
    }
    for (const [k, entry] of this.overlay) {
      const [ns] = splitKey(k);
      if (namespace !== undefined && ns !== namespace) continue;
      const current = out.get(k);
      if (entry.expiresAt < this.now() || (current && rv(current) >= entry.resourceVersion)) continue;
      if (entry.obj) out.set(k, entry.obj);
      else out.delete(k);
    }
    return [...out.values()];
  }

  /**
   * Records an object this process just wrote (the API server's answer) or read from the API server.
   * An older version than the one already recorded is ignored (a read answered before a write of ours).
   */
  remember(obj: T): void {
    if (!this.selects(obj)) return;
    const name = obj.metadata!.name!;
    const k = key(name, obj.metadata!.namespace);
    const recorded = this.overlay.get(k);
    if (recorded && recorded.resourceVersion > rv(obj)) return;
    this.put(k, { obj, resourceVersion: rv(obj), expiresAt: this.now() + OVERLAY_TTL_MS });
    this.wake(k);
  }

  /** Records that this process deleted an object. */
  forget(name: string, namespace: string | undefined, lastResourceVersion: string | undefined): void {
    const current = this.fromInformers(name, namespace);
    const version = Math.max(Number(lastResourceVersion ?? 0), current ? rv(current) : 0) + 1;
    this.put(key(name, namespace), { obj: undefined, resourceVersion: version, expiresAt: this.now() + OVERLAY_TTL_MS });
    this.wake(key(name, namespace));
  }

  private put(k: string, entry: OverlayEntry<T>): void {
    this.overlay.set(k, entry);
    if (++this.writesSinceSweep < SWEEP_EVERY_WRITES) return;
    this.writesSinceSweep = 0;
    const now = this.now();
    for (const [k2, e] of this.overlay) if (e.expiresAt < now) this.overlay.delete(k2);
  }

  /** The watch caught up with (or went past) our write: the overlay entry has nothing left to add. */
  private supersede(obj: T, deleted: boolean): void {
    const k = key(obj.metadata!.name!, obj.metadata!.namespace);
    const entry = this.overlay.get(k);
    if (!entry) return;
    // A deletion seen by the watch ends our tombstone; a version at least as new as ours ends a write.
    // (A deletion of an older incarnation leaves a re-created object's entry alone.)
    if ((deleted && entry.obj === undefined) || rv(obj) >= entry.resourceVersion) this.overlay.delete(k);
  }

  private fromInformers(name: string, namespace?: string): T | undefined {
    for (const informer of this.informers) {
      const found = informer.get(name, namespace);
      if (found) return found;
    }
    return undefined;
  }
}

function key(name: string, namespace: string | undefined): string {
  return `${namespace ?? ''}/${name}`;
}

function splitKey(k: string): [string, string] {
  const i = k.indexOf('/');
  return [k.slice(0, i), k.slice(i + 1)];
}

function rv(obj: KubernetesObject): number {
  const n = Number(obj.metadata?.resourceVersion ?? 0);
  return Number.isFinite(n) ? n : 0;
}
