import type { Clock } from '../../domain/clock.js';
import { expiresAtOf } from '../../domain/credentials.js';
import { mergeCredentials, statusAfterNewCredentials } from '../../domain/connection-state.js';
import type { RefreshSettings } from '../../domain/refresh-margin.js';
import { isShortLived, type FloorSettings, type RefreshRecord } from '../../domain/refresh-floor.js';
import { backoffDelay } from '../../domain/backoff.js';
import type { ConnectionResource, ConnectionStatus } from '../../k8s/resources.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import { hasCode } from '../../domain/errors.js';
import { OBJECT_NOT_FOUND } from '../../k8s/errors.js';
import { apiMessage } from '../../k8s/errors.js';
import type { Logger } from '../../platform/log.js';
import type { Counter } from '../../platform/metrics.js';
import type { HeldRefreshLock, RefreshLock } from './lock.js';
import { connectionNotFound, RefreshError } from './errors.js';
import type { RefreshHooks, RefreshReason } from './refresh-hooks.js';
import { changedFrom, changedProviderValues, type ProviderValueChange } from './provider-values.js';
import type { RefreshReport } from './strategies.js';

/** Credentials a provider issued whose write failed: kept in memory, and written by the refresher on its own. */
export interface KeptCredentials {
  namespace: string;
  /** The connection as the refresh found it (its credentials hold the refresh token that was spent). */
  conn: StoredConnection;
  /** The refresh token they replace: the write is fenced on it. */
  fence: string;
  next: StoredCredentials;
  reason: RefreshReason;
  /** The refresh Lease they were kept under: they are written only while nobody else has held it since. */
  held: HeldRefreshLock;
  /** Times they were kept in a row: the backoff's attempt before the refresher writes them again on its own. */
  tries: number;
  /** Values the refresh's other answers gave (a session login's), stored with them. */
  providerValues?: RefreshReport['providerValues'];
}

/** A failed credentials write retried after 200 ms, 400 ms, … up to 2 s, with the Lease held. */
const WRITE_RETRY_BACKOFF = { baseMs: 200, maxMs: 2_000 };

export interface RefreshedCredentialsDeps {
  connections: Pick<ConnectionStore, 'updateCredentials' | 'findConnectionByName'> & Partial<Pick<ConnectionStore, 'updateConnection'>>;
  /** The Provider of a refreshed connection: the values it takes from the token answer are stored again when they change. */
  catalog?: Pick<CatalogStore, 'getProvider'>;
  lock: RefreshLock;
  hooks: RefreshHooks;
  config: RefreshSettings & Partial<FloorSettings>;
  logger: Logger;
  clock: Clock;
  counter?: Counter<'provider' | 'reason' | 'result'>;
  /** Attempts at writing refreshed credentials before keeping them in memory. Default 5. */
  writeAttempts?: number;
  /** Told of credentials kept after their write failed (the refresher writes them later on its own). */
  onKept: (key: string, kept: KeptCredentials) => void;
}

/**
 * Writes refreshed credentials, fenced on the grant they spent; keeps those whose write failed (by
 * namespace/name) for the next attempt, and remembers this process's last refresh of each connection
 * whose token lives shorter than the refresh floor (the status trails it).
 */
export class RefreshedCredentials {
  private readonly unsaved = new Map<string, KeptCredentials>();
  private readonly shortLived = new Map<string, RefreshRecord>();

  constructor(private readonly deps: RefreshedCredentialsDeps) {}

  /** This process's last refresh of a short-lived token of the connection. */
  lastShortLived(key: string): RefreshRecord | undefined {
    return this.shortLived.get(key);
  }

  /** The credentials kept for the key (whatever the stored ones are now). */
  kept(key: string): KeptCredentials | undefined {
    return this.unsaved.get(key);
  }

  /**
   * Credentials kept for the key that follow the stored ones (the write failed, or was applied although
   * its answer was lost): those are to be written, not the grant spent again. Any others are dropped.
   */
  keptFor(key: string, stored: StoredCredentials): KeptCredentials | undefined {
    const unsaved = this.unsaved.get(key);
    if (unsaved && (unsaved.fence === fenceOf(stored) || fenceOf(unsaved.next) === fenceOf(stored))) return unsaved;
    this.unsaved.delete(key);
    return undefined;
  }

