import type { Clock } from '../../domain/clock.js';
import { CREDENTIALS_ERROR, newRefreshFailure } from '../../domain/connection-state.js';
import { isAboutToExpire, type RefreshSettings } from '../../domain/refresh-margin.js';
import { floorUntil, lastRefreshOf, type FloorSettings } from '../../domain/refresh-floor.js';
import { expiresAtOf } from '../../domain/credentials.js';
import type { ConnectionError } from '../../k8s/resources.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import type { Logger } from '../../platform/log.js';
import type { OperationLog } from '../../oplog/operation-log.js';
import { Counter, metric, type Registry } from '../../platform/metrics.js';
import { needsReauthorization } from './reauthorization.js';
import type { RefreshLock } from './lock.js';
import { connectionNotFound, RefreshError } from './errors.js';
import type { RefreshStrategy } from './strategies.js';
import type { RefreshHooks, RefreshReason } from './refresh-hooks.js';
import { LockedRefresh } from './locked-refresh.js';

// The refresher's parts live in their own modules; importers of this one keep finding them here.
export * from './errors.js';
export * from '../../domain/refresh-margin.js';
export * from './strategies.js';
export type { RefreshHooks, RefreshReason, RefreshSucceeded, RefreshFailed } from './refresh-hooks.js';
export { refreshRecords } from './refresh-hooks.js';

export interface EnsureFreshOptions {
  /** Refresh even if the token is not about to expire. */
  force?: boolean;
  /** Overrides config.refreshMarginSeconds for deciding "about to expire". */
  marginSeconds?: number;
  reason: RefreshReason;
  /**
   * Called once the provider has answered this caller's refresh (or when the credentials to write need
   * no token call), before the credentials are written: the controller's scheduler gives its token-call
   * slot back then. Not called when the refresh joins one under way or finds nothing to do.
   */
  onAnswered?: () => void;
}

export interface TokenRefresherDeps {
  connections: ConnectionStore;
  catalog: CatalogStore;
  /** How each credentials type is renewed, by type (src/modes/registry.ts, `refreshStrategies`); other types are not. */
  strategies: ReadonlyMap<string, RefreshStrategy>;
  lock: RefreshLock;
  /** What a refresh's outcome records (status, the Integration flagged, operation log, Events): ./refresh-hooks.ts, `refreshRecords`. */
  hooks: RefreshHooks;
  /** The margin, and the refresh floor (none without `refreshFloorSeconds`). */
  config: RefreshSettings & Partial<FloorSettings>;
  logger: Logger;
  clock: Clock;
  fetch: typeof fetch;
  metrics?: Registry;
  /** Timeout of one token request (seconds). Default 10. */
  tokenTimeoutSeconds?: number;
  /** How long a request waits for another replica's refresh before giving up (ms). Default 30 s. */
  waitTimeoutMs?: number;
  /** Attempts at writing refreshed credentials before keeping them in memory. Default 5. */
  writeAttempts?: number;
  /** Where a strategy's requests besides the token call record their entries (a session step's login). */
  oplog?: OperationLog;
}

/**
 * Keeps access tokens fresh. A refresh happens once cluster-wide however many callers ask at the
 * same moment: callers in this process share one promise per connection, and across replicas the
 * connection's {@link RefreshLock} (a Lease) lets one through while the others wait for its result
 * on their watch of the credentials Secret (no polling). The credentials come from the informer
 * cache: the Lease records the Secret version a refresh wrote, so a cache that has not seen it yet
 * waits instead of spending a spent refresh token, and the write is fenced on the token spent.
 * On the request path: create the Lease, call the provider, write the Secret; the status and the
 * Lease's release are written after the answer, by the hooks ({@link TokenRefresherDeps.hooks}).
 */
export class TokenRefresher {
  private readonly inflight = new Map<string, Promise<StoredConnection>>();
  /** Keys of `inflight` refreshes that were forced: only those satisfy another forced caller that joins. */
  private readonly forcedInflight = new Set<string>();
  private readonly strategies: ReadonlyMap<string, RefreshStrategy>;
  /** The refresh with the Lease held: the token call, its outcome, the credentials written (or kept). */
  private readonly locked: LockedRefresh;

  constructor(private readonly deps: TokenRefresherDeps) {
    this.strategies = deps.strategies;
    const logger = deps.logger.child({ component: 'refresh' });
    let counter: Counter<'provider' | 'reason' | 'result'> | undefined;
    if (deps.metrics) {
      counter = metric(
        deps.metrics,
        'latchkey_token_refreshes_total',
        (registers) =>
          new Counter({
            name: 'latchkey_token_refreshes_total',
            help: 'Token refreshes attempted against providers, by provider, reason and result.',
            labelNames: ['provider', 'reason', 'result'] as const,
            registers,
          }),
      );
    }
    this.locked = new LockedRefresh({ ...deps, logger, counter, inflight: this.inflight });
  }

