import type { ConnectionUpkeep } from '../k8s/store.js';
import type { Logger } from '../platform/log.js';

export interface SweeperOptions {
  connectionUpkeep: Pick<ConnectionUpkeep, 'sweepIncompleteConnections'>;
  logger: Logger;
  /** How often to sweep. */
  intervalMs?: number;
  /** Connections younger than this are creations in flight and left alone. */
  olderThanMs?: number;
  now?: () => number;
}

/**
 * Periodically removes Connections whose credentials Secret was never written (their creator died
 * between the two writes). Runs only on the leader.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly opts: SweeperOptions) {}

  start(): void {
    if (this.timer) return;
    const interval = this.opts.intervalMs ?? 60_000;
    this.timer = setInterval(() => void this.sweepOnce(), interval);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One sweep (skipped when the previous one is still running); returns what was removed. */
  async sweepOnce(): Promise<string[]> {
    if (this.running) return [];
    let removed: string[] = [];
    this.running = (async () => {
      try {
        removed = await this.opts.connectionUpkeep.sweepIncompleteConnections(
          this.opts.olderThanMs ?? 5 * 60_000,
          (this.opts.now ?? Date.now)(),
        );
        if (removed.length) this.opts.logger.info({ removed: removed.length }, 'removed unfinished connections');
      } catch (err) {
        this.opts.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'sweep failed; trying again later');
      }
    })();
    await this.running;
    this.running = undefined;
    return removed;
  }
}
