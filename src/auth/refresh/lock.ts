import { randomBytes } from 'node:crypto';
import type { Leases } from '../../k8s/leases.js';
import { API_VERSION, CONNECTIONS, LABELS } from '../../k8s/resources.js';

/**
 * The cluster-wide lock of one connection's refresh: a coordination.k8s.io Lease named after the
 * connection, in its namespace, taken with compare-and-swap. It has a TTL so a holder that crashed
 * mid-refresh blocks the others for at most `ttlSeconds`.
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
   * Takes the lock. With the connection's UID, a newly created Lease is owned by the Connection, so
   * the garbage collector deletes it with the connection (no blockOwnerDeletion: no extra RBAC).
   */
  async tryAcquire(namespace: string, connectionName: string, connectionUid?: string): Promise<boolean> {
    const owner = connectionUid
      ? [{ apiVersion: API_VERSION, kind: CONNECTIONS.kind, name: connectionName, uid: connectionUid }]
      : undefined;
    const result = await this.leases.tryAcquire(
      namespace,
      RefreshLock.leaseName(connectionName),
      this.holder,
      this.ttlSeconds,
      {
        [LABELS.managedBy]: LABELS.managedByValue,
        [LABELS.connection]: connectionName,
      },
      owner,
    );
    return result.acquired;
  }

  /**
   * Keeps the lock while `work` runs: renews the Lease every third of its TTL, so a slow provider
   * call does not let another replica take it and spend the same refresh token. `work` gets a
   * signal that aborts when the lock can no longer be renewed before it would expire (the API
   * server is unreachable or another holder took it), so its provider call ends before anyone else
   * may start one.
   */
  async hold<T>(namespace: string, connectionName: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const stop = new AbortController();
    const lost = new AbortController();
    const ttlMs = this.ttlSeconds * 1000;
    let renewedAt = this.now();
    const renewals = (async () => {
      while (!stop.signal.aborted) {
        await sleep(ttlMs / 3, stop.signal);
        if (stop.signal.aborted) return;
        const ok = await this.tryAcquire(namespace, connectionName).catch(() => false);
        if (ok) renewedAt = this.now();
        // A fifth of the TTL before it lapses: give up, so our call ends before another may begin.
        else if (!ok && this.now() >= renewedAt + ttlMs * 0.8) {
          lost.abort(new Error('refresh lock lost'));
          return;
        }
      }
    })();
    try {
      return await work(lost.signal);
    } finally {
      stop.abort();
      await renewals;
    }
  }

  /** Whether this owner holds the lock now, as the API server says (checked before writing). */
  async isHeld(namespace: string, connectionName: string): Promise<boolean> {
    const state = await this.leases.get(namespace, RefreshLock.leaseName(connectionName));
    return state !== undefined && state.holder === this.holder && !this.leases.isExpired(state);
  }

  async release(namespace: string, connectionName: string): Promise<void> {
    await this.leases.release(namespace, RefreshLock.leaseName(connectionName), this.holder);
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
