import type { AppContext } from '../context/app-context.js';
import { RefreshLock } from '../auth/refresh/lock.js';
import { refreshRecords, TokenRefresher } from '../auth/refresh/token-refresher.js';
import { ConnectionEvents } from '../k8s/events.js';
import { Leases } from '../k8s/leases.js';
import type { StoreCaches } from '../k8s/store.js';
import { refreshStrategies } from '../modes/registry.js';

/** Seconds a refresh lock is held at most (a crashed holder blocks the others this long). */
export const REFRESH_LOCK_TTL_SECONDS = 30;

const perStore = new WeakMap<StoreCaches, TokenRefresher>();

/**
 * The process's one token refresher (per store), with every auth mode's refresh strategy. The REST
 * API, the proxy and the controller all use it, so concurrent callers in one process share one
 * in-flight refresh; across processes and replicas the connection's refresh Lease serializes them.
 */
export function refresherFor(ctx: AppContext, lockTtlSeconds = REFRESH_LOCK_TTL_SECONDS): TokenRefresher {
  const existing = perStore.get(ctx.caches);
  if (existing) return existing;
  const leases = new Leases(ctx.kc, () => ctx.clock.now());
  const refresher = new TokenRefresher({
    connections: ctx.connections,
    catalog: ctx.catalog,
    strategies: refreshStrategies(),
    lock: new RefreshLock(leases, ctx.config.identity, lockTtlSeconds, () => ctx.clock.now()),
    hooks: refreshRecords({
      connections: ctx.connections,
      catalog: ctx.catalog,
      catalogStatus: ctx.catalogStatus,
      events: new ConnectionEvents(ctx.kc, 'latchkey', () => ctx.clock.now()),
      oplog: ctx.oplog,
      logger: ctx.logger,
      clock: ctx.clock,
    }),
    config: ctx.config,
    logger: ctx.logger,
    clock: ctx.clock,
    fetch: ctx.fetch,
    metrics: ctx.metrics,
    oplog: ctx.oplog,
  });
  perStore.set(ctx.caches, refresher);
  return refresher;
}
