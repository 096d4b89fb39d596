import type { Config } from '../../app/config.js';
import type { Clock } from '../../domain/clock.js';
import { expiresAtOf, lifetimeSecondsOf } from '../../domain/credentials.js';
import type { ConnectionEvents } from '../../k8s/events.js';
import { readConnectionFresh } from '../../k8s/fresh-reads.js';
import type { ConnectionError, ConnectionStatus } from '../../k8s/resources.js';
import type { KubeStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import type { Logger } from '../../app/log.js';
import { Counter, metric, type Registry } from '../../app/metrics.js';
import type { OperationLog } from '../../oplog/operation-log.js';
import { secretValues } from '../../oplog/redact.js';
import { needsReauthorization } from './reauthorization.js';
import type { RefreshLock } from './lock.js';
import { classifyRefreshFailure, ConnectionNotFoundError, RefreshError } from './errors.js';
import { isAboutToExpire, nextRefreshAt } from './margin.js';
import { clientCredentialsStrategy, oauth2RefreshStrategy, type RefreshStrategy } from './strategies.js';

// The refresher's parts live in their own modules; importers of this one keep finding them here.
export * from './errors.js';
export * from './margin.js';
export * from './strategies.js';

export type RefreshReason = 'fetch' | 'schedule' | 'proxy' | 'unauthorized';

export interface EnsureFreshOptions {
  /** Refresh even if the token is not about to expire. */
  force?: boolean;
  /** Overrides config.refreshMarginSeconds for deciding "about to expire". */
  marginSeconds?: number;
  reason: RefreshReason;
}

export interface TokenRefresherDeps {
  store: KubeStore;
  lock: RefreshLock;
  events: ConnectionEvents;
  /** The durable operation log; its entry ID becomes the failure's `log_id` (the Event is still recorded). */
  oplog?: OperationLog;
  config: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>;
  logger: Logger;
  clock: Clock;
  fetch: typeof fetch;
  metrics?: Registry;
  /** Timeout of one token request (seconds). Default 10. */
  tokenTimeoutSeconds?: number;
  /** How long a request waits for another replica's refresh before giving up (ms). Default 30 s. */
  waitTimeoutMs?: number;
  /** Poll interval while waiting for another replica (ms). Default 100. */
  pollIntervalMs?: number;
}

const MAX_ERRORS = 10;
const FAILED_MARK = { permanent: '(reauthorization required)', transient: '(provider unavailable)' } as const;

/**
 * Keeps access tokens fresh. A refresh happens once cluster-wide however many callers ask at the
 * same moment: callers in this process share one promise per connection, and across replicas the
 * connection's {@link RefreshLock} (a Lease) lets one through while the others watch the credentials
 * Secret for its result. After taking the lock the credentials are read again from the API server:
 * when another replica refreshed meanwhile, its result is used and the provider is not called.
 */
export class TokenRefresher {
  private readonly inflight = new Map<string, Promise<StoredConnection>>();
  private readonly strategies = new Map<string, RefreshStrategy>([
    ['OAUTH2', oauth2RefreshStrategy],
    ['OAUTH2_CC', clientCredentialsStrategy],
  ]);
  private readonly logger: Logger;
  private readonly counter?: Counter<'provider' | 'reason' | 'result'>;

  constructor(private readonly deps: TokenRefresherDeps) {
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

  /** Adds or replaces how credentials of one type are renewed (e.g. APP installation tokens). */
  registerStrategy(credentialsType: string, strategy: RefreshStrategy): void {
    this.strategies.set(credentialsType, strategy);
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
   * The stored connection, with its credentials refreshed first when they are about to expire (or
   * `force`). Throws {@link ConnectionNotFoundError} or a classified {@link RefreshError}.
   */
  async ensureFresh(namespace: string, integration: string, connectionId: string, opts: EnsureFreshOptions): Promise<StoredConnection> {
    const conn = this.deps.store.getConnection(namespace, integration, connectionId);
    if (!conn) throw new ConnectionNotFoundError(namespace, integration, connectionId);
    const strategy = this.strategies.get(conn.credentials.type);
    if (!strategy || !strategy.canRefresh(conn.credentials)) return conn;
    if (!opts.force && !this.isStale(conn.credentials, opts.marginSeconds)) return conn;
    if (needsReauthorization(conn)) {
      // The provider refused these very credentials for good: asking again would only repeat the refusal.
      const last = [...(conn.resource.status?.errors ?? [])].reverse().find((e) => e.type === 'auth');
      throw new RefreshError('the provider refused these credentials; the end user must authorize again', {
        permanent: true,
        code: 'reauthorization_required',
        logId: last?.logId,
      });
    }
    const key = `${namespace}/${conn.resource.metadata.name}`;
    const running = this.inflight.get(key);
    if (running) return running;
    const promise = this.refreshOnce(namespace, conn, strategy, opts).finally(() => this.inflight.delete(key));
    this.inflight.set(key, promise);
    return promise;
  }

  private isStale(credentials: StoredCredentials, marginSeconds?: number): boolean {
    return isAboutToExpire(credentials, this.deps.clock.now(), this.deps.config, marginSeconds);
  }

  /** Done by someone else: the credentials changed since `observed` and (unless forced) are fresh. */
  private satisfied(current: StoredConnection, observedVersion: string, opts: EnsureFreshOptions): boolean {
    return current.credentialsVersion !== observedVersion && (opts.force || !this.isStale(current.credentials, opts.marginSeconds));
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
    const poll = this.deps.pollIntervalMs ?? 100;

    for (;;) {
      if (await lock.tryAcquire(namespace, name, observed.resource.metadata.uid)) {
        try {
          const fresh = await readConnectionFresh(store, namespace, name);
          if (!fresh || fresh.resource.spec.integration !== integration || fresh.resource.spec.connectionId !== connectionId) {
            throw new ConnectionNotFoundError(namespace, integration, connectionId);
          }
          if (this.satisfied(fresh, observed.credentialsVersion, opts)) return fresh;
          if (!strategy.canRefresh(fresh.credentials)) return fresh;
          return await this.refreshLocked(namespace, fresh, strategy, opts.reason);
        } finally {
          await lock
            .release(namespace, name)
            .catch((err: unknown) => this.logger.warn({ namespace, name, err: String(err) }, 'could not release refresh lock'));
        }
      }
      // Another replica holds the lock: watch our cache for its result, then try the lock again.
      const until = Math.min(deadline, clock.now() + 1000);
      while (clock.now() < until) {
        await sleep(poll);
        const current = store.getConnection(namespace, integration, connectionId);
        if (!current) throw new ConnectionNotFoundError(namespace, integration, connectionId);
        if (this.satisfied(current, observed.credentialsVersion, opts)) return current;
        const failure = (current.resource.status?.errors ?? []).find(
          (e) => !knownErrors.has(e.logId) && e.message?.includes('Token refresh failed'),
        );
        if (failure) throw failedElsewhere(failure);
      }
      if (clock.now() >= deadline) {
        throw new RefreshError('another replica is refreshing this connection and has not finished; try again', {
          permanent: false,
          code: 'refresh_in_progress',
          retryAfterMs: 1000,
        });
      }
    }
  }

  /** Called with the lock held and the credentials just read from the API server. */
  private async refreshLocked(
    namespace: string,
    conn: StoredConnection,
    strategy: RefreshStrategy,
    reason: RefreshReason,
  ): Promise<StoredConnection> {
    const { store, clock } = this.deps;
    const name = conn.resource.metadata.name;
    const providerName = conn.resource.spec.provider;
    const started = clock.now();
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
      next = await strategy.refresh({
        namespace,
        connection: conn,
        integration,
        provider,
        store,
        fetch: this.deps.fetch,
        timeoutSeconds: this.deps.tokenTimeoutSeconds ?? 10,
        now: clock.now(),
      });
    } catch (err) {
      const failure = classifyRefreshFailure(err, clock.now());
      this.counter?.inc({ provider: providerName, reason, result: failure.permanent ? 'permanent_failure' : 'transient_failure' });
      await this.recordFailure(namespace, conn, failure, reason, clock.now() - started);
      throw failure;
    }
    // Written with compare-and-swap; while the lock is held only an import could write in between.
    const { credentials, credentialsVersion } = await store.updateCredentials(namespace, name, (cur) => ({
      ...next,
      ...(next.type === cur.type && next.refresh_token === undefined && cur.refresh_token !== undefined
        ? { refresh_token: cur.refresh_token }
        : {}),
    }));
    const now = clock.now();
    const expiresAt = expiresAtOf(credentials);
    const resource = await store.updateConnectionStatus(namespace, name, (s): ConnectionStatus => ({
      ...s,
      expiresAt: expiresAt?.toISOString(),
      nextRefreshAt: expiresAt ? nextRefreshAt(expiresAt, lifetimeSecondsOf(credentials), this.deps.config).toISOString() : undefined,
      lastRefreshedAt: new Date(now).toISOString(),
      refreshAttempts: 0,
      updatedAt: new Date(now).toISOString(),
      errors: (s.errors ?? []).filter((e) => e.type !== 'auth'),
    }));
    this.counter?.inc({ provider: providerName, reason, result: 'success' });
    this.oplogEntry(conn, reason, 'success', now - started, [
      `Token refreshed (${reason}); expires ${expiresAt?.toISOString() ?? 'never'}`,
    ]);
    this.logger.info({ namespace, connection: name, provider: providerName, reason }, 'token refreshed');
    return { resource, credentials, credentialsVersion };
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
    const message = `Token refresh failed ${failure.permanent ? FAILED_MARK.permanent : FAILED_MARK.transient}: ${failure.message}`;
    const p = failure.providerError;
    const answer = p
      ? `Provider answered${p.status ? ` HTTP ${p.status}` : ''}: ${[p.error, p.description].filter(Boolean).join(' - ')}`
      : undefined;
    const oplogId = this.oplogEntry(conn, reason, 'failure', durationMs, [message, ...(answer ? [answer] : [])]);
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
      type: 'auth',
      logId: failure.logId,
      message: message.slice(0, 1024),
      occurredAt: new Date(this.deps.clock.now()).toISOString(),
    };
    await this.deps.store
      .updateConnectionStatus(namespace, name, (s) => ({
        ...s,
        refreshAttempts: (s.refreshAttempts ?? 0) + 1,
        errors: [...(s.errors ?? []), entry].slice(-MAX_ERRORS),
      }))
      .catch((err: unknown) =>
        this.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record refresh failure in status'),
      );
  }
}

/** A failure recorded by the replica that held the lock, as seen by one that waited for it. */
function failedElsewhere(e: ConnectionError): RefreshError {
  const permanent = e.message?.includes(FAILED_MARK.permanent) ?? false;
  return new RefreshError(e.message ?? 'token refresh failed', {
    permanent,
    code: permanent ? 'reauthorization_required' : 'provider_unavailable',
    logId: e.logId,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
