import type { AcquireResult, LeaseState } from '../k8s/leases.js';
import type { Logger } from '../platform/log.js';
import { LABELS } from '../k8s/resources.js';
import { RendezvousHash } from './rendezvous-hash.js';
import { RepeatingTask } from './repeating-task.js';
import { errMessage, settleWithin } from './settle.js';

/** What membership needs of {@link import('../k8s/leases.js').Leases}. */
export interface ShardLeaseClient {
  tryAcquire(
    namespace: string,
    name: string,
    holder: string,
    durationSeconds: number,
    labels?: Record<string, string>,
  ): Promise<AcquireResult>;
  list(namespace: string, labelSelector: string): Promise<Array<LeaseState & { name: string }>>;
  delete(namespace: string, name: string): Promise<void>;
  deleteIfUnchanged(namespace: string, name: string, resourceVersion: string): Promise<void>;
}

export interface ShardMembershipOptions {
  leases: ShardLeaseClient;
  namespace: string;
  identity: string;
  leaseDurationSeconds: number;
  /** How often the member renews its Lease and reads the others'; a third of the lease duration by default. */
  renewIntervalMs?: number;
  now?: () => number;
  logger: Logger;
  /** The members changed or this member became active or inactive: re-check what it owns. */
  onChange: () => void;
}

/** Name of a replica's membership Lease. */
export function shardLeaseName(identity: string): string {
  return `latchkey-shard-${identity}`.slice(0, 253);
}

/** How long after a member's Lease expiry the others read the Leases again (past the expiry, whatever rounding). */
const PEER_EXPIRY_SLACK_MS = 100;

/** Leases of members dead this long are deleted (pods of a Deployment get new names on every restart). */
const STALE_LEASE_FACTOR = 20;

/**
 * Shard membership on coordination.k8s.io Leases, one per controller replica
 * (`latchkey-shard-<identity>`, labelled `latchkey.dev/shard-member`): a member renews its own Lease
 * and reads everyone's every renew interval; the live members (held and not expired) form a
 * {@link RendezvousHash} gives each connection to one of them, and a member owns the connections it gets.
 *
 * No connection has two owners at once:
 * - A joining member owns nothing for one lease duration after its Lease was written. Every other
 *   member either read the Leases after that write (and gave up the joiner's share), or has not
 *   synced since and so stopped acting by then (below).
 * - A member acts only while its last complete sync (renewal and list) is younger than the lease
 *   duration less one renew interval: one that loses the API server stops before its Lease could
 *   expire and before anyone else takes its share (a timer enforces it even while a request hangs).
 * - A member that stops releases (deletes) its Lease only after it stopped acting.
 */
export class ShardMembership {
  private readonly renewMs: number;
  private readonly now: () => number;
  private assignment = new RendezvousHash([]);
  private joinedAt: number | undefined;
  private lastSyncedAt = 0;
  private activeNow = false;
  private readonly loop = new RepeatingTask(
    () => this.sync(),
    () => this.nextSyncDelay(),
  );
  private deadline: NodeJS.Timeout | undefined;
  /** When the first other live member's Lease expires unless renewed (ms since epoch), as last read. */
  private peerExpiry: number | undefined;

  constructor(private readonly opts: ShardMembershipOptions) {
    this.renewMs = opts.renewIntervalMs ?? Math.max(200, Math.floor((opts.leaseDurationSeconds * 1000) / 3));
    this.now = opts.now ?? Date.now;
  }

  get identity(): string {
    return this.opts.identity;
  }

  /**
   * Whether this member may act on its share now. Checked against the clock too, not only the
   * deadline timer: a process resumed after a pause (SIGSTOP, a long GC) runs its due timers in any
   * order, and a refresh must not start before the stale sync is noticed.
   */
  get active(): boolean {
    return this.activeNow && this.now() < this.lastSyncedAt + this.opts.leaseDurationSeconds * 1000 - this.renewMs;
  }

  /** Live members as last read (sorted). */
  get members(): readonly string[] {
    return this.assignment.members;
  }

  /** Whether this member owns `key` (namespace/name of a connection) and may act on it now. */
  owns(key: string): boolean {
    return this.active && this.assignment.ownerOf(key) === this.opts.identity;
  }

  /** The member the hashing gives `key` to (whether or not that member is active yet). */
  ownerOf(key: string): string | undefined {
    return this.assignment.ownerOf(key);
  }

  start(): void {
    this.loop.start();
  }

