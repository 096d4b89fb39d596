import type { AppContext } from '../context/app-context.js';
import { FlowRecords } from '../k8s/flow-records.js';

/**
 * Removes the single-use markers and OAuth 1.0a request-token Secrets of flows whose session has
 * expired (after that the sealed state is refused anyway). Every replica may run it; it is idempotent.
 */
export function startFlowRecordSweeper(ctx: AppContext, intervalMs = 5 * 60_000): () => Promise<void> {
  const records = new FlowRecords(ctx.kc);
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = records
      .sweepExpired(ctx.config.watchNamespaces, ctx.clock.now())
      .then((n) => {
        if (n) ctx.logger.debug({ removed: n }, 'expired authorization flow records removed');
      })
      .catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message }, 'sweeping flow records failed'))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
