import type { Logger } from '../app/log.js';
import type { KubeStore } from '../k8s/store.js';

/** `last_fetched_at` is written at most this often per connection (a fetch's answer always carries its time). */
const WRITE_INTERVAL_MS = 60_000;

/**
 * Records when a connection's credentials were last fetched, throttled per connection so a busy
 * caller does not turn every read into a status write. A failed write is logged, never thrown.
 */
export function fetchRecorder(deps: { store: KubeStore; logger: Logger }): (namespace: string, name: string, at: number) => Promise<void> {
  const lastWrites = new Map<string, number>();
  return async (namespace, name, at) => {
    const key = `${namespace}/${name}`;
    if ((lastWrites.get(key) ?? 0) > at - WRITE_INTERVAL_MS) return;
    lastWrites.set(key, at);
    if (lastWrites.size > 10_000) lastWrites.clear();
    await deps.store
      .updateConnectionStatus(namespace, name, (s) => {
        const previous = s.lastFetchedAt ? Date.parse(s.lastFetchedAt) : 0;
        return previous > at - WRITE_INTERVAL_MS ? undefined : { ...s, lastFetchedAt: new Date(at).toISOString() };
      })
      .catch((err: unknown) => deps.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record last_fetched_at'));
  };
}
