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

  async release(namespace: string, connectionName: string): Promise<void> {
    await this.leases.release(namespace, RefreshLock.leaseName(connectionName), this.holder);
  }

  /** Removes the lock object (when its connection is deleted). */
  async remove(namespace: string, connectionName: string): Promise<void> {
    await this.leases.delete(namespace, RefreshLock.leaseName(connectionName));
  }
}
