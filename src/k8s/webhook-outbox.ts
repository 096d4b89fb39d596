import { CoreV1Api, type KubeConfig, type V1ConfigMap } from './kubernetes-client.js';
import { makeBoundedApiClient } from './client.js';
import type { Logger } from '../platform/log.js';
import { ResourceCache } from './cache.js';
import { isConflict, isNotFound, readOrUndefined } from './errors.js';
import { ResilientInformer } from './informer.js';

/** Label of the ConfigMaps that hold pending webhook deliveries (one per delivery). */
export const WEBHOOK_DELIVERY_LABEL = 'latchkey.dev/webhook-delivery';
const A = {
  attempts: 'latchkey.dev/attempts',
  nextAttemptAt: 'latchkey.dev/next-attempt-at',
  claimedBy: 'latchkey.dev/claimed-by',
  claimedUntil: 'latchkey.dev/claimed-until',
  lastError: 'latchkey.dev/last-error',
} as const;

export interface NewDelivery {
  /** The `webhook-id`: stays the same across retries so receivers can drop duplicates. */
  id: string;
  /** Name of the Environment whose URL and signing key are used. */
  environment: string;
  /** JSON body, exactly as it will be sent (webhook bodies carry no credentials). */
  body: string;
}

export interface PendingDelivery extends NewDelivery {
  namespace: string;
  /** Object name. */
  name: string;
  attempts: number;
  nextAttemptAt: number;
  claimedBy?: string;
  claimedUntil: number;
  createdAt: number;
  resourceVersion: string;
}

/**
 * Pending auth webhook deliveries, kept in the cluster so they survive a pod restart: one ConfigMap
 * per delivery in the Environment's namespace. A replica claims one by a compare-and-swap write
 * (resourceVersion), so two replicas never send it at the same time; success deletes it.
 */