  /** Stops acting at once; with `release` (the default) deletes the Lease so the others take over without waiting. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    clearTimeout(this.deadline);
    await this.loop.stop(3000);
    this.setActive(false);
    this.joinedAt = undefined;
    if (opts.release ?? true) {
      const { leases, namespace, identity, logger } = this.opts;
      const released = leases.delete(namespace, shardLeaseName(identity)).catch((err: unknown) => {
        logger.warn({ err: errMessage(err) }, 'could not release the shard lease');
      });
      await settleWithin(released, 3000);
    }
  }

  /**
   * The renew interval, or sooner: just after the first other member's Lease would expire if it is
   * not renewed by then. A member that died is then out of the members (and its share taken) one lease
   * duration after its last renewal, not up to a renew interval later.
   */
  private nextSyncDelay(): number {
    if (this.peerExpiry === undefined) return this.renewMs;
    const untilExpiry = this.peerExpiry + PEER_EXPIRY_SLACK_MS - this.now();
    return Math.max(0, Math.min(this.renewMs, untilExpiry));
  }

  private async sync(): Promise<void> {
    const { leases, namespace, identity, leaseDurationSeconds, logger } = this.opts;
    const startedAt = this.now();
    const leaseMs = leaseDurationSeconds * 1000;
    try {
      const result = await leases.tryAcquire(namespace, shardLeaseName(identity), identity, leaseDurationSeconds, {
        [LABELS.shardMember]: 'true',
      });
      if (!result.acquired) throw new Error(`shard lease held by ${result.lease?.holder ?? 'someone else'}`);
      const all = await leases.list(namespace, `${LABELS.shardMember}=true`);
      if (!this.loop.isRunning) return;
      // Not synced for a lease duration: the others may have counted this member dead and taken its
      // share, so it joins again (and waits again) rather than carry on.
      if (this.joinedAt === undefined || startedAt > this.lastSyncedAt + leaseMs - this.renewMs) this.joinedAt = startedAt;
      this.lastSyncedAt = startedAt;
      const now = this.now();
      const liveLeases = all.filter((l) => l.holder && now <= l.renewedAt + l.durationSeconds * 1000);
      const live = liveLeases.map((l) => l.holder!);
      const peerExpiries = liveLeases.filter((l) => l.holder !== identity).map((l) => l.renewedAt + l.durationSeconds * 1000);
      this.peerExpiry = peerExpiries.length ? Math.min(...peerExpiries) : undefined;
      const assignment = new RendezvousHash([...live, identity]);
      const changed = !assignment.sameMembers(this.assignment);
      if (changed) logger.info({ members: assignment.members }, 'shard members changed');
      this.assignment = assignment;
      this.collectStale(all, now);
      this.evaluate(changed);
    } catch (err) {
      logger.warn({ err: errMessage(err) }, 'shard membership sync failed');
      this.evaluate(false);
    }
  }

  /** Active from one lease duration after joining, until the last sync is about to go stale. */
  private evaluate(membersChanged: boolean): void {
    const leaseMs = this.opts.leaseDurationSeconds * 1000;
    const now = this.now();
    const from = this.joinedAt === undefined ? Infinity : this.joinedAt + leaseMs;
    const until = this.lastSyncedAt + leaseMs - this.renewMs;
    const active = this.loop.isRunning && now >= from && now < until;
    clearTimeout(this.deadline);
    if (active) {
      this.deadline = setTimeout(() => this.evaluate(false), until - now);
      this.deadline.unref?.();
    }
    const flipped = active !== this.activeNow;
    if (flipped) this.opts.logger[active ? 'info' : 'warn']({ identity: this.opts.identity }, active ? 'shard active' : 'shard inactive');
    this.activeNow = active;
    if (flipped || (membersChanged && active)) this.notify();
  }

  private setActive(active: boolean): void {
    if (this.activeNow === active) return;
    this.activeNow = active;
    this.notify();
  }

  private notify(): void {
    try {
      this.opts.onChange();
    } catch (err) {
      this.opts.logger.error({ err: errMessage(err) }, 'shard change handler failed');
    }
  }

  private collectStale(all: Array<LeaseState & { name: string }>, now: number): void {
    for (const l of all) {
      if (now <= l.renewedAt + l.durationSeconds * 1000 * STALE_LEASE_FACTOR) continue;
      void this.opts.leases.deleteIfUnchanged(this.opts.namespace, l.name, l.resourceVersion).catch(() => undefined);
    }
  }
}