  /** Forgets the kept credentials, unless others were kept since. */
  drop(key: string, kept: KeptCredentials): void {
    if (this.unsaved.get(key) === kept) this.unsaved.delete(key);
  }

  /**
   * Writes refreshed credentials, fenced on the refresh token that was spent: if the stored one is
   * no longer it (a reconnect or an import landed meanwhile), the newer credentials win and are
   * returned. The write is a compare-and-swap on the cached Secret's resourceVersion; a conflict
   * re-reads the Secret and checks the fence again. A failed write is retried (the Lease is kept
   * meanwhile); if it still fails, the credentials and the Lease are kept, and the credentials are
   * written a little later by the refresher on its own, or by the next refresh of this connection
   * here if that comes first, instead of calling the provider again. The status that follows from the
   * new credentials is returned at once; it is written off the request path (the hooks), or, for a
   * scheduled refresh, by the controller's connection reconciler together with the conditions.
   */
  async write(
    namespace: string,
    conn: StoredConnection,
    next: StoredCredentials,
    reason: RefreshReason,
    held: HeldRefreshLock,
    {
      recordStatus = false,
      startedAt = this.deps.clock.now(),
      report = {},
    }: { recordStatus?: boolean; startedAt?: number; report?: RefreshReport } = {},
  ): Promise<StoredConnection> {
    const { connections, clock, lock, logger } = this.deps;
    const name = conn.resource.metadata.name;
    const key = `${namespace}/${name}`;
    const fence = fenceOf(conn.credentials);
    if (!lock.isHeld(held)) {
      // Another replica may hold the lock now; the fence below still keeps whatever it wrote.
      logger.warn({ namespace, connection: name }, 'refresh lock lost before writing; writing fenced on the spent refresh token');
    }
    let superseded = false;
    let written: { credentials: StoredCredentials; credentialsVersion: string } | undefined;
    const attempts = this.deps.writeAttempts ?? 5;
    for (let attempt = 1; !written; attempt++) {
      try {
        written = await connections.updateCredentials(namespace, name, (cur) => {
          // An earlier attempt may have been applied although its answer was lost (a 500 or a cut
          // after the write): the stored successor is ours, not a newer writer's.
          superseded = fenceOf(cur) !== fence && fenceOf(cur) !== fenceOf(next);
          return fenceOf(cur) === fence ? mergeCredentials(cur, next) : undefined;
        });
      } catch (err) {
        if (hasCode(err, OBJECT_NOT_FOUND)) throw connectionNotFound(conn.resource.spec.integration, conn.resource.spec.connectionId);
        if (attempt >= attempts) {
          const before = this.unsaved.get(key);
          const kept: KeptCredentials = {
            namespace,
            conn,
            fence,
            next,
            reason,
            held,
            tries: before?.next === next ? before.tries + 1 : 1,
            ...(report.providerValues ? { providerValues: report.providerValues } : {}),
          };
          this.unsaved.set(key, kept);
          this.deps.onKept(key, kept);
          logger.error(
            { namespace, connection: name, err: apiMessage(err) },
            'refreshed credentials not written; kept for the next attempt',
          );
          throw new RefreshError('the refreshed credentials could not be stored; try again', {
            permanent: false,
            code: 'provider_unavailable',
            retryAfterMs: 1000,
          });
        }
        logger.warn({ namespace, connection: name, attempt, err: apiMessage(err) }, 'writing refreshed credentials failed; retrying');
        await sleep(backoffDelay(WRITE_RETRY_BACKOFF, attempt));
      }
    }
    this.unsaved.delete(key);
    const { credentials, credentialsVersion } = written;
    let cached: ConnectionResource = (await connections.findConnectionByName(namespace, name))?.resource ?? conn.resource;
    if (superseded) {
      logger.info({ namespace, connection: name }, 'credentials changed during the refresh; the newer ones are kept');
      return { resource: cached, credentials, credentialsVersion };
    }
    cached = await this.storeProviderValues(namespace, conn, cached, credentials, report.providerValues);
    const now = clock.now();
    const expiresAt = expiresAtOf(credentials)?.getTime();
    const floorMs = (this.deps.config.refreshFloorSeconds ?? 0) * 1000;
    if (expiresAt !== undefined && isShortLived(expiresAt, now, floorMs)) this.shortLived.set(key, { at: now, credentialsVersion });
    else this.shortLived.delete(key);
    const status = (s: ConnectionStatus | undefined) => statusAfterNewCredentials(s, credentials, this.deps.config, now, 'refreshed');
    const resource = { ...cached, status: status(cached.status) };
    const provider = conn.resource.spec.provider;
    // Stored, and yet failed (a login after it): the caller reports the failure, with this status in the same write.
    if (report.failedAfterTokens) return { resource, credentials, credentialsVersion };
    this.deps.hooks.onRefreshSuccess({
      connection: conn,
      reason,
      durationMs: now - startedAt,
      status,
      expiresAt: resource.status.expiresAt,
      // A scheduled refresh's status is written by the controller's connection reconciler, with the
      // conditions in the same write (the scheduler hands it the refresh): one status write per refresh.
      // Kept credentials written on their own have no scheduler to hand it to.
      writeStatus: reason !== 'schedule' || recordStatus,
      // A scheduled refresh that succeeded is not an operation log entry: it is the routine (24 a day per
      // hourly token), recorded in status.lastRefreshedAt and the refreshes metric, and its entry cost two
      // API calls (read and write the log's ConfigMap) of the six a refresh makes. Failures, and refreshes
      // a request caused (fetch, proxy, a provider's 401), are logged.
      logged: reason !== 'schedule',
    });
    this.deps.counter?.inc({ provider, reason, result: 'success' });
    logger.info({ namespace, connection: name, provider, reason }, 'token refreshed');
    return { resource, credentials, credentialsVersion };
  }