export class WebhookOutbox {
  private readonly core: CoreV1Api;
  /** Set by {@link watch}: pending deliveries as a watch sees them, so listing costs no API call. */
  private cache: ResourceCache<V1ConfigMap> | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly fieldManager = 'latchkey',
  ) {
    this.core = makeBoundedApiClient(kc, CoreV1Api);
  }

  /**
   * Watches the pending deliveries of these namespaces (all when empty) instead of listing them on
   * every poll; resolves once the first list is in. `onPending` hears of each new or changed one.
   */
  async watch(namespaces: string[], logger: Logger, onPending?: () => void): Promise<void> {
    const labelSelector = `${WEBHOOK_DELIVERY_LABEL}=pending`;
    const informer = (namespace: string | undefined) =>
      new ResilientInformer<V1ConfigMap>({
        kc: this.kc,
        path: namespace ? `/api/v1/namespaces/${namespace}/configmaps` : '/api/v1/configmaps',
        listPage: (limit, _continue) =>
          namespace
            ? this.core.listNamespacedConfigMap({ namespace, labelSelector, limit, _continue })
            : this.core.listConfigMapForAllNamespaces({ labelSelector, limit, _continue }),
        labelSelector,
        logger,
      });
    const cache = new ResourceCache(namespaces.length ? namespaces.map(informer) : [informer(undefined)]);
    if (onPending) {
      cache.on('add', onPending);
      cache.on('update', onPending);
    }
    await cache.start();
    this.cache = cache;
  }

  async stopWatching(): Promise<void> {
    const cache = this.cache;
    this.cache = undefined;
    await cache?.stop();
  }

  async enqueue(namespace: string, delivery: NewDelivery, nowMs: number): Promise<void> {
    const body: V1ConfigMap = {
      metadata: {
        name: objectName(delivery.id),
        namespace,
        labels: { [WEBHOOK_DELIVERY_LABEL]: 'pending', 'app.kubernetes.io/managed-by': 'latchkey' },
        annotations: { [A.attempts]: '0', [A.nextAttemptAt]: new Date(nowMs).toISOString() },
      },
      data: { id: delivery.id, environment: delivery.environment, body: delivery.body },
    };
    try {
      await this.core.createNamespacedConfigMap({ namespace, body, fieldManager: this.fieldManager });
    } catch (err) {
      if (!isConflict(err)) throw err; // same id enqueued twice: one delivery
    }
  }

  /** Pending deliveries in these namespaces (all namespaces when empty): from the watch when watching. */
  async list(namespaces: string[]): Promise<PendingDelivery[]> {
    if (this.cache) {
      const items = namespaces.length ? namespaces.flatMap((ns) => this.cache!.list(ns)) : this.cache.list();
      return items.map(fromConfigMap).filter((d): d is PendingDelivery => d !== undefined);
    }
    const selector = `${WEBHOOK_DELIVERY_LABEL}=pending`;
    const lists = namespaces.length
      ? await Promise.all(namespaces.map((namespace) => this.core.listNamespacedConfigMap({ namespace, labelSelector: selector })))
      : [await this.core.listConfigMapForAllNamespaces({ labelSelector: selector })];
    return lists
      .flatMap((l) => l.items)
      .map(fromConfigMap)
      .filter((d): d is PendingDelivery => d !== undefined);
  }

  /**
   * Claims a delivery for `holder` until `untilMs`. Returns the claimed delivery, or undefined when
   * another replica changed it first (it claimed, finished or rescheduled it).
   */
  async claim(d: PendingDelivery, holder: string, untilMs: number): Promise<PendingDelivery | undefined> {
    return this.replace(d, { [A.claimedBy]: holder, [A.claimedUntil]: new Date(untilMs).toISOString() });
  }

  /** Records a failed attempt and when to try again; releases the claim. */
  async reschedule(d: PendingDelivery, attempts: number, nextAttemptAtMs: number, lastError: string): Promise<PendingDelivery | undefined> {
    return this.replace(d, {
      [A.attempts]: String(attempts),
      [A.nextAttemptAt]: new Date(nextAttemptAtMs).toISOString(),
      [A.claimedBy]: undefined,
      [A.claimedUntil]: undefined,
      [A.lastError]: lastError.slice(0, 512),
    });
  }

  /** Removes a delivery (sent, or given up). Only if it is still the version we hold. */
  async remove(d: PendingDelivery): Promise<void> {
    try {
      await this.core.deleteNamespacedConfigMap({
        namespace: d.namespace,
        name: d.name,
        body: { preconditions: { resourceVersion: d.resourceVersion } },
      });
      this.cache?.forget(d.name, d.namespace, d.resourceVersion);
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  private async replace(d: PendingDelivery, annotations: Record<string, string | undefined>): Promise<PendingDelivery | undefined> {
    const current = await readOrUndefined(() => this.core.readNamespacedConfigMap({ namespace: d.namespace, name: d.name }));
    if (current === undefined) return undefined;
    if (current.metadata?.resourceVersion !== d.resourceVersion) return undefined;
    const next: Record<string, string> = { ...(current.metadata?.annotations ?? {}) };
    for (const [k, v] of Object.entries(annotations)) {
      if (v === undefined) delete next[k];
      else next[k] = v;
    }
    try {
      const written = await this.core.replaceNamespacedConfigMap({
        namespace: d.namespace,
        name: d.name,
        fieldManager: this.fieldManager,
        body: { ...current, metadata: { ...current.metadata, annotations: next } },
      });
      this.cache?.remember(written);
      return fromConfigMap(written);
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return undefined;
      throw err;
    }
  }
}

function objectName(id: string): string {
  return `latchkey-webhook-${id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 253);
}

function fromConfigMap(cm: V1ConfigMap): PendingDelivery | undefined {
  const m = cm.metadata;
  const data = cm.data;
  if (!m?.name || !m.namespace || !data?.id || !data.body || !data.environment) return undefined;
  const ann = m.annotations ?? {};
  const time = (v: string | undefined) => {
    const t = Date.parse(v ?? '');
    return Number.isFinite(t) ? t : 0;
  };
  return {
    id: data.id,
    environment: data.environment,
    body: data.body,
    namespace: m.namespace,
    name: m.name,
    attempts: Number(ann[A.attempts] ?? 0) || 0,
    nextAttemptAt: time(ann[A.nextAttemptAt]),
    claimedBy: ann[A.claimedBy],
    claimedUntil: time(ann[A.claimedUntil]),
    createdAt: time(m.creationTimestamp as unknown as string),
    resourceVersion: m.resourceVersion ?? '',
  };
}
