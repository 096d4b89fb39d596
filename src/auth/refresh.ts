import * as oidc from 'openid-client';
import type { Config } from '../config.js';
import type { Clock } from '../context.js';
import { expiresAtOf, lifetimeSecondsOf, type OAuth2ClientCredentials, type OAuth2Credentials } from '../domain/credentials.js';
import { MissingTemplateValueError } from '../catalog/template.js';
import type { ConnectionEvents } from '../k8s/events.js';
import { readConnectionFresh } from '../k8s/fresh-reads.js';
import type { ConnectionError, ConnectionStatus, IntegrationResource, ProviderResource } from '../k8s/resources.js';
import type { KubeStore, StoredConnection, StoredCredentials } from '../k8s/store.js';
import type { Logger } from '../log.js';
import { Counter, metric, type Registry } from '../metrics.js';
import { oauth2Configuration, resolveClient, type ClientCredentials } from './oauth2-client.js';
import { needsReauthorization } from './reauthorization.js';
import type { RefreshLock } from './refresh-lock.js';

export type RefreshReason = 'fetch' | 'schedule' | 'proxy' | 'unauthorized';

export interface EnsureFreshOptions {
  /** Refresh even if the token is not about to expire. */
  force?: boolean;
  /** Overrides config.refreshMarginSeconds for deciding "about to expire". */
  marginSeconds?: number;
  reason: RefreshReason;
}

export type RefreshErrorCode = 'reauthorization_required' | 'provider_unavailable' | 'integration_misconfigured' | 'refresh_in_progress';

/**
 * A refresh that did not happen. `permanent`: retrying will not help (the grant is revoked, the
 * client is rejected); the end user must re-authorize or an operator must fix the Integration.
 * Otherwise transient: back off (`retryAfterMs` when the provider said so) and try again.
 */
export class RefreshError extends Error {
  readonly permanent: boolean;
  readonly code: RefreshErrorCode;
  readonly retryAfterMs?: number;
  /** What the token endpoint said (OAuth error code and description, HTTP status). Never a token. */
  readonly providerError?: { error?: string; description?: string; status?: number };
  /** Name of the Kubernetes Event recording this failure (the connection's `errors[].log_id`). */
  logId?: string;

  constructor(
    message: string,
    opts: { permanent: boolean; code: RefreshErrorCode; retryAfterMs?: number; providerError?: RefreshError['providerError']; logId?: string },
  ) {
    super(message);
    this.name = 'RefreshError';
    this.permanent = opts.permanent;
    this.code = opts.code;
    this.retryAfterMs = opts.retryAfterMs;
    this.providerError = opts.providerError;
    this.logId = opts.logId;
  }
}

export class ConnectionNotFoundError extends Error {
  constructor(readonly namespace: string, readonly integration: string, readonly connectionId: string) {
    super(`connection ${connectionId} of integration ${integration} not found`);
    this.name = 'ConnectionNotFoundError';
  }
}

/** What a refresh strategy gets: the connection as read after taking the lock, and its catalog objects. */
export interface StrategyInput {
  namespace: string;
  connection: StoredConnection;
  integration: IntegrationResource;
  provider: ProviderResource;
  store: KubeStore;
  fetch: typeof fetch;
  timeoutSeconds: number;
  now: number;
}

/**
 * How one kind of credentials is renewed. Register one per auth mode with
 * {@link TokenRefresher.registerStrategy} (the controller adds APP / JWT minting this way).
 */
export interface RefreshStrategy {
  /** Whether these credentials can be renewed at all (e.g. OAUTH2 needs a refresh token). */
  canRefresh(credentials: StoredCredentials): boolean;
  /** Obtains new credentials; throws (openid-client errors are classified by the refresher). */
  refresh(input: StrategyInput): Promise<StoredCredentials>;
}

// ---- expiry arithmetic (shared with the controller's scheduler) ----

/** Margin before expiry at which a token counts as "about to expire": min(marginSeconds, lifetime × ratio). */
export function refreshMarginMs(lifetimeSeconds: number | undefined, cfg: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>, marginSeconds = cfg.refreshMarginSeconds): number {
  const byRatio = lifetimeSeconds !== undefined ? lifetimeSeconds * cfg.refreshMarginRatio : Infinity;
  return Math.min(marginSeconds, byRatio) * 1000;
}

