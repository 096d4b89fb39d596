import { Watch, type KubeConfig } from './kubernetes-client.js';
import type { Logger } from '../platform/log.js';
import { backoffDelay } from '../domain/backoff.js';
import { isTimeout } from '../domain/errors.js';

/** One change the API server reported: which object, its new version, and whether it is gone. */
export interface Change {
  name: string;
  namespace: string | undefined;
  resourceVersion: string;
  deleted: boolean;
}

export interface ChangeFeedOptions {
  /** A metadata-only view of the client configuration (./metadata-only.ts): events carry no spec, status or data. */
  kc: KubeConfig;
  /** The collection watched (all namespaces or one). */
  path: string;
  labelSelector?: string;
  /** The collection's current resourceVersion (a list of at most one object): where a watch without history starts. */
  currentVersion(): Promise<string>;
  logger: Logger;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long one watch request lasts before it is started again from the last version seen, seconds. */
  watchSeconds?: number;
  /** How long a watch may bring nothing before it is started again, ms (tests make it short). */
  idleTimeoutMs?: number;
}

/**
 * Which objects of a collection changed, without keeping any of them: a metadata-only watch that
 * resumes from the last version it saw (bookmarks keep that version current) and says when it lost
 * history (`onReset`: the version it resumed from was compacted away, so any object may have changed
 * unseen) and while it is not watching (`isFresh`). What a bounded cache needs to drop what changed
 * elsewhere; an informer would keep every object of the collection.
 */
export class ChangeFeed {
  private readonly watch: Watch;
  private version: string | undefined;
  private stopped = true;
  private fresh = false;
  private current: AbortController | undefined;
  /** Interruptions since the last watch that was established: the backoff's attempt. */
  private failuresInARow = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly changeListeners: Array<(c: Change) => void> = [];
  private readonly resetListeners: Array<() => void> = [];
  private readonly freshWaiters: Array<() => void> = [];
  /** Watch errors and history losses so far (for tests and metrics). */
  restarts = 0;

  constructor(private readonly opts: ChangeFeedOptions) {
    this.watch = new Watch(opts.kc);
    // client-node ends a watch that brought nothing for this long (30 s by default). The API server
    // sends a bookmark about once a minute to a watch that asked for them: a quiet collection's feed
    // must outlive that, or its version never moves and goes out of etcd's history.
    // (A field client-node's types mark private; its Watch reads it for every request.)
    (this.watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  }

  get isFresh(): boolean {
    return this.fresh;
  }

  onChange(cb: (c: Change) => void): void {
    this.changeListeners.push(cb);
  }

  /** History lost (and at the first start): every object may have changed unseen. */
  onReset(cb: () => void): void {
    this.resetListeners.push(cb);
  }

  /** Resolves once the first watch is established. */
  async start(): Promise<void> {
    this.stopped = false;
    const watching = new Promise<void>((resolve) => this.freshWaiters.push(resolve));
    void this.connect();
    await watching;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.fresh = false;
    clearTimeout(this.retryTimer);
    this.current?.abort();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let failed = false;
    let established = false;
    const fail = (err: unknown, historyLost: boolean) => {
      if (failed || this.stopped) return;
      failed = true;
      this.current?.abort();
      this.lost(err, historyLost);
    };
    try {
      if (this.version === undefined) {
        this.version = await this.opts.currentVersion();
        // Whatever was known before this version is unverifiable now.
        this.reset();
      }
      const query = {
        resourceVersion: this.version,
        allowWatchBookmarks: true,
        labelSelector: this.opts.labelSelector,
        timeoutSeconds: this.opts.watchSeconds ?? 300,
      };
      this.current = await this.watch.watch(
        this.opts.path,
        query,
        (type: string, obj: { metadata?: { name?: string; namespace?: string; resourceVersion?: string }; code?: number }) => {
          if (type === 'ERROR') return fail(new Error(`watch error ${obj.code ?? ''}`), obj.code === 410);
          const m = obj.metadata;
          if (!m?.resourceVersion) return;
          this.version = m.resourceVersion;
          if (type === 'BOOKMARK' || !m.name) return;
          const change = { name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion, deleted: type === 'DELETED' };
          for (const cb of this.changeListeners) cb(change);
        },
        (err: unknown) => {
          // A watch that was running and went quiet for too long is ended like one the API server ended
          // (its timeout): go on from the last version seen, which replays anything missed meanwhile.
          if (err && !(established && isTimeout(err))) return fail(err, isGone(err));
          if (!failed && !this.stopped) void this.connect();
        },
      );
      if (failed || this.stopped) return;
      established = true;
      this.failuresInARow = 0;
      if (!this.fresh) {
        this.fresh = true;
        for (const resolve of this.freshWaiters.splice(0)) resolve();
      }
    } catch (err) {
      fail(err, isGone(err));
    }
  }

  private lost(err: unknown, historyLost: boolean): void {
    this.fresh = false;
    this.restarts += 1;
    // What changed while no watch ran arrives when the next one resumes from `version`, unless that
    // version is gone: then start over from the current one (connect() says reset: everything known
    // is suspect). Until it resumes, isFresh is false: readers trust nothing they kept.
    if (historyLost) this.version = undefined;
    const delay = backoffDelay({ baseMs: this.opts.minBackoffMs ?? 250, maxMs: this.opts.maxBackoffMs ?? 30_000 }, ++this.failuresInARow);
    this.opts.logger.warn({ path: this.opts.path, err: summary(err), retryInMs: delay }, 'change feed interrupted; restarting');
    clearTimeout(this.retryTimer);
    // Not unref'd: a process waiting for its first watch (start()) has nothing else keeping it alive
    // (a controller that exited 0 on a loaded machine); stop() clears it.
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private reset(): void {
    for (const cb of this.resetListeners) cb();
  }
}

/** How long a watch may bring nothing (not even a bookmark) before it is started again, ms. */
const IDLE_TIMEOUT_MS = 150_000;

function isGone(err: unknown): boolean {
  const e = err as { statusCode?: number; code?: number; message?: string } | undefined;
  return e?.statusCode === 410 || e?.code === 410 || /\b410\b|too old resource version|Expired/i.test(e?.message ?? '');
}

function summary(err: unknown): string {
  return (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 300);
}
