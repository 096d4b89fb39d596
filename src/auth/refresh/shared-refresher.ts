import type { AppContext } from '../../context/app-context.js';
import { ConnectionEvents } from '../../k8s/events.js';
import { Leases } from '../../k8s/leases.js';
import type { KubeStore } from '../../k8s/store.js';
import { appInstallationStrategy } from '../app-installation.js';
import { customAppStrategy } from '../custom-app-refresh.js';
import { jwtMintingStrategy } from '../jwt-minting.js';
import { appStoreTokenStrategy } from '../app-store-token.js';
import { billSessionStrategy } from '../bill-session.js';
import { twoStepStrategy } from '../two-step.js';
import { RefreshLock } from './lock.js';
import { TokenRefresher } from './token-refresher.js';

/** Seconds a refresh lock is held at most (a crashed holder blocks the others this long). */
export const REFRESH_LOCK_TTL_SECONDS = 30;

const perStore = new WeakMap<KubeStore, TokenRefresher>();

/**
 * The process's one token refresher (per store), with every refresh strategy registered. The REST
 * API, the proxy and the controller all use it, so concurrent callers in one process share one
 * in-flight refresh; across processes and replicas the connection's refresh Lease serializes them.
 */
export function refresherFor(ctx: AppContext, lockTtlSeconds = REFRESH_LOCK_TTL_SECONDS): TokenRefresher {
  const existing = perStore.get(ctx.store);
  if (existing) return existing;
  const leases = new Leases(ctx.kc, () => ctx.clock.now());
  const refresher = new TokenRefresher({
    store: ctx.store,
    lock: new RefreshLock(leases, ctx.config.identity, lockTtlSeconds, () => ctx.clock.now()),
    events: new ConnectionEvents(ctx.kc, 'latchkey', () => ctx.clock.now()),
    oplog: ctx.oplog,
    config: ctx.config,
    logger: ctx.logger,
    clock: ctx.clock,
    fetch: ctx.fetch,
    metrics: ctx.metrics,
  });
  refresher.registerStrategy('APP', appInstallationStrategy);
  refresher.registerStrategy('JWT', jwtMintingStrategy);
  refresher.registerStrategy('TWO_STEP', twoStepStrategy);
  refresher.registerStrategy('BILL', billSessionStrategy);
  refresher.registerStrategy('APP_STORE', appStoreTokenStrategy);
  refresher.registerStrategy('CUSTOM', customAppStrategy);
  perStore.set(ctx.store, refresher);
  return refresher;
}