/** When a token with this expiry (and lifetime, if known) should be refreshed. */
export function nextRefreshAt(expiresAt: Date, lifetimeSeconds: number | undefined, cfg: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>): Date {
  return new Date(expiresAt.getTime() - refreshMarginMs(lifetimeSeconds, cfg));
}

/** True when the credentials expire within the margin (false when they have no expiry). */
export function isAboutToExpire(credentials: StoredCredentials, now: number, cfg: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>, marginSeconds?: number): boolean {
  const expiresAt = expiresAtOf(credentials);
  if (!expiresAt) return false;
  return expiresAt.getTime() - refreshMarginMs(lifetimeSecondsOf(credentials), cfg, marginSeconds) <= now;
}

// ---- strategies ----

function clientFor(input: StrategyInput, override?: { client_id?: string; client_secret?: string }): ClientCredentials {
  const client = resolveClient(input.store, input.namespace, input.integration, override);
  if (!client) {
    throw new RefreshError(`integration ${input.integration.metadata.name} has no OAuth client ID (clientSecretRef)`, {
      permanent: true, code: 'integration_misconfigured',
    });
  }
  return client;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** OAUTH2: refresh_token grant. A response without a new refresh token keeps the old one. */
export const oauth2RefreshStrategy: RefreshStrategy = {
  canRefresh: (c) => typeof c.refresh_token === 'string' && c.refresh_token.length > 0,
  async refresh(input) {
    const current = input.connection.credentials as unknown as OAuth2Credentials;
    let raw: Record<string, unknown> | undefined;
    const config = oauth2Configuration({
      provider: input.provider,
      client: clientFor(input, current.config_override),
      connectionConfig: input.connection.resource.spec.connectionConfig,
      purpose: 'refresh',
      fetch: input.fetch,
      timeoutSeconds: input.timeoutSeconds,
      onTokenResponse: (body) => (raw = body),
    });
    const tokens = await oidc.refreshTokenGrant(config, current.refresh_token!);
    const expiresIn = tokens.expiresIn();
    const next: Record<string, unknown> = {
      ...current,
      type: 'OAUTH2',
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token ?? current.refresh_token,
      raw: raw ?? { ...tokens },
    };
    if (expiresIn !== undefined) next.expires_at = iso(input.now + expiresIn * 1000);
    else delete next.expires_at;
    return next as StoredCredentials;
  },
};

/** OAUTH2_CC: client_credentials grant, a new token each time. */
export const clientCredentialsStrategy: RefreshStrategy = {
  canRefresh: () => true,
  async refresh(input) {
    const current = input.connection.credentials as unknown as OAuth2ClientCredentials;
    const client: ClientCredentials = current.client_id
      ? { clientId: current.client_id, clientSecret: current.client_secret }
      : clientFor(input);
    let raw: Record<string, unknown> | undefined;
    const config = oauth2Configuration({
      provider: input.provider,
      client,
      connectionConfig: input.connection.resource.spec.connectionConfig,
      fetch: input.fetch,
      timeoutSeconds: input.timeoutSeconds,
      onTokenResponse: (body) => (raw = body),
    });
    const params: Record<string, string> = { ...(input.provider.spec.tokenParams ?? {}) };
    delete params.grant_type;
    const scopes = input.integration.spec.scopes ?? input.provider.spec.defaultScopes;
    if (scopes?.length) params.scope = scopes.join(input.provider.spec.scopeSeparator ?? ' ');
    const tokens = await oidc.clientCredentialsGrant(config, params);
    const expiresIn = tokens.expiresIn();
    const next: Record<string, unknown> = {
      ...current,
      type: 'OAUTH2_CC',
      token: tokens.access_token,
      client_id: client.clientId,
      client_secret: client.clientSecret ?? '',
      raw: raw ?? { ...tokens },
    };
    if (expiresIn !== undefined) next.expires_at = iso(input.now + expiresIn * 1000);
    else delete next.expires_at;
    return next as StoredCredentials;
  },
};

// ---- classification ----

const PERMANENT_OAUTH_ERRORS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'access_denied']);
const TRANSIENT_OAUTH_ERRORS = new Set(['temporarily_unavailable', 'server_error', 'slow_down']);

