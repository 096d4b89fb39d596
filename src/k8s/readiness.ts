/**
 * What `/readyz` (the server's and the controller's) answers: `starting` until every cache has
 * listed once, `stale` while a watch is down (the API server restarting, or unreachable) and the
 * caches may miss changes, `ready` when they follow the API server again.
 */
export type Readiness = 'ready' | 'starting' | 'stale';

export function readiness(store: { hasSynced: boolean; isFresh: boolean }): Readiness {
  if (!store.hasSynced) return 'starting';
  return store.isFresh ? 'ready' : 'stale';
}
