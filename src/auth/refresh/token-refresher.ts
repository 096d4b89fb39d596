import { fitCredentials } from '../../domain/credentials.js';
import type { Clock } from '../../domain/clock.js';
import {
  CREDENTIALS_ERROR,
  mergeCredentials,
  newRefreshFailure,
  statusAfterNewCredentials,
  statusAfterRefreshFailure,
} from '../../domain/connection-state.js';
import { isAboutToExpire, type RefreshSettings } from '../../domain/refresh-margin.js';
import { floorUntil, isShortLived, lastRefreshOf, type FloorSettings, type RefreshRecord } from '../../domain/refresh-floor.js';
import { expiresAtOf } from '../../domain/credentials.js';
import type { ConnectionEvents } from '../../k8s/events.js';
import { INTEGRATION_SECRET_KEYS, type ConnectionError, type ConnectionStatus } from '../../k8s/resources.js';
import type { KubeStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import { hasCode } from '../../domain/errors.js';
import { apiMessage, OBJECT_NOT_FOUND } from '../../k8s/errors.js';
import type { Logger } from '../../platform/log.js';
import { Counter, metric, type Registry } from '../../platform/metrics.js';
import type { OperationLog } from '../../oplog/operation-log.js';
import { requestSecrets, secretValues } from '../../oplog/redact.js';
import { needsReauthorization } from './reauthorization.js';
import { CLIENT_FAULT_ANNOTATION, encodeClientFault } from './integration-fault.js';
import { RefreshLock, type HeldRefreshLock } from './lock.js';
import { classifyRefreshFailure, connectionNotFound, RefreshError } from './errors.js';
import type { RefreshStrategy } from './strategies.js';
import { ConnectionStatusWriter } from '../../domain/connection-status-writers.js';
import { backoffDelay } from '../../domain/backoff.js';

// The refresher's parts live in their own modules; importers of this one keep finding them here.
export * from './errors.js';
export * from '../../domain/refresh-margin.js';
export * from './strategies.js';

/**
 * Why a refresh runs; `request`: a person asked for it (`kubectl latchkey refresh`, src/controller/refresh-requests.ts);
 * `binding`: a CredentialBinding found the token due within its own margin.
 */
export type RefreshReason = 'fetch' | 'schedule' | 'proxy' | 'unauthorized' | 'request' | 'binding';

/** Credentials a provider issued whose write failed: kept in memory, and written by the refresher on its own. */
interface KeptCredentials {
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
}

/** The first and the longest wait before kept credentials are written again (well within the refresh Lease's TTL, which each attempt renews). */
/** Kept credentials written again after 2, 4, then 8 s (and every 8 s after). */
const KEPT_RETRY_BACKOFF = { baseMs: 2_000, maxMs: 8_000 };
/** A failed credentials write retried after 200 ms, 400 ms, … up to 2 s, with the Lease held. */
const WRITE_RETRY_BACKOFF = { baseMs: 200, maxMs: 2_000 };

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

/** How a refresh under the lock is reported: see {@link EnsureFreshOptions.onAnswered}; `recordStatus` writes the status even for a scheduled refresh. */
interface HeldRefreshOptions {
  onAnswered?: () => void;
  recordStatus?: boolean;
}

export interface TokenRefresherDeps {
  store: KubeStore;
  /** How each credentials type is renewed, by type (src/modes/registry.ts, `refreshStrategies`); other types are not. */
  strategies: ReadonlyMap<string, RefreshStrategy>;
  lock: RefreshLock;
  events: ConnectionEvents;
  /** The durable operation log; its entry ID becomes the failure's `log_id` (the Event is still recorded). */
  oplog?: OperationLog;
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
}

/**
 * Keeps access tokens fresh. A refresh happens once cluster-wide however many callers ask at the
 * same moment: callers in this process share one promise per connection, and across replicas the
 * connection's {@link RefreshLock} (a Lease) lets one through while the others wait for its result
 * on their watch of the credentials Secret (no polling). The credentials come from the informer
 * cache: the Lease records the Secret version a refresh wrote, so a cache that has not seen it yet
 * waits instead of spending a spent refresh token, and the write is fenced on the token spent.
 * On the request path: create the Lease, call the provider, write the Secret; the status and the
 * Lease's release are written after the answer.
 */
export class TokenRefresher {
  private readonly inflight = new Map<string, Promise<StoredConnection>>();
  /** Keys of `inflight` refreshes that were forced: only those satisfy another forced caller that joins. */
  private readonly forcedInflight = new Set<string>();
  /** Credentials a provider issued whose write failed (by namespace/name), with the refresh token they replace. */
  private readonly unsaved = new Map<string, KeptCredentials>();
  /** This process's last refresh of each connection whose token lives shorter than the floor (the status trails it). */
  private readonly shortLived = new Map<string, RefreshRecord>();
  private readonly strategies: ReadonlyMap<string, RefreshStrategy>;
  private readonly logger: Logger;
  private readonly counter?: Counter<'provider' | 'reason' | 'result'>;

  constructor(private readonly deps: TokenRefresherDeps) {
    this.strategies = deps.strategies;
    this.logger = deps.logger.child({ component: 'refresh' });
    if (deps.metrics) {
      this.counter = metric(
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
    const conn = this.deps.store.getConnection(namespace, integration, connectionId);
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
    const { store } = this.deps;
    const conn =
      store.getConnection(namespace, integration, connectionId) ?? (await store.findConnection(namespace, integration, connectionId));
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
    const last = lastRefreshOf(conn.resource.status, conn.credentialsVersion, this.shortLived.get(key));
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
    const { store, lock, clock } = this.deps;
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
      const current = await store.findConnection(namespace, integration, connectionId);
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
        const version = await store.readCredentialsVersion(namespace, name).catch(async (err: unknown) => {
          await lock.release(taken.held).catch(() => undefined);
          throw err;
        });
        if (version === current.credentialsVersion)
          return this.refreshHeld(namespace, current, strategy, opts.reason, taken.held, { onAnswered: opts.onAnswered });
        await lock.release(taken.held);
        if (version === undefined) throw connectionNotFound(integration, connectionId);
        // Nobody held the Lease: what this cache has not seen was written by no refresh this forced
        // request may count as its own (the controller's label, or one that ended before it arrived).
        if (opts.force) behind = version;
        if ((await store.findConnection(namespace, integration, connectionId))?.credentialsVersion !== current.credentialsVersion) continue;
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
        await store.whenConnectionChanges(namespace, name, until - clock.now());
        const now = await store.findConnection(namespace, integration, connectionId);
        const changed =
          !now ||
          now.credentialsVersion !== current.credentialsVersion ||
          newRefreshFailure(now.resource.status, knownErrors) !== undefined;
        if (changed || clock.now() >= until) break;
      }
    }
  }

  /** Called with the lock held; the credentials come from the informer cache, fenced when written. */
  private async refreshHeld(
    namespace: string,
    conn: StoredConnection,
    strategy: RefreshStrategy,
    reason: RefreshReason,
    held: HeldRefreshLock,
    how: HeldRefreshOptions = {},
  ): Promise<StoredConnection> {
    const { lock } = this.deps;
    let written: string | undefined;
    let keepLock = false;
    try {
      const result = await this.refreshLocked(namespace, conn, strategy, reason, held, how);
      written = result.credentialsVersion;
      return result;
    } catch (err) {
      // Issued credentials not written yet: the Lease stays ours until it expires, so nobody spends the grant again meanwhile.
      keepLock = this.unsaved.has(`${namespace}/${conn.resource.metadata.name}`);
      throw err;
    } finally {
      const name = conn.resource.metadata.name;
      const warn = (err: unknown) => this.logger.warn({ namespace, name, err: apiMessage(err) }, 'could not release refresh lock');
      // Off the request path after a success; awaited after a failure, so a retry right after finds the Lease gone.
      const version = written;
      if (version !== undefined) afterAnswer(() => lock.release(held).catch(warn));
      else if (!keepLock) await lock.release(held).catch(warn);
    }
  }

  /** Called with the lock held. */
  private async refreshLocked(
    namespace: string,
    conn: StoredConnection,
    strategy: RefreshStrategy,
    reason: RefreshReason,
    held: HeldRefreshLock,
    { onAnswered = () => undefined, recordStatus = false }: HeldRefreshOptions = {},
  ): Promise<StoredConnection> {
    const { store, clock, lock } = this.deps;
    const name = conn.resource.metadata.name;
    const providerName = conn.resource.spec.provider;
    const key = `${namespace}/${name}`;
    // Credentials a provider already issued whose write failed last time: persist them, don't spend the grant again.
    // If the stored ones are already they (a failed attempt had been applied), persisting writes nothing and
    // records the refresh, which would otherwise go unrecorded.
    const unsaved = this.unsaved.get(key);
    if (unsaved && (unsaved.fence === fenceOf(conn.credentials) || fenceOf(unsaved.next) === fenceOf(conn.credentials))) {
      onAnswered();
      return lock.hold(held, () => this.persist(namespace, unsaved.conn, unsaved.next, providerName, reason, held, { recordStatus }));
    }
    this.unsaved.delete(key);
    const started = clock.now();
    // What the token requests carried: a provider that quotes them back must not put them in a failure.
    const sent: string[] = [];
    let next: StoredCredentials;
    try {
      const integration = store.getIntegration(namespace, conn.resource.spec.integration);
      const provider = store.getProvider(providerName);
      if (!integration || !provider) {
        throw new RefreshError(`integration ${conn.resource.spec.integration} or its provider ${providerName} no longer exists`, {
          permanent: true,
          code: 'integration_misconfigured',
        });
      }
      next = await lock.hold(held, async (lost) =>
        // Fitted before the write: credentials too large for their Secret fail here, classified, the stored ones kept.
        fitCredentials(
          await strategy.refresh({
            namespace,
            connection: conn,
            integration,
            provider,
            store,
            // The token call ends when the lock can no longer be kept: no other replica may overlap it.
            fetch: (url, init) => {
              sent.push(...requestSecrets(init));
              return this.deps.fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, lost]) : lost });
            },
            timeoutSeconds: this.deps.tokenTimeoutSeconds ?? 10,
            now: clock.now(),
          }),
        ),
      );
    } catch (err) {
      onAnswered();
      const failure = classifyRefreshFailure(err, clock.now(), [...sent, ...this.storedSecrets(namespace, conn)]);
      this.counter?.inc({ provider: providerName, reason, result: failure.permanent ? 'permanent_failure' : 'transient_failure' });
      if (failure.code === 'integration_misconfigured') await this.recordIntegrationFault(namespace, conn, failure);
      else await this.recordFailure(namespace, conn, failure, reason, clock.now() - started);
      throw failure;
    }
    onAnswered();
    // The provider may have rotated the refresh token: from here on the new credentials are the
    // only valid ones, so writing them comes before anything else that could fail.
    return lock.hold(held, () => this.persist(namespace, conn, next, providerName, reason, held, { recordStatus, startedAt: started }));
  }

  /**
   * Writes refreshed credentials, fenced on the refresh token that was spent: if the stored one is
   * no longer it (a reconnect or an import landed meanwhile), the newer credentials win and are
   * returned. The write is a compare-and-swap on the cached Secret's resourceVersion; a conflict
   * re-reads the Secret and checks the fence again. A failed write is retried (the Lease is kept
   * meanwhile); if it still fails, the credentials and the Lease are kept, and the credentials are
   * written a little later by this refresher on its own ({@link writeKept}), or by the next refresh of
   * this connection here if that comes first, instead of calling the provider again. The status that
   * follows from the new credentials is returned at once; it is written off the request path, or, for a
   * scheduled refresh, by the controller's connection reconciler together with the conditions.
   */
  private async persist(
    namespace: string,
    conn: StoredConnection,
    next: StoredCredentials,
    providerName: string,
    reason: RefreshReason,
    held: HeldRefreshLock,
    { recordStatus = false, startedAt = this.deps.clock.now() }: { recordStatus?: boolean; startedAt?: number } = {},
  ): Promise<StoredConnection> {
    const { store, clock, lock } = this.deps;
    const name = conn.resource.metadata.name;
    const key = `${namespace}/${name}`;
    const fence = fenceOf(conn.credentials);
    if (!lock.isHeld(held)) {
      // Another replica may hold the lock now; the fence below still keeps whatever it wrote.
      this.logger.warn({ namespace, connection: name }, 'refresh lock lost before writing; writing fenced on the spent refresh token');
    }
    let superseded = false;
    let written: { credentials: StoredCredentials; credentialsVersion: string } | undefined;
    const attempts = this.deps.writeAttempts ?? 5;
    for (let attempt = 1; !written; attempt++) {
      try {
        written = await store.updateCredentials(namespace, name, (cur) => {
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
          };
          this.unsaved.set(key, kept);
          this.writeKeptLater(key, kept);
          this.logger.error(
            { namespace, connection: name, err: apiMessage(err) },
            'refreshed credentials not written; kept for the next attempt',
          );
          throw new RefreshError('the refreshed credentials could not be stored; try again', {
            permanent: false,
            code: 'provider_unavailable',
            retryAfterMs: 1000,
          });
        }
        this.logger.warn({ namespace, connection: name, attempt, err: apiMessage(err) }, 'writing refreshed credentials failed; retrying');
        await sleep(backoffDelay(WRITE_RETRY_BACKOFF, attempt));
      }
    }
    this.unsaved.delete(key);
    const { credentials, credentialsVersion } = written;
    const cached = (await store.findConnectionByName(namespace, name))?.resource ?? conn.resource;
    if (superseded) {
      this.logger.info({ namespace, connection: name }, 'credentials changed during the refresh; the newer ones are kept');
      return { resource: cached, credentials, credentialsVersion };
    }
    const now = clock.now();
    const expiresAt = expiresAtOf(credentials)?.getTime();
    if (expiresAt !== undefined && isShortLived(expiresAt, now, this.floorMs)) this.shortLived.set(key, { at: now, credentialsVersion });
    else this.shortLived.delete(key);
    const status = (s: ConnectionStatus | undefined) => statusAfterNewCredentials(s, credentials, this.deps.config, now, 'refreshed');
    const writeStatus = () =>
      store
        .updateConnectionStatus(namespace, name, ConnectionStatusWriter.Refresher, (s) => status(s))
        .catch((err: unknown) =>
          this.logger.warn({ namespace, connection: name, err: apiMessage(err) }, 'could not record the refresh in status'),
        );
    // A scheduled refresh's status is written by the controller's connection reconciler, with the
    // conditions in the same write (the scheduler hands it the refresh): one status write per refresh.
    // Kept credentials written on their own have no scheduler to hand it to.
    if (reason !== 'schedule' || recordStatus) afterAnswer(writeStatus);
    const resource = { ...cached, status: status(cached.status) };
    this.counter?.inc({ provider: providerName, reason, result: 'success' });
    // A scheduled refresh that succeeded is not an operation log entry: it is the routine (24 a day per
    // hourly token), recorded in status.lastRefreshedAt and the refreshes metric, and its entry cost two
    // API calls (read and write the log's ConfigMap) of the six a refresh makes. Failures, and refreshes
    // a request caused (fetch, proxy, a provider's 401), are logged.
    if (reason !== 'schedule')
      this.oplogEntry(conn, reason, 'success', now - startedAt, [
        `Token refreshed (${reason}); expires ${resource.status.expiresAt ?? 'never'}`,
      ]);
    this.logger.info({ namespace, connection: name, provider: providerName, reason }, 'token refreshed');
    return { resource, credentials, credentialsVersion };
  }

  private writeKeptLater(key: string, kept: KeptCredentials): void {
    setTimeout(() => void this.writeKept(key, kept), backoffDelay(KEPT_RETRY_BACKOFF, kept.tries)).unref();
  }

  /**
   * Writes credentials kept in memory after their write failed, without waiting for the next refresh of
   * the connection: that may never come to this process. Its shard may move to another replica (a
   * replica joined or left), which waits for the refresh Lease this one keeps and then refreshes with the
   * stored refresh token, already spent: the provider revokes the grant. Each attempt takes the Lease
   * again (renewing it, so the others keep waiting) and writes as a refresh would, fenced on the spent
   * token; a failed write keeps them again, retried a little later. They are written only under the
   * Lease they were kept under: once another replica held it, that one may have spent the stored token
   * (or written newer credentials), and whatever comes next starts from the stored credentials.
   */
  private async writeKept(key: string, kept: KeptCredentials): Promise<void> {
    if (this.unsaved.get(key) !== kept) return; // written, kept again (with its own retry), or dropped
    if (this.inflight.has(key)) return this.writeKeptLater(key, kept); // a refresh of it runs: it writes them first
    const { namespace, conn } = kept;
    const name = conn.resource.metadata.name;
    const drop = (why: string) => {
      if (this.unsaved.get(key) === kept) this.unsaved.delete(key);
      this.logger.warn({ namespace, connection: name, why }, 'refreshed credentials not written; dropped');
    };
    const current = await this.deps.store.findConnectionIdentity(namespace, name);
    if (!current || current.metadata.uid !== conn.resource.metadata.uid) return drop('the connection was deleted');
    const strategy = this.strategies.get(conn.credentials.type);
    if (!strategy) return drop('no refresh strategy');
    const run = (async () => {
      const { lock } = this.deps;
      const taken = await lock.acquire(namespace, name, conn.resource.metadata.uid);
      if (!taken.held || !RefreshLock.sameTenure(kept.held, taken.held)) {
        if (taken.held) await lock.release(taken.held).catch(() => undefined);
        drop('another replica has held the refresh lock since');
        throw new RefreshError('another replica is refreshing this connection; try again', {
          permanent: false,
          code: 'refresh_in_progress',
          retryAfterMs: 1000,
        });
      }
      return this.refreshHeld(namespace, conn, strategy, kept.reason, taken.held, { recordStatus: true });
    })().finally(() => this.inflight.delete(key));
    this.inflight.set(key, run);
    try {
      await run;
    } catch {
      // Kept again (with its own retry), dropped, or the Lease could not be read: in the last case, try again later.
      if (this.unsaved.get(key) === kept) this.writeKeptLater(key, kept);
    }
  }

  /**
   * The provider refused the Integration's client: recorded on the Integration (its reconciler turns
   * it into a condition), not on the connection, whose grant is not at fault.
   */
  private async recordIntegrationFault(namespace: string, conn: StoredConnection, failure: RefreshError): Promise<void> {
    const name = conn.resource.spec.integration;
    const integration = this.deps.store.getIntegration(namespace, name);
    this.logger.warn(
      { namespace, integration: name, code: failure.code, providerError: failure.providerError },
      'token refresh refused because of the integration',
    );
    if (!integration) return;
    const secretRef = integration.spec.clientSecretRef?.name;
    const secretVersion = secretRef ? (this.deps.store.getReferencedSecret(namespace, secretRef)?.metadata?.resourceVersion ?? '') : '';
    const detail = failure.message.slice(0, 300);
    await this.deps.store
      .annotateIntegration(
        namespace,
        name,
        CLIENT_FAULT_ANNOTATION,
        encodeClientFault({
          generation: integration.metadata.generation ?? 0,
          secretVersion,
          detail,
          at: new Date(this.deps.clock.now()).toISOString(),
        }),
      )
      .catch((err: unknown) =>
        this.logger.warn({ namespace, integration: name, err: apiMessage(err) }, 'could not record the integration fault'),
      );
  }

  /**
   * Secrets a refresh failure's text must not carry besides what the requests sent: the stored
   * credentials' secret fields and the Integration's client secret and private key.
   */
  private storedSecrets(namespace: string, conn: StoredConnection): string[] {
    const { store } = this.deps;
    const ref = store.getIntegration(namespace, conn.resource.spec.integration)?.spec.clientSecretRef?.name;
    const fromSecret = ref
      ? [INTEGRATION_SECRET_KEYS.clientSecret, INTEGRATION_SECRET_KEYS.privateKey].map((k) => store.readSecretValue(namespace, ref, k))
      : [];
    return [...secretValues(conn.credentials), ...fromSecret.filter((v): v is string => Boolean(v))];
  }

  /** One operation log entry about this refresh; the credentials' own values are redacted wherever they appear. */
  private oplogEntry(
    conn: StoredConnection,
    reason: RefreshReason,
    outcome: 'success' | 'failure',
    durationMs: number,
    messages: string[],
  ): string | undefined {
    const { resource, credentials } = conn;
    return this.deps.oplog?.record({
      namespace: resource.metadata.namespace!,
      operation: 'refresh',
      step: reason,
      outcome,
      integration: resource.spec.integration,
      connectionId: resource.spec.connectionId,
      connection: { name: resource.metadata.name, uid: resource.metadata.uid },
      endUserId: resource.spec.endUser?.id,
      durationMs,
      messages,
      secrets: secretValues(credentials),
    });
  }

  /** Records an Event and a status error; the stored credentials are left as they were. */
  private async recordFailure(
    namespace: string,
    conn: StoredConnection,
    failure: RefreshError,
    reason: RefreshReason,
    durationMs: number,
  ): Promise<void> {
    const name = conn.resource.metadata.name;
    const message = `Token refresh failed (${failure.permanent ? 'reauthorization required' : 'provider unavailable'}): ${failure.message}`;
    const p = failure.providerError;
    const answer = p
      ? `Provider answered${p.status ? ` HTTP ${p.status}` : ''}: ${[p.error, p.description].filter(Boolean).join(' - ')}`
      : undefined;
    const oplogId = this.oplogEntry(conn, reason, 'failure', durationMs, [message, ...(answer ? [answer] : [])]);
    // The ID goes into status and the answer: stored first, so whoever follows it at once finds it.
    if (oplogId) await this.deps.oplog?.whenStored(oplogId);
    this.logger.warn(
      { namespace, connection: name, code: failure.code, permanent: failure.permanent, providerError: failure.providerError },
      'token refresh failed',
    );
    try {
      const eventName = await this.deps.events.record(conn.resource, {
        type: 'Warning',
        reason: 'RefreshFailed',
        action: 'Refresh',
        message: oplogId ? `${message} (log_id: ${oplogId})` : message,
      });
      failure.logId = oplogId ?? eventName;
    } catch (err) {
      this.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record refresh failure event');
      if (!oplogId) return;
      failure.logId = oplogId;
    }
    const entry: ConnectionError = {
      type: CREDENTIALS_ERROR,
      logId: failure.logId,
      message: message.slice(0, 1024),
      occurredAt: new Date(this.deps.clock.now()).toISOString(),
      refreshFailure: failure.permanent ? 'permanent' : 'transient',
    };
    await this.deps.store
      .updateConnectionStatus(namespace, name, ConnectionStatusWriter.Refresher, (s) => statusAfterRefreshFailure(s, entry))
      .catch((err: unknown) =>
        this.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record refresh failure in status'),
      );
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Work the caller does not wait for, started once the current turn of the event loop is over: the
 * answer that the refreshed credentials complete is written to its socket first.
 */
function afterAnswer(work: () => Promise<unknown>): void {
  setImmediate(() => void work());
}

/** What identifies the grant a refresh spends: the refresh token, else the access token (client credentials, APP, JWT). */
function fenceOf(credentials: StoredCredentials): string {
  const c = credentials as Record<string, unknown>;
  return String(c.refresh_token ?? c.access_token ?? c.token ?? '');
}