/** Turns whatever a token request threw into a classified {@link RefreshError}. */
export function classifyRefreshFailure(err: unknown, now: number): RefreshError {
  if (err instanceof RefreshError) return err;
  if (err instanceof MissingTemplateValueError) {
    return new RefreshError(`cannot build the token URL: ${err.message}`, { permanent: true, code: 'reauthorization_required' });
  }
  if (err instanceof oidc.ResponseBodyError) {
    const providerError = { error: err.error, description: err.error_description?.slice(0, 300), status: err.status };
    const transient = err.status >= 500 || err.status === 429 || err.status === 408 || TRANSIENT_OAUTH_ERRORS.has(err.error);
    const what = `token endpoint answered ${err.status} ${err.error}${providerError.description ? `: ${providerError.description}` : ''}`;
    if (transient) {
      return new RefreshError(`provider unavailable: ${what}`, { permanent: false, code: 'provider_unavailable', retryAfterMs: retryAfterMs(err.response, now), providerError });
    }
    const permanent = PERMANENT_OAUTH_ERRORS.has(err.error) || (err.status >= 400 && err.status < 500);
    return new RefreshError(`reauthorization required: ${what}`, {
      permanent, code: permanent ? 'reauthorization_required' : 'provider_unavailable', providerError,
    });
  }
  const response = findResponse(err);
  if (response) {
    const status = response.status;
    const providerError = { status };
    if (status >= 500 || status === 429 || status === 408) {
      return new RefreshError(`provider unavailable: token endpoint answered ${status}`, {
        permanent: false, code: 'provider_unavailable', retryAfterMs: retryAfterMs(response, now), providerError,
      });
    }
    if (status >= 400) {
      return new RefreshError(`reauthorization required: token endpoint answered ${status}`, { permanent: true, code: 'reauthorization_required', providerError });
    }
    return new RefreshError(`provider unavailable: unusable token endpoint response (HTTP ${status})`, { permanent: false, code: 'provider_unavailable', providerError });
  }
  const timeout = causes(err).some((e) => ['TimeoutError', 'AbortError'].includes(String((e as { name?: unknown } | null)?.name)));
  const detail = timeout ? 'token request timed out' : `token request failed: ${rootMessage(err)}`;
  return new RefreshError(`provider unavailable: ${detail}`, { permanent: false, code: 'provider_unavailable' });
}

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, i = 0; e && i < 6; e = (e as { cause?: unknown }).cause, i++) out.push(e);
  return out;
}

function findResponse(err: unknown): Response | undefined {
  return causes(err).find((e): e is Response => e instanceof Response)
    ?? causes(err).map((e) => (e as { response?: unknown })?.response).find((r): r is Response => r instanceof Response);
}

function rootMessage(err: unknown): string {
  const all = causes(err);
  const last = all[all.length - 1];
  const message = (last as { message?: unknown } | null)?.message;
  return (typeof message === 'string' ? message : String(last)).slice(0, 200);
}

/** Retry-After in ms (delta-seconds or an HTTP date), when the response carries one. */
export function retryAfterMs(response: Response | undefined, now: number): number | undefined {
  const v = response?.headers.get('retry-after');
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}

// ---- the refresher ----

