/**
 * Who writes which field of a Connection's status, in the manner of conditions.ts: every write names
 * its writer (`KubeStore.updateConnectionStatus`), and a write that changes a field its writer does
 * not own is refused before it reaches the API server. Several writers share the fields that follow
 * the credentials (written wherever credentials are), each for its own event.
 */

export const ConnectionStatusWriter = {
  /** Create, import, replace credentials, re-authorize, a failed re-authorization (connections/service.ts). */
  Service: 'connection-service',
  /** A refresh on fetch or proxy, or kept credentials written later (auth/refresh/token-refresher.ts). */
  Refresher: 'token-refresher',
  /** A scheduled refresh that failed: its attempts, retry time and error (controller/refresh-scheduler.ts). */
  Scheduler: 'refresh-scheduler',
  /** The conditions, and a scheduled refresh's fields with them (controller/reconcilers/connection.ts). */
  Reconciler: 'connection-reconciler',
  /** `last_fetched_at`, batched (connections/last-fetched.ts). */
  LastFetched: 'last-fetched',
  /** `updated_at` after a metadata change (http/rest/routes/metadata.ts). */
  Metadata: 'metadata-route',
} as const;
export type ConnectionStatusWriter = (typeof ConnectionStatusWriter)[keyof typeof ConnectionStatusWriter];

const { Service, Refresher, Scheduler, Reconciler, LastFetched, Metadata } = ConnectionStatusWriter;

/** The fields of a Connection's status (src/k8s/resources.ts `ConnectionStatus`, checked there against this). */
export type ConnectionStatusField =
  | 'observedGeneration'
  | 'conditions'
  | 'expiresAt'
  | 'nextRefreshAt'
  | 'lastRefreshedAt'
  | 'refreshAttempts'
  | 'lastFetchedAt'
  | 'updatedAt'
  | 'errors';

/** Each field and the writers that may change it; nothing else does. */
export const CONNECTION_STATUS_OWNERS: Readonly<Record<ConnectionStatusField, readonly ConnectionStatusWriter[]>> = {
  observedGeneration: [Reconciler],
  conditions: [Reconciler],
  // New credentials: stored by the service, refreshed on use by the refresher, refreshed on schedule
  // (written with the conditions) by the reconciler; the scheduler moves the retry time of a failure.
  expiresAt: [Service, Refresher, Reconciler],
  nextRefreshAt: [Service, Refresher, Reconciler, Scheduler],
  lastRefreshedAt: [Refresher, Reconciler],
  refreshAttempts: [Service, Refresher, Reconciler, Scheduler],
  updatedAt: [Service, Refresher, Reconciler, Metadata],
  // Failures are appended by whoever saw them; new credentials clear the credential ones.
  errors: [Service, Refresher, Reconciler, Scheduler],
  lastFetchedAt: [LastFetched],
};

/** The fields `writer` changed from `before` to `after` without owning them (compared as JSON). */
export function fieldsNotOwned(writer: ConnectionStatusWriter, before: object, after: object): string[] {
  const was = before as Record<string, unknown>;
  const is = after as Record<string, unknown>;
  const stray: string[] = [];
  for (const field of new Set([...Object.keys(was), ...Object.keys(is)])) {
    if (JSON.stringify(was[field]) === JSON.stringify(is[field])) continue;
    const owners: readonly ConnectionStatusWriter[] | undefined = (
      CONNECTION_STATUS_OWNERS as Record<string, readonly ConnectionStatusWriter[]>
    )[field];
    if (!owners?.includes(writer)) stray.push(field);
  }
  return stray;
}
