import { randomBytes } from 'node:crypto';
import { microTime, toState, type LeaseObject, type Leases } from '../../k8s/leases.js';
import { API_VERSION, CONNECTIONS, LABELS } from '../../k8s/resources.js';

/**
 * On a refresh Lease released by an earlier version of Latchkey (which kept released Leases for a
 * TTL): the resourceVersion of the credentials Secret its last holder wrote. Cleared on take-over.
 */
export const WRITTEN_VERSION_ANNOTATION = 'latchkey.dev/credentials-written';

/** A refresh Lease this owner holds: the object as last written, and when it was last renewed. */
export interface HeldRefreshLock {
  namespace: string;
  connectionName: string;
  lease: LeaseObject;
  renewedAt: number;
  lost: boolean;
}

/** Taken, or busy until `waitUntil` (ms since epoch): wait for the credentials to change, then try again. */
export type Acquisition = { held: HeldRefreshLock } | { held: undefined; waitUntil: number };

/**
 * The cluster-wide lock of one connection's refresh: a coordination.k8s.io Lease named after the
 * connection, in its namespace. Taken by creating it (one round trip, no read first); a Lease left
 * behind is taken over with compare-and-swap once it is free or expired. It has a TTL so a holder
 * that crashed mid-refresh blocks the others for at most `ttlSeconds`.
 *
 * Released by deleting it (conditionally on its version, so a take-over is never undone): the next
 * refresh takes it by create again. Holding it does not say the holder's cache has the last refresh's
 * Secret (a watch can trail), so the refresher reads the Secret once it holds the lock: two writes and
 * a read per refresh, where keeping a released Lease with the written version for a TTL cost three writes.
 */
export class RefreshLock {
  /** Unique per lock owner (process and instance), so two replicas in one process are told apart. */
  readonly holder: string;

  constructor(
    private readonly leases: Leases,
    identity: string,
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.holder = `${identity}/${randomBytes(4).toString('hex')}`;
  }

  static leaseName(connectionName: string): string {
    return `latchkey-refresh-${connectionName}`;
  }

  /**
   * Takes the lock of a connection's refresh. With the connection's UID, a newly created Lease is owned
   * by the Connection, so the garbage collector deletes it with the connection (no blockOwnerDeletion).
   */
  async acquire(namespace: string, connectionName: string, connectionUid?: string): Promise<Acquisition> {
    const name = RefreshLock.leaseName(connectionName);
    const ownerReferences = connectionUid
      ? [{ apiVersion: API_VERSION, kind: CONNECTIONS.kind, name: connectionName, uid: connectionUid }]
      : undefined;
    const labels = { [LABELS.managedBy]: LABELS.managedByValue, [LABELS.connection]: connectionName };
    for (let attempt = 0; attempt < 3; attempt++) {
      const created = await this.leases.create(namespace, name, this.holder, this.ttlSeconds, { labels, ownerReferences });
      if (created) return { held: this.held(namespace, connectionName, created) };
      // Left behind or held by someone: one read to tell which.
      const current = await this.leases.read(namespace, name);
      if (!current) continue; // deleted meanwhile: create again
      const state = toState(current);
      const expiry = state.renewedAt + state.durationSeconds * 1000;
      const mine = state.holder === this.holder;
      if (!mine && state.holder && this.now() <= expiry) return { held: undefined, waitUntil: expiry };
      // An earlier version's note of the Secret version written: the refresher's read under the lock sees it anyway.
      const annotations = { ...current.metadata?.annotations };
      delete annotations[WRITTEN_VERSION_ANNOTATION];
      const nowIso = microTime(this.now());
      const taken = await this.leases.replace(namespace, {
        ...current,
        metadata: { ...current.metadata, annotations },
        spec: {
          ...current.spec,
          holderIdentity: this.holder,
          leaseDurationSeconds: this.ttlSeconds,
          renewTime: nowIso,
          ...(mine ? {} : { acquireTime: nowIso, leaseTransitions: state.transitions + 1 }),
        },
      });
      if (taken) return { held: this.held(namespace, connectionName, taken) };
    }
    return { held: undefined, waitUntil: this.now() + 1000 };
  }

  /**
   * Whether `later` (an acquisition of this lock) continues the tenure of `earlier`: the same Lease
   * object, and no other holder since (a take-over counts a transition; a deleted and re-created Lease
   * is another object). Nobody else can have refreshed the connection in between.
   */
  static sameTenure(earlier: HeldRefreshLock, later: HeldRefreshLock): boolean {
    return (
      earlier.lease.metadata?.uid === later.lease.metadata?.uid &&
      (earlier.lease.spec?.leaseTransitions ?? 0) === (later.lease.spec?.leaseTransitions ?? 0)
    );
  }

  /** Takes the lock if it can be taken now (no version check): for tests and tools. */
  async tryAcquire(namespace: string, connectionName: string, connectionUid?: string): Promise<boolean> {
    return (await this.acquire(namespace, connectionName, connectionUid)).held !== undefined;
  }

  private held(namespace: string, connectionName: string, lease: LeaseObject): HeldRefreshLock {
    return { namespace, connectionName, lease, renewedAt: this.now(), lost: false };
  }

  /**
   * Keeps the lock while `work` runs: renews the Lease every third of its TTL, so a slow provider
   * call does not let another replica take it and spend the same refresh token. `work` gets a
   * signal that aborts when the lock can no longer be renewed before it would expire (the API
   * server is unreachable or another holder took it), so its provider call ends before anyone else
   * may start one.
   */
  async hold<T>(held: HeldRefreshLock, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const stop = new AbortController();
    const lost = new AbortController();
    const ttlMs = this.ttlSeconds * 1000;
    const loseIt = () => {
      held.lost = true;
      lost.abort(new Error('refresh lock lost'));
    };
    const renewals = (async () => {
      while (!stop.signal.aborted && !held.lost) {
        await sleep(ttlMs / 3, stop.signal);
        if (stop.signal.aborted) return;
        const renewed = await this.leases
          .replace(held.namespace, { ...held.lease, spec: { ...held.lease.spec, renewTime: microTime(this.now()) } })
          .then((lease) => lease ?? ('taken' as const))
          .catch(() => undefined);
        if (renewed === 'taken')
          loseIt(); // someone else wrote it: it expired on their clock
        else if (renewed) {
          held.lease = renewed;
          held.renewedAt = this.now();
        }
        // A fifth of the TTL before it lapses: give up, so our call ends before another may begin.
        else if (this.now() >= held.renewedAt + ttlMs * 0.8) loseIt();
      }
    })();
    try {
      return await work(lost.signal);
    } finally {
      stop.abort();
      await renewals;
    }
  }

  /** Whether the lock is still ours: renewed within most of its TTL and never lost (no API call). */
  isHeld(held: HeldRefreshLock): boolean {
    return !held.lost && this.now() < held.renewedAt + this.ttlSeconds * 1000 * 0.8;
  }

  /** Releases: the Lease is deleted, unless someone took it meanwhile (it expired, and they hold it now). */
  async release(held: HeldRefreshLock): Promise<void> {
    held.lost = true;
    await this.leases.deleteIfUnchanged(held.namespace, held.lease.metadata!.name!, held.lease.metadata!.resourceVersion!);
  }

  /** Removes the lock object (when its connection is deleted). */
  async remove(namespace: string, connectionName: string): Promise<void> {
    await this.leases.delete(namespace, RefreshLock.leaseName(connectionName));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
