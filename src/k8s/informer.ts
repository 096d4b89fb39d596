import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from './kubernetes-client.js';
import type { Logger } from '../platform/log.js';
import { internStrings, type StringPool } from './string-pool.js';
import { backoffDelay } from '../domain/backoff.js';
import { listPages, type ListPage } from './paging.js';

export interface ResilientInformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  path: string;
  /**
   * One page of the initial list (`limit`/`continue`, one consistent snapshot). Each page's objects
   * are put in their cached shape as the page arrives, so a (re)start never holds more than one
   * page's raw answer besides what the cache keeps: at 100,000 connections, holding every raw page
   * until the last one had a server peak at twice its settled RSS.
   */
  listPage: ListPage<T>;
  labelSelector?: string;
  logger: Logger;
  /** Repeated strings of cached objects are shared through this pool (none: kept as parsed). */
  strings?: StringPool;
  /** Keys whose values are not pooled (a Secret's `data`). */
  unpooledKeys?: ReadonlySet<string>;
  /** Keeps only what the cache's readers use of an object (in place), before it is cached. */
  reduce?(obj: T): void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

type Listener<T> = (obj: T) => void;

/**
 * A client-node informer that restarts itself. client-node stops a ListWatch for good when the watch
 * fails with anything but 410 Gone or a client timeout; this wrapper starts it again with exponential
 * backoff (reset once a list-watch starts without error), so the cache converges after an API server
 * restart. It also knows whether the cache is current ({@link isFresh}): `/readyz` asks it, so a replica
 * whose watches are down does not claim to serve current data.
 */
export class ResilientInformer<T extends KubernetesObject> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  /** Failed list-watches since the last one that started: the backoff's attempt. */
  private failuresInARow = 0;
  private stopped = true;
  private restartTimer: NodeJS.Timeout | undefined;
  private syncedOnce = false;
  /** Listed and watching, with no watch error since: the cache follows the API server. */
  private fresh = false;
  /** Watch errors so far: a list-watch start that saw none in between is a good start. */
  private errorsSeen = 0;
  private readonly syncWaiters: Array<() => void> = [];
  /** Number of times the watch was started again after an error; exposed for tests and metrics. */
  restarts = 0;

  constructor(private readonly opts: ResilientInformerOptions<T>) {
    // Cached objects are slimmed as they enter: listed ones before the informer takes them, watched
    // ones by its first listeners, before anyone else sees them (the cache holds the very object the
    // callbacks receive). managedFields is field-ownership bookkeeping Latchkey never reads, about a
    // third of a cached connection; repeated strings are shared (./string-pool.ts).
    const { strings, unpooledKeys, reduce } = opts;
    const slim = (obj: T) => {
      reduce?.(obj);
      dropManagedFields(obj);
      if (strings) internStrings(obj, strings, unpooledKeys);
    };
    // client-node calls the 'add'/'update' listeners for listed objects too, right after the list:
    // those were shaped page by page already, and are not walked a second time.
    const shapedByList = new WeakSet<T>();
    const list = () =>
      listInPages(opts.listPage, (item) => {
        const plain = asWatched(item);
        slim(plain);
        shapedByList.add(plain);
        return plain;
      });
    const slimWatched = (obj: T) => {
      if (!shapedByList.delete(obj)) slim(obj);
    };
    this.informer = makeInformer(opts.kc, opts.path, list, opts.labelSelector);
    this.informer.on('add', slimWatched);
    this.informer.on('update', slimWatched);
    this.minBackoffMs = opts.minBackoffMs ?? 250;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    // Not 'connect': client-node emits it before listing and watching, so it says nothing about success.
    this.informer.on('error', (err) => this.onError(err));
  }

  get path(): string {
    return this.opts.path;
  }

  /** Listed at least once (the cache may be stale since: see {@link isFresh}). */
  get hasSynced(): boolean {
    return this.syncedOnce;
  }

  /** Listed and watching now: false from a watch error until a list-watch starts again without one. */
  get isFresh(): boolean {
    return this.fresh;
  }

  /** Starts the list-watch and resolves after the first successful list. */
  async start(): Promise<void> {
    this.stopped = false;
    const synced = new Promise<void>((resolve) => this.syncWaiters.push(resolve));
    await this.listWatch();
    await synced;
  }

  /**
   * ListWatch.start resolves once it has listed (when it had no resource version to resume from) and
   * its watch request was answered; a failure on the way is reported through 'error' (counted by
   * onError), not thrown, so "no new error meanwhile" is what tells a good start.
   */
  private async listWatch(): Promise<void> {
    const errorsBefore = this.errorsSeen;
    try {
      await this.informer.start();
    } catch (err) {
      this.onError(err);
      return;
    }
    if (this.errorsSeen === errorsBefore && !this.stopped) this.markFresh();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    await this.informer.stop();
  }

  on(verb: 'add' | 'update' | 'delete', cb: Listener<T>): void {
    this.informer.on(verb, cb);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  list(namespace?: string): ReadonlyArray<T> {
    return this.informer.list(namespace);
  }

  private markFresh(): void {
    if (!this.fresh && this.syncedOnce) this.opts.logger.info({ path: this.opts.path, restarts: this.restarts }, 'watch resumed');
    this.fresh = true;
    this.syncedOnce = true;
    this.failuresInARow = 0;
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  private onError(err: unknown): void {
    this.errorsSeen += 1;
    this.fresh = false;
    if (this.stopped) return;
    const delay = backoffDelay({ baseMs: this.minBackoffMs, maxMs: this.maxBackoffMs }, ++this.failuresInARow);
    this.opts.logger.warn({ path: this.opts.path, err: errorSummary(err), retryInMs: delay }, 'watch failed; restarting');
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      this.restarts += 1;
      void this.listWatch();
    }, delay);
    this.restartTimer.unref?.();
  }
}

