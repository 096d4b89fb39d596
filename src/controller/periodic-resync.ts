/**
 * The controller's periodic resync (missed events, time-based conditions): every owned connection
 * queued again each interval, but only once the queue has emptied. A resync while keys are still
 * queued (a start-up wave longer than the interval, the last resync) would reconcile again those
 * already done: at 100,000 connections, a 5-minute resync kept the first wave's queues full for 11
 * minutes (docs/benchmarks.md, "Scale: memory and start-up", notes of 2026-11-26, morning).
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
