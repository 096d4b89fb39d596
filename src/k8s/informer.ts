import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import type { Logger } from '../app/log.js';

export interface ResilientInformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  logger: Logger;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

type Listener<T> = (obj: T) => void;

/**
 * A client-node informer that restarts itself. client-node stops a ListWatch for good when the watch
 * fails with anything but 410 Gone or a client timeout; this wrapper starts it again with exponential
 * backoff (reset once a watch connects), so the cache converges after an API server restart.
 */
export class ResilientInformer<T extends KubernetesObject> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private backoffMs: number;
  private stopped = true;
  private restartTimer: NodeJS.Timeout | undefined;
  private syncedOnce = false;
  private readonly syncWaiters: Array<() => void> = [];
  /** Number of times the watch was started again after an error; exposed for tests and metrics. */
  restarts = 0;

  constructor(private readonly opts: ResilientInformerOptions<T>) {
    // managedFields is field-ownership bookkeeping Latchkey never reads, about a third of a cached
    // connection: dropped from listed objects and (by the first listeners, before anyone else sees
    // the object) from watched ones, since the cache holds the very object the callbacks receive.
    const list = async () => {
      const result = await opts.list();
      for (const item of result.items) dropManagedFields(item);
      return result;
    };
    this.informer = makeInformer(opts.kc, opts.path, list, opts.labelSelector);
    this.informer.on('add', dropManagedFields);
    this.informer.on('update', dropManagedFields);
    this.minBackoffMs = opts.minBackoffMs ?? 250;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.backoffMs = this.minBackoffMs;
    this.informer.on('connect', () => {
      this.backoffMs = this.minBackoffMs;
      this.markSynced();
    });
    this.informer.on('error', (err) => this.onError(err));
  }

  get path(): string {
    return this.opts.path;
  }

  get hasSynced(): boolean {
    return this.syncedOnce;
  }

  /** Starts the list-watch and resolves after the first successful list. */
  async start(): Promise<void> {
    this.stopped = false;
    const synced = new Promise<void>((resolve) => this.syncWaiters.push(resolve));
    try {
      // ListWatch.start resolves after the initial list, so the cache is filled from here on.
      await this.informer.start();
      this.markSynced();
    } catch (err) {
      this.onError(err);
    }
    await synced;
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

  private markSynced(): void {
    this.syncedOnce = true;
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  private onError(err: unknown): void {
    if (this.stopped) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
    this.opts.logger.warn({ path: this.opts.path, err: errorSummary(err), retryInMs: delay }, 'watch failed; restarting');
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      this.restarts += 1;
      this.informer.start().catch((e: unknown) => this.onError(e));
    }, delay);
    this.restartTimer.unref?.();
  }
}

function errorSummary(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 300);
  return String(err).slice(0, 300);
}

function dropManagedFields(obj: KubernetesObject): void {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
}