function errorSummary(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 300);
  return String(err).slice(0, 300);
}

/**
 * A list read page by page ({@link listPages}), each page's objects put in their cached shape before
 * the next page is asked for; the informer gets them together, as one list.
 */
async function listInPages<T extends KubernetesObject>(page: ListPage<T>, shape: (item: T) => T): Promise<KubernetesListObject<T>> {
  let first: KubernetesListObject<T> | undefined;
  for await (const list of listPages(page)) {
    // An empty PartialObjectMetadataList (a metadata-only list) has `items: null`.
    const items = (list.items ?? []).map(shape);
    if (!first) {
      first = list;
      first.items = items;
      continue;
    }
    for (const item of items) first.items.push(item);
    // The snapshot the watch continues from is the one all pages were read at.
    if (first.metadata && list.metadata?.resourceVersion) first.metadata.resourceVersion = list.metadata.resourceVersion;
  }
  if (first!.metadata) {
    delete first!.metadata._continue;
    delete (first!.metadata as { continue?: string }).continue;
  }
  return first!;
}

/**
 * A listed object in the shape a watch delivers: plain JSON. The typed clients' lists give class
 * instances (a V1Secret), with a property for every field of the type, most of them undefined, and
 * Dates for timestamps; objects of one kind would otherwise have two shapes in one cache.
 */
function asWatched<T extends KubernetesObject>(item: T): T {
  return Object.getPrototypeOf(item) === Object.prototype ? item : (JSON.parse(JSON.stringify(item)) as T);
}

export function dropManagedFields(obj: KubernetesObject): void {
  const metadata = obj.metadata;
  if (!metadata || !('managedFields' in metadata)) return;
  // A new object rather than `delete`: deleting a property turns an object into a hash table
  // (about 380 bytes more per cached object, measured on parsed Connections).
  const { managedFields: _dropped, ...rest } = metadata;
  obj.metadata = rest;
}