  /** The cluster-wide lock this refresher takes (its Lease is removed with the connection). */
  get lock(): RefreshLock {
    return this.deps.lock;
  }

  /** Whether these credentials are renewed before they expire (by the controller), not only when used. */
  renewsAhead(credentials: StoredCredentials): boolean {
    const strategy = this.strategies.get(credentials.type);
    return strategy !== undefined && strategy.renewAhead !== false && strategy.canRefresh(credentials);
  }

  /** Whether credentials of this type are ever refreshed. */
  isRefreshable(credentials: StoredCredentials): boolean {
    return this.strategies.get(credentials.type)?.canRefresh(credentials) ?? false;
  }

  /**
   * The connection as this process holds it in memory, when it may be answered as it is (unforced):
   * nothing to refresh, or a token not about to expire. Undefined when it is not in memory or is due:
   * then {@link ensureFresh} decides. Synchronous, so that a fetch answered from memory waits on nothing.
   */
  freshInMemory(namespace: string, integration: string, connectionId: string): StoredConnection | undefined {
    const conn = this.deps.connections.getConnection(namespace, integration, connectionId);
    if (!conn) return undefined;
    const strategy = this.strategies.get(conn.credentials.type);
    if (!strategy || !strategy.canRefresh(conn.credentials)) return conn;
    return this.isStale(conn.credentials) ? undefined : conn;
  }

  /**
   * The stored connection, with its credentials refreshed first when they are about to expire (or
   * `force`). Throws {@link connectionNotFound}'s error or a classified {@link RefreshError}.
   */
  async ensureFresh(namespace: string, integration: string, connectionId: string, opts: EnsureFreshOptions): Promise<StoredConnection> {
    const { connections } = this.deps;
    const conn =
      connections.getConnection(namespace, integration, connectionId) ??
      (await connections.findConnection(namespace, integration, connectionId));
    if (!conn) throw connectionNotFound(integration, connectionId);
    const strategy = this.strategies.get(conn.credentials.type);
    if (!strategy || !strategy.canRefresh(conn.credentials)) return conn;
    if (!opts.force && !this.isStale(conn.credentials, opts.marginSeconds)) return conn;
    if (needsReauthorization(conn)) {
      // The provider refused these very credentials for good: asking again would only repeat the refusal.
      const last = [...(conn.resource.status?.errors ?? [])].reverse().find((e) => e.type === CREDENTIALS_ERROR);
      throw new RefreshError('the provider refused these credentials; the end user must authorize again', {
        permanent: true,
        code: 'reauthorization_required',
        logId: last?.logId,
      });
    }
    // A provider's token shorter than the floor, refreshed less than a floor ago: answered as it is (not
    // forced: a forced refresh is the caller's to pay, one token call per request, and counts for the floor).
    if (!opts.force && this.underFloor(conn, strategy)) return conn;
    const key = `${namespace}/${conn.resource.metadata.name}`;
    const running = this.inflight.get(key);
    if (running) {
      if (!opts.force || this.forcedInflight.has(key)) return running;
      // An unforced refresh may end without a token call (fresh after all): then this one makes its own.
      const joined = await running.catch(() => undefined);
      if (joined && JSON.stringify(joined.credentials) !== JSON.stringify(conn.credentials)) return joined;
      return this.ensureFresh(namespace, integration, connectionId, opts);
    }
    const promise = this.refreshOnce(namespace, conn, strategy, opts).finally(() => {
      this.inflight.delete(key);
      this.forcedInflight.delete(key);
    });
    this.inflight.set(key, promise);
    if (opts.force) this.forcedInflight.add(key);
    return promise;
  }

  /**
   * Whether the refresh floor holds the connection's next refresh back now (src/domain/refresh-floor.ts).
   * Not for tokens minted here when used (JWT, APP_STORE): their lifetime is the Provider's own setting,
   * and minting one calls no provider.
   */
  private underFloor(conn: StoredConnection, strategy: RefreshStrategy): boolean {
    if (strategy.renewAhead === false) return false;
    const key = `${conn.resource.metadata.namespace}/${conn.resource.metadata.name}`;
    const last = lastRefreshOf(conn.resource.status, conn.credentialsVersion, this.locked.credentials.lastShortLived(key));
    const until = floorUntil(expiresAtOf(conn.credentials)?.getTime(), last, this.floorMs);
    return until !== undefined && this.deps.clock.now() < until;
  }

  private get floorMs(): number {
    return (this.deps.config.refreshFloorSeconds ?? 0) * 1000;
  }

  private isStale(credentials: StoredCredentials, marginSeconds?: number): boolean {
    return isAboutToExpire(credentials, this.deps.clock.now(), this.deps.config, marginSeconds);
  }