  /**
   * Values the Provider takes from the token answer that the refresh answer changed (Pipedrive's
   * `api_domain`) are written to the Connection's spec (compare-and-swap, checked against what is stored
   * then) and recorded in the operation log. A failed write leaves the old values and is logged: the
   * credentials are stored already, and the next refresh tries again.
   */
  async storeProviderValues(
    namespace: string,
    conn: StoredConnection,
    cached: ConnectionResource,
    credentials: StoredCredentials,
    reported?: RefreshReport['providerValues'],
  ): Promise<ConnectionResource> {
    const { catalog, connections, logger } = this.deps;
    const provider = catalog?.getProvider(conn.resource.spec.provider);
    const answer = (credentials as { raw?: unknown }).raw;
    if (!provider || !connections.updateConnection) return cached;
    const raw = answer && typeof answer === 'object' ? (answer as Record<string, unknown>) : undefined;
    const changed = (config: Record<string, unknown> | undefined) => [
      ...changedProviderValues(provider.spec, raw, config),
      ...(reported ? changedFrom(provider.spec, reported.values, config, reported.source) : []),
    ];
    if (!changed(cached.spec.connectionConfig).length) return cached;
    const name = conn.resource.metadata.name;
    let changes: ProviderValueChange[] = [];
    try {
      const updated = await connections.updateConnection(namespace, name, (cur) => {
        changes = changed(cur.spec.connectionConfig);
        if (!changes.length) return undefined;
        const connectionConfig = { ...cur.spec.connectionConfig, ...Object.fromEntries(changes.map((c) => [c.key, c.to])) };
        return { ...cur, spec: { ...cur.spec, connectionConfig } };
      });
      if (changes.length) {
        this.deps.hooks.onProviderValuesChanged({ connection: conn, changes });
        logger.info(
          { namespace, connection: name, keys: changes.map((c) => c.key) },
          'connection configuration changed by a refresh answer',
        );
      }
      return { ...updated, status: cached.status };
    } catch (err) {
      if (hasCode(err, OBJECT_NOT_FOUND)) return cached;
      logger.warn({ namespace, connection: name, err: apiMessage(err) }, 'connection configuration from the refresh answer not written');
      return cached;
    }
  }
}

/** What identifies the grant a refresh spends: the refresh token, else the access token (client credentials, APP, JWT). */
export function fenceOf(credentials: StoredCredentials): string {
  const c = credentials as Record<string, unknown>;
  return String(c.refresh_token ?? c.access_token ?? c.token ?? '');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
