import type { AcquireResult } from '../k8s/leases.js';
import type { Logger } from '../platform/log.js';
import { RepeatingTask } from './repeating-task.js';
import { errMessage, settleWithin } from './settle.js';

/** What the elector needs of {@link import('../k8s/leases.js').Leases}. */
export interface LeaseClient {
  tryAcquire(namespace: string, name: string, holder: string, durationSeconds: number): Promise<AcquireResult>;
  release(namespace: string, name: string, holder: string): Promise<void>;
}

export interface LeaderElectorOptions {
  leases: LeaseClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  /** How often the leader renews; a third of the lease duration by default. */
  renewIntervalMs?: number;
  /** How often a follower tries to take the lease; the renew interval by default. */
  retryIntervalMs?: number;
  now?: () => number;
  logger: Logger;
  onStartedLeading: () => void | Promise<void>;
  onStoppedLeading: () => void | Promise<void>;
}

/**
 * Leader election on a coordination.k8s.io Lease (compare-and-swap through {@link LeaseClient}).
 * A follower tries to take the lease every retry interval; the leader renews it every third of the
 * lease duration, and gives up leadership as soon as a renewal is refused (someone else holds it) or
 * when renewals keep failing until the lease would have expired: it never acts as leader on a lease
 * that others may already consider free.
 */
export class LeaderElector {
  private readonly opts: Required<Omit<LeaderElectorOptions, 'now'>> & { now: () => number };
  private leading = false;
  private lastRenewedAt = 0;
  private readonly loop = new RepeatingTask(
    () => this.attempt(),
    () => (this.leading ? this.opts.renewIntervalMs : this.opts.retryIntervalMs),
  );

  constructor(opts: LeaderElectorOptions) {
    const renew = opts.renewIntervalMs ?? Math.max(200, Math.floor((opts.leaseDurationSeconds * 1000) / 3));
    this.opts = { ...opts, renewIntervalMs: renew, retryIntervalMs: opts.retryIntervalMs ?? renew, now: opts.now ?? Date.now };
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Leading on a lease that nobody else can have taken yet: renewed less than the lease duration
   * (less one renew interval) ago. False after a pause (SIGSTOP, a long GC) until the next renewal
   * succeeds, although `isLeader` still says true: the timers that were due run before the renewal.
   */
  get holdsValidLease(): boolean {
    return this.leading && this.opts.now() < this.renewalDeadline();
  }

  get identity(): string {
    return this.opts.identity;
  }

  start(): void {
    this.loop.start();
  }

  /**
   * Stops campaigning. With `release` (the default) a leader clears the lease so a follower takes over
   * at once; without it (a crash, in tests) the others wait for the lease to expire.
   */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    // A request to an API server that is going away can hang for its one-minute timeout: stop waiting
    // after a few seconds. Not releasing in time only makes a follower wait for the lease to expire.
    await this.loop.stop(STOP_WAIT_MS);
    if (this.leading) {
      await this.loseLeadership('stopping');
      if (opts.release ?? true) {
        const released = this.opts.leases.release(this.opts.namespace, this.opts.name, this.opts.identity).catch((err: unknown) => {
          this.opts.logger.warn({ err: errMessage(err) }, 'could not release the leader lease');
        });
        await settleWithin(released, STOP_WAIT_MS);
      }
    }
  }

  private async attempt(): Promise<void> {
    const { leases, namespace, name, identity, leaseDurationSeconds, logger } = this.opts;
    const startedAt = this.opts.now();
    let result: AcquireResult | undefined;
    try {
      result = await leases.tryAcquire(namespace, name, identity, leaseDurationSeconds);
    } catch (err) {
      logger.warn({ lease: `${namespace}/${name}`, err: errMessage(err) }, 'leader lease request failed');
    }
    if (!this.loop.isRunning) return;
    if (result?.acquired) {
      this.lastRenewedAt = startedAt;
      if (!this.leading) {
        this.leading = true;
        logger.info({ lease: `${namespace}/${name}`, identity }, 'became leader');
        await this.callback(this.opts.onStartedLeading, 'onStartedLeading');
      }
      return;
    }
    if (!this.leading) return;
    if (result && !result.acquired) {
      await this.loseLeadership(`lease held by ${result.lease?.holder ?? 'someone else'}`);
      return;
    }
    // The renewal failed (API server unreachable): keep leading only while the lease we hold is valid,
    // less one renew interval so that we stop before anyone else can take it.
    if (this.opts.now() >= this.renewalDeadline()) await this.loseLeadership('renewal failed until the lease deadline');
  }

  private renewalDeadline(): number {
    return this.lastRenewedAt + this.opts.leaseDurationSeconds * 1000 - this.opts.renewIntervalMs;
  }

  private async loseLeadership(why: string): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    this.opts.logger.warn({ lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity, why }, 'stopped leading');
    await this.callback(this.opts.onStoppedLeading, 'onStoppedLeading');
  }

  private async callback(cb: () => void | Promise<void>, what: string): Promise<void> {
    try {
      await cb();
    } catch (err) {
      this.opts.logger.error({ err: errMessage(err), callback: what }, 'leader election callback failed');
    }
  }
}

const STOP_WAIT_MS = 3000;
