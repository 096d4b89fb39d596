import type { KubeConfig, V1Lease, V1LeaseList, V1OwnerReference } from './kubernetes-client.js';
import { isConflict, isNotFound, readOrUndefined } from './errors.js';
import { apiPath, KubeJsonApi } from './json-api.js';

/** A Lease object as the API server returns it. */
export type LeaseObject = V1Lease;

export interface LeaseState {
  holder: string | undefined;
  /** The Lease's annotations (what its holder says about the work it guards). */
  annotations: Record<string, string>;
  /** When the holder last renewed (ms since epoch). */
  renewedAt: number;
  durationSeconds: number;
  transitions: number;
  resourceVersion: string;
}

export type AcquireResult = { acquired: true; lease: LeaseState } | { acquired: false; lease: LeaseState | undefined };

/**
 * coordination.k8s.io Leases with compare-and-swap: the building block of leader election and of
 * the per-connection refresh lock. A lease is free when it has no holder or its holder has not
 * renewed within its duration.
 */
export class Leases {
  private readonly api: LeaseCalls;

  constructor(
    kc: KubeConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.api = new LeaseCalls(new KubeJsonApi(kc));
  }

  async get(namespace: string, name: string): Promise<LeaseState | undefined> {
    return readOrUndefined(async () => {
      return toState(await this.api.readNamespacedLease({ namespace, name }));
    });
  }

