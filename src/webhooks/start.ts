import type { AppContext } from '../context/app-context.js';
import { WebhookOutbox } from '../k8s/webhook-outbox.js';
import { WebhookDispatcher } from './dispatcher.js';

/** Starts this replica's webhook dispatcher; returns its stop function. */
export function startWebhookDelivery(ctx: AppContext): () => Promise<void> {
  const dispatcher = new WebhookDispatcher({
    outbox: new WebhookOutbox(ctx.kc),
    catalog: ctx.catalog,
    fetch: ctx.fetch,
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: ctx.metrics,
    config: ctx.config,
    identity: ctx.config.identity,
    oplog: ctx.oplog,
  });
  dispatcher.start();
  return () => dispatcher.stop();
}