export interface TokenRefresherDeps {
  store: KubeStore;
  lock: RefreshLock;
  events: ConnectionEvents;
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
      this.counter = metric(deps.metrics, 'latchkey_token_refreshes_total', (registers) =>
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
        permanent: true, code: 'reauthorization_required', logId: last?.logId,
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

  private async refreshOnce(namespace: string, observed: StoredConnection, strategy: RefreshStrategy, opts: EnsureFreshOptions): Promise<StoredConnection> {
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
          await lock.release(namespace, name).catch((err: unknown) => this.logger.warn({ namespace, name, err: String(err) }, 'could not release refresh lock'));
        }
      }
      // Another replica holds the lock: watch our cache for its result, then try the lock again.
      const until = Math.min(deadline, clock.now() + 1000);
      while (clock.now() < until) {
        await sleep(poll);
        const current = store.getConnection(namespace, integration, connectionId);
        if (!current) throw new ConnectionNotFoundError(namespace, integration, connectionId);
        if (this.satisfied(current, observed.credentialsVersion, opts)) return current;
        const failure = (current.resource.status?.errors ?? []).find((e) => !knownErrors.has(e.logId) && e.message?.includes('Token refresh failed'));
        if (failure) throw failedElsewhere(failure);
      }
      if (clock.now() >= deadline) {
        throw new RefreshError('another replica is refreshing this connection and has not finished; try again', {
          permanent: false, code: 'refresh_in_progress', retryAfterMs: 1000,
        });
      }
    }
  }

  /** Called with the lock held and the credentials just read from the API server. */
  private async refreshLocked(namespace: string, conn: StoredConnection, strategy: RefreshStrategy, reason: RefreshReason): Promise<StoredConnection> {
    const { store, clock } = this.deps;
    const name = conn.resource.metadata.name;
    const providerName = conn.resource.spec.provider;
    let next: StoredCredentials;
    try {
      const integration = store.getIntegration(namespace, conn.resource.spec.integration);
      const provider = store.getProvider(providerName);
      if (!integration || !provider) {
        throw new RefreshError(`integration ${conn.resource.spec.integration} or its provider ${providerName} no longer exists`, {
          permanent: true, code: 'integration_misconfigured',
        });
      }
      next = await strategy.refresh({
        namespace, connection: conn, integration, provider, store,
        fetch: this.deps.fetch, timeoutSeconds: this.deps.tokenTimeoutSeconds ?? 10, now: clock.now(),
      });
    } catch (err) {
      const failure = classifyRefreshFailure(err, clock.now());
      this.counter?.inc({ provider: providerName, reason, result: failure.permanent ? 'permanent_failure' : 'transient_failure' });
      await this.recordFailure(namespace, conn, failure);
      throw failure;
    }
    // Written with compare-and-swap; while the lock is held only an import could write in between.
    const { credentials, credentialsVersion } = await store.updateCredentials(namespace, name, (cur) => ({
      ...next,
      ...(next.type === cur.type && next.refresh_token === undefined && cur.refresh_token !== undefined ? { refresh_token: cur.refresh_token } : {}),
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
    this.logger.info({ namespace, connection: name, provider: providerName, reason }, 'token refreshed');
    return { resource, credentials, credentialsVersion };
  }

  /** Records an Event and a status error; the stored credentials are left as they were. */
  private async recordFailure(namespace: string, conn: StoredConnection, failure: RefreshError): Promise<void> {
    const name = conn.resource.metadata.name;
    const message = `Token refresh failed ${failure.permanent ? FAILED_MARK.permanent : FAILED_MARK.transient}: ${failure.message}`;
    this.logger.warn({ namespace, connection: name, code: failure.code, permanent: failure.permanent, providerError: failure.providerError }, 'token refresh failed');
    try {
      failure.logId = await this.deps.events.record(conn.resource, { type: 'Warning', reason: 'RefreshFailed', action: 'Refresh', message });
    } catch (err) {
      this.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record refresh failure event');
      return;
    }
    const entry: ConnectionError = { type: 'auth', logId: failure.logId, message: message.slice(0, 1024), occurredAt: new Date(this.deps.clock.now()).toISOString() };
    await this.deps.store
      .updateConnectionStatus(namespace, name, (s) => ({
        ...s,
        refreshAttempts: (s.refreshAttempts ?? 0) + 1,
        errors: [...(s.errors ?? []), entry].slice(-MAX_ERRORS),
      }))
      .catch((err: unknown) => this.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record refresh failure in status'));
  }
}

/** A failure recorded by the replica that held the lock, as seen by one that waited for it. */
function failedElsewhere(e: ConnectionError): RefreshError {
  const permanent = e.message?.includes(FAILED_MARK.permanent) ?? false;
  return new RefreshError(e.message ?? 'token refresh failed', {
    permanent, code: permanent ? 'reauthorization_required' : 'provider_unavailable', logId: e.logId,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
