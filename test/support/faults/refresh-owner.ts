/**
 * "The refresh owner": which controller replica may refresh a connection, and the Lease that says so.
 * Refresh is sharded (src/controller/shard-membership.ts): every replica holds a shard Lease
 * (`latchkey-shard-<identity>`) and owns the connections the hash ring gives it among live members.
 * When a replica dies, the others take its share once its shard Lease has expired. Fault tests ask
 * these helpers, so the Lease's name and the log lines that mark ownership live in one place.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { shardLeaseName } from '../../../src/controller/shard-membership.js';
import { Leases, type LeaseState } from '../../../src/k8s/leases.js';
import type { LatchkeyProcess, LogLine } from './latchkey-process.js';

/** The log lines a replica writes when its share becomes active, stops being active, and when the ring changes. */
export const SHARD_ACTIVE = 'shard active';
export const SHARD_INACTIVE = 'shard inactive';
export const MEMBERS_CHANGED = 'shard members changed';

/** The shard Lease of the replica `identity` (in the lease namespace, here the test namespace). */
export async function refreshOwnerLease(kc: KubeConfig, namespace: string, identity: string): Promise<LeaseState | undefined> {
  return new Leases(kc).get(namespace, shardLeaseName(identity));
}

/** When a lease as last renewed expires (ms since epoch). */
export const leaseExpiry = (lease: LeaseState): number => lease.renewedAt + lease.durationSeconds * 1000;

export const becameActive = (p: LatchkeyProcess): LogLine[] => p.logged(SHARD_ACTIVE);
export const stoppedOwning = (p: LatchkeyProcess): LogLine[] => p.logged(SHARD_INACTIVE);

/** The lines where `p` saw the ring without `gone`: from then on `p` owns what `gone` owned. */
export const tookOverFrom = (p: LatchkeyProcess, gone: string): LogLine[] =>
  p.logged(MEMBERS_CHANGED).filter((l) => Array.isArray(l.members) && !(l.members as string[]).includes(gone));
