/**
 * "The refresh owner": who may refresh tokens in a namespace, and the Lease that says so. Today that
 * is the controller's single leader Lease (src/controller/leader-election.ts); once refresh is sharded
 * it is a shard Lease per replica. Fault tests ask these helpers, so pointing them at shard Leases is
 * a change here alone.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Leases, type LeaseState } from '../../../src/k8s/leases.js';
import type { LatchkeyProcess, LogLine } from './latchkey-process.js';

/** The Lease that makes a replica the refresh owner (LATCHKEY_LEASE_NAME). */
export const REFRESH_OWNER_LEASE = 'latchkey-controller';

/** The log messages a replica writes when it becomes, and stops being, the refresh owner. */
export const BECAME_OWNER = 'became leader';
export const STOPPED_OWNING = 'stopped leading';

export async function refreshOwnerLease(kc: KubeConfig, namespace: string): Promise<LeaseState | undefined> {
  return new Leases(kc).get(namespace, REFRESH_OWNER_LEASE);
}

/** When a lease as last renewed expires (ms since epoch). */
export const leaseExpiry = (lease: LeaseState): number => lease.renewedAt + lease.durationSeconds * 1000;

export const becameOwner = (p: LatchkeyProcess): LogLine[] => p.logged(BECAME_OWNER);
export const stoppedOwning = (p: LatchkeyProcess): LogLine[] => p.logged(STOPPED_OWNING);
