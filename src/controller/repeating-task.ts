import { settleWithin } from './settle.js';

/**
 * A task run again and again until stopped, each run after the last one ended (a lease request that
 * hangs is never overlapped by the next); `nextDelayMs` is asked after each run. The timer does not
 * keep the process alive.
 */
export class RepeatingTask {
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly run: () => Promise<void>,
    private readonly nextDelayMs: () => number,
  ) {}

  /** From {@link start} until {@link stop}: a run that sees false stops acting on what it found. */
  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** No further run; waits for the one in progress, at most `waitMs`. */
  async stop(waitMs: number): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await settleWithin(this.last, waitMs);
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.last = this.run().finally(() => this.schedule(this.nextDelayMs()));
    }, delayMs);
    this.timer.unref?.();
  }
}