  /**
   * Done by someone else. Unforced: the credentials Secret changed since `baseline` and they are fresh.
   * Forced: the credentials themselves changed (a refresh that answered after this request arrived, or
   * newer credentials imported meanwhile); a new Secret version alone is no refresh (the controller
   * labels a new Secret for its shard right after it is created).
   */
  private satisfied(current: StoredConnection, baseline: StoredConnection, opts: EnsureFreshOptions): boolean {
    if (current.credentialsVersion === baseline.credentialsVersion) return false;
    if (opts.force) return JSON.stringify(current.credentials) !== JSON.stringify(baseline.credentials);
    return !this.isStale(current.credentials, opts.marginSeconds);
  }

  private async refreshOnce(
    namespace: string,
    observed: StoredConnection,
    strategy: RefreshStrategy,
    opts: EnsureFreshOptions,
  ): Promise<StoredConnection> {
    const { connections, lock, clock } = this.deps;
    const name = observed.resource.metadata.name;
    const { integration, connectionId } = observed.resource.spec;
    const knownErrors = new Set((observed.resource.status?.errors ?? []).map((e) => e.logId));
    const deadline = clock.now() + (this.deps.waitTimeoutMs ?? 30_000);
    // What a refresh by someone else must have changed (see `satisfied`); a forced refresh moves it to a
    // Secret version the cache had not seen when the Lease was free (`behind`), once the cache has it.
    let baseline = observed;
    let behind: string | undefined;

    for (;;) {
      // The informer cache first; once the lock is held, the Secret is read to see whether it is behind.
      const current = await connections.findConnection(namespace, integration, connectionId);
      if (!current) throw connectionNotFound(integration, connectionId);
      if (behind !== undefined && current.credentialsVersion === behind) [baseline, behind] = [current, undefined];
      if (behind === undefined && this.satisfied(current, baseline, opts)) return current;
      // Refreshed elsewhere meanwhile into a token shorter than the floor: it is the one to use.
      if (!opts.force && this.underFloor(current, strategy)) return current;
      const failure = newRefreshFailure(current.resource.status, knownErrors);
      if (failure) throw failedElsewhere(failure);
      if (!strategy.canRefresh(current.credentials)) return current;
      const taken = await lock.acquire(namespace, name, current.resource.metadata.uid);
      let waitUntil: number;
      if (taken.held) {
        // The last holder may have written credentials this cache has not seen yet (its watch trails):
        // their refresh token is the only live one. One read tells; a newer Secret goes into the cache
        // and the loop looks again (usually it is fresh now: no refresh).
        const version = await connections.readCredentialsVersion(namespace, name).catch(async (err: unknown) => {
          await lock.release(taken.held).catch(() => undefined);
          throw err;
        });
        if (version === current.credentialsVersion)
          return this.locked.run(namespace, current, strategy, opts.reason, taken.held, { onAnswered: opts.onAnswered });
        await lock.release(taken.held);
        if (version === undefined) throw connectionNotFound(integration, connectionId);
        // Nobody held the Lease: what this cache has not seen was written by no refresh this forced
        // request may count as its own (the controller's label, or one that ended before it arrived).
        if (opts.force) behind = version;
        if ((await connections.findConnection(namespace, integration, connectionId))?.credentialsVersion !== current.credentialsVersion)
          continue;
        waitUntil = clock.now() + 1000; // a second for the watch to bring it
      } else waitUntil = taken.waitUntil; // until the holder's Lease could expire
      // Another replica holds the lock, or wrote credentials this cache would not take (the Secret is
      // labelled for another shard now): the watch brings the result. Wait for a change of the
      // Connection or its Secret, at most until the Lease could expire (a second, after a read); then
      // try again.
      if (clock.now() >= deadline) {
        throw new RefreshError('another replica is refreshing this connection and has not finished; try again', {
          permanent: false,
          code: 'refresh_in_progress',
          retryAfterMs: 1000,
        });
      }
      const until = Math.min(deadline, Math.max(waitUntil, clock.now() + 50));
      for (;;) {
        await connections.whenConnectionChanges(namespace, name, until - clock.now());
        const now = await connections.findConnection(namespace, integration, connectionId);
        const changed =
          !now ||
          now.credentialsVersion !== current.credentialsVersion ||
          newRefreshFailure(now.resource.status, knownErrors) !== undefined;
        if (changed || clock.now() >= until) break;
      }
    }
  }
}

/** A failure recorded by the replica that held the lock, as seen by one that waited for it. */
function failedElsewhere(e: ConnectionError): RefreshError {
  const permanent = e.refreshFailure === 'permanent';
  return new RefreshError(e.message ?? 'token refresh failed', {
    permanent,
    code: permanent ? 'reauthorization_required' : 'provider_unavailable',
    logId: e.logId,
  });
}
