/**
 * The controller's periodic resync (missed events): everything a session owns (its connections, or
 * the leader's Providers, Integrations and Environments) queued again each interval, but only once
 * its queue has emptied. A resync while keys are still queued (a start-up wave longer than the
 * interval, a slow last resync) would reconcile again those the queue has already done, behind the
 * ones it has not reached.
 */
export interface PeriodicResyncOptions {
  intervalMs: number;
  /** Keys waiting in the reconcile queue. */
  queued: () => number;
  resync: () => void;
}

export class PeriodicResync {
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly opts: PeriodicResyncOptions) {
    this.timer = setInterval(() => this.tick(), opts.intervalMs);
    this.timer.unref();
  }

  /** One interval's turn; true when it queued the resync (the timer runs it). */
  tick(): boolean {
    if (this.opts.queued() > 0) return false;
    this.opts.resync();
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