  /**
   * Takes the lease for `holder` if it is free, expired, or already held by `holder` (a renewal).
   * Exactly one of several concurrent callers wins: the write is conditional on the resourceVersion read.
   */
  async tryAcquire(
    namespace: string,
    name: string,
    holder: string,
    durationSeconds: number,
    labels?: Record<string, string>,
    ownerReferences?: V1OwnerReference[],
  ): Promise<AcquireResult> {
    // Lease times are MicroTime: the API server accepts exactly six fractional digits.
    const nowIso = new Date(this.now()).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    let current: V1Lease | undefined;
    try {
      current = await this.api.readNamespacedLease({ namespace, name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!current) {
      try {
        const created = await this.api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace, labels, ownerReferences },
            spec: {
              holderIdentity: holder,
              leaseDurationSeconds: durationSeconds,
              acquireTime: nowIso as unknown as Date,
              renewTime: nowIso as unknown as Date,
              leaseTransitions: 0,
            },
          },
        });
        return { acquired: true, lease: toState(created) };
      } catch (err) {
        if (isConflict(err)) return { acquired: false, lease: await this.get(namespace, name) };
        throw err;
      }
    }
    const state = toState(current);
    const mine = state.holder === holder;
    if (!mine && state.holder && !this.isExpired(state)) return { acquired: false, lease: state };
    const body: V1Lease = {
      ...current,
      spec: {
        ...current.spec,
        holderIdentity: holder,
        leaseDurationSeconds: durationSeconds,
        renewTime: nowIso as unknown as Date,
        ...(mine ? {} : { acquireTime: nowIso as unknown as Date, leaseTransitions: state.transitions + 1 }),
      },
    };
    try {
      return { acquired: true, lease: toState(await this.api.replaceNamespacedLease({ namespace, name, body })) };
    } catch (err) {
      if (isConflict(err)) return { acquired: false, lease: await this.get(namespace, name) };
      throw err;
    }
  }

  /**
   * Creates a lease held by `holder`: one round trip, no read first. Undefined when it already
   * exists (409): someone holds it, or held it and left it behind.
   */
  async create(
    namespace: string,
    name: string,
    holder: string,
    durationSeconds: number,
    meta: { labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: V1OwnerReference[] } = {},
  ): Promise<V1Lease | undefined> {
    const nowIso = microTime(this.now());
    try {
      return await this.api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace, ...meta },
          spec: {
            holderIdentity: holder,
            leaseDurationSeconds: durationSeconds,
            acquireTime: nowIso,
            renewTime: nowIso,
            leaseTransitions: 0,
          },
        },
      });
    } catch (err) {
      if (isConflict(err)) return undefined;
      throw err;
    }
  }

  /** The lease object as the API server has it; undefined when absent. */
  async read(namespace: string, name: string): Promise<V1Lease | undefined> {
    return readOrUndefined(() => this.api.readNamespacedLease({ namespace, name }));
  }

  /**
   * Writes `lease` conditionally on the resourceVersion it carries. Undefined when the API server
   * has moved on (409) or the lease is gone (404): the caller's view of it is out of date.
   */
  async replace(namespace: string, lease: V1Lease): Promise<V1Lease | undefined> {
    try {
      return await this.api.replaceNamespacedLease({ namespace, name: lease.metadata!.name!, body: lease });
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Gives the lease up if `holder` still holds it (clears the holder so others need not wait for expiry). */
  async release(namespace: string, name: string, holder: string): Promise<void> {
    try {
      const current = await this.api.readNamespacedLease({ namespace, name });
      if (current.spec?.holderIdentity !== holder) return;
      await this.api.replaceNamespacedLease({
        namespace,
        name,
        body: { ...current, spec: { ...current.spec, holderIdentity: undefined, renewTime: undefined } },
      });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /**
   * Leases of a namespace that carry `labelSelector`, with their names (shard membership), read
   * page by page so that many members never come back in one answer.
   */
  async list(namespace: string, labelSelector: string): Promise<Array<LeaseState & { name: string }>> {
    const out: Array<LeaseState & { name: string }> = [];
    let _continue: string | undefined;
    do {
      const page = await this.api.listNamespacedLease({ namespace, labelSelector, limit: 500, _continue });
      for (const lease of page.items) out.push({ name: lease.metadata?.name ?? '', ...toState(lease) });
      _continue = page.metadata?._continue || undefined;
    } while (_continue);
    return out;
  }

  async delete(namespace: string, name: string): Promise<void> {
    try {
      await this.api.deleteNamespacedLease({ namespace, name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** Deletes a lease only if nobody wrote it since `resourceVersion` was read (a stale member's lease). */
  async deleteIfUnchanged(namespace: string, name: string, resourceVersion: string): Promise<void> {
    try {
      await this.api.deleteNamespacedLease({ namespace, name, body: { preconditions: { resourceVersion } } });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  isExpired(state: LeaseState): boolean {
    return this.now() > state.renewedAt + state.durationSeconds * 1000;
  }
}

/**
 * The coordination.k8s.io calls Leases makes, as plain JSON ({@link KubeJsonApi}): every refresh
 * creates and deletes a Lease, and the typed client spent over twice the CPU on them.
 */
class LeaseCalls {
  constructor(private readonly json: KubeJsonApi) {}

  private static path(namespace: string, name?: string): string {
    return apiPath('/apis/coordination.k8s.io/v1/namespaces', namespace, 'leases', ...(name === undefined ? [] : [name]));
  }

  readNamespacedLease({ namespace, name }: { namespace: string; name: string }): Promise<V1Lease> {
    return this.json.get<V1Lease>(LeaseCalls.path(namespace, name));
  }

  createNamespacedLease({ namespace, body }: { namespace: string; body: V1Lease }): Promise<V1Lease> {
    return this.json.post<V1Lease>(LeaseCalls.path(namespace), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...body });
  }

  replaceNamespacedLease({ namespace, name, body }: { namespace: string; name: string; body: V1Lease }): Promise<V1Lease> {
    return this.json.put<V1Lease>(LeaseCalls.path(namespace, name), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...body });
  }

  listNamespacedLease(q: { namespace: string; labelSelector: string; limit: number; _continue?: string }): Promise<V1LeaseList> {
    return this.json.get<V1LeaseList>(LeaseCalls.path(q.namespace), {
      query: { labelSelector: q.labelSelector, limit: q.limit, continue: q._continue },
    });
  }

  async deleteNamespacedLease({ namespace, name, body }: { namespace: string; name: string; body?: object }): Promise<void> {
    await this.json.delete(LeaseCalls.path(namespace, name), body);
  }
}

/** Lease times are MicroTime: the API server accepts exactly six fractional digits. */
export function microTime(ms: number): Date {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}

export function toState(lease: V1Lease): LeaseState {
  const renew = lease.spec?.renewTime as unknown;
  return {
    holder: lease.spec?.holderIdentity || undefined,
    annotations: lease.metadata?.annotations ?? {},
    renewedAt: renew ? new Date(renew as string | Date).getTime() : 0,
    durationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
    transitions: lease.spec?.leaseTransitions ?? 0,
    resourceVersion: lease.metadata?.resourceVersion ?? '',
  };
}
