/**
 * The credential-injecting proxy: finds the connection a request names, builds the provider URL
 * under the provider's base URL (SSRF rules in target-url.ts), adds the connection's credentials,
 * sends the request with the caller's method, headers and body, and streams the provider's answer
 * back. Works on node:http messages; the HTTP framework only authenticates and routes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { integrationCertificate, resolveClient } from '../auth/oauth2-client.js';
import { requiredCertificate } from '../auth/token-request.js';
import { RefreshError, UNKNOWN_CONNECTION } from '../auth/refresh/errors.js';
import type { Clock } from '../domain/clock.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../k8s/store.js';
import type { HandshakeWindows } from '../k8s/handshake-windows.js';
import type { IntegrationResource, ProviderResource, ProviderSpec, WebhookHandshakeSpec } from '../k8s/resources.js';
import type { ClientCertificate } from '../domain/client-certificate.js';
import type { Logger } from '../platform/log.js';
import type { Registry } from '../platform/metrics.js';
import type { EgressGuard } from '../egress/guard.js';
import { authorizationHeader, Injections, type OAuth1Consumer } from './credential-injection.js';
import { moduleOfCredentials } from '../modes/registry.js';
import { hasCode, LatchkeyError } from '../domain/errors.js';
import { checkBaseUrlOverride, forwardedRequestHeaders, returnedResponseHeaders } from './headers.js';
import { proxyDuration, proxyRequests, proxyRetries, proxyStreamsEnded } from './metrics.js';
import { DEFAULT_REPLAY_LIMIT, hasBody, readBody, type RequestBody } from './request-body.js';
import { decoderFor } from './response-body.js';
import { BaseUrls } from './base-url.js';
import { DEFAULT_BACKOFF, parseRetries, type RetryPolicy } from './retry-policy.js';
import { DEFAULT_IDLE_MS } from './stream-limits.js';
import { passBody } from './pass-body.js';
import { readCallerJsonObject, withBodyFields } from './json-body-fields.js';
import { checkProxyPath, upstreamTarget } from './target-url.js';
import { SCOPE_HEADERS, scopeRefusal, scopeRefusalMessage } from './insufficient-scope.js';
import type { UpstreamResponse } from './upstream-response.js';
import { recordedScopes } from '../auth/granted-scopes.js';
import { isUnsafeHeaderValue } from '../domain/header-value.js';
import { Cancellation, createAgents, sendWithRetries, type SendResult, type UpstreamAgents } from './upstream.js';

/**
 * The shared single-flight token refresher (src/auth/refresh/token-refresher.ts), seen through what the proxy needs:
 * the stored connection with a fresh access token (a new one with `force`).
 */
export interface ProxyTokenRefresher {
  ensureFresh(
    namespace: string,
    integration: string,
    connectionId: string,
    opts: { reason: 'proxy' | 'unauthorized'; force?: boolean },
  ): Promise<StoredConnection>;
}

export interface CredentialProxyDeps {
  connections: ConnectionStore;
  catalog: CatalogStore;
  logger: Logger;
  metrics: Registry;
  clock: Clock;
  /** Checks every address the proxy connects to (SSRF). */
  egress: EgressGuard;
  refresher?: ProxyTokenRefresher;
  /** The HTTP status an error is answered with (the HTTP layer's mapping), for the requests metric. */
  statusOf: (err: unknown) => number;
  /** Request bodies up to this size are held so the request can be retried (default 1 MiB). */
  replayLimitBytes?: number;
  /** How long to wait for the provider's response headers (default 120 s). */
  headersTimeoutMs?: number;
  /** Once the headers are in, how long the provider may send nothing while the caller reads (default 300 s; stream-limits.ts). */
  idleTimeoutMs?: number;
  /** How long an answer may stream at all (default 0: no limit). */
  streamMaxMs?: number;
  backoff?: Partial<Omit<RetryPolicy, 'retries'>>;
  /** Handshake windows (src/k8s/handshake-windows.ts): opened while a call that creates a provider webhook is in flight. */
  handshakeWindows?: Pick<HandshakeWindows, 'open' | 'close'>;
}

export interface ProxyCall {
  /** Namespace of the Environment whose secret key authenticated the call. */
  namespace: string;
  connectionId: string;
  providerConfigKey: string;
  /** The path after `/proxy`, as received (still percent-encoded), starting with "/" or empty. */
  rawPath: string;
  /** The query string as received, without "?". */
  rawQuery: string;
}

/** Modes whose token the shared refresher renews (JWT: minted again) before a request and after a 401. */

function isFormBody(headers: IncomingMessage['headers']): boolean {
  return String(headers['content-type'] ?? '')
    .toLowerCase()
    .startsWith('application/x-www-form-urlencoded');
}

export class CredentialProxy {
  private readonly agents: UpstreamAgents;
  private readonly baseUrls = new BaseUrls();
  private readonly injections = new Injections();
  private readonly replayLimit: number;
  private readonly headersTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly streamMaxMs: number;
  private readonly backoff: Omit<RetryPolicy, 'retries'>;
  private readonly logger: Logger;
  private readonly requests;
  private readonly duration;
  private readonly retries;
  private readonly streamsEnded;

  constructor(private readonly deps: CredentialProxyDeps) {
    this.agents = createAgents(deps.egress);
    this.replayLimit = deps.replayLimitBytes ?? DEFAULT_REPLAY_LIMIT;
    this.headersTimeoutMs = deps.headersTimeoutMs ?? 120_000;
    this.idleTimeoutMs = deps.idleTimeoutMs ?? DEFAULT_IDLE_MS;
    this.streamMaxMs = deps.streamMaxMs ?? 0;
    this.backoff = { ...DEFAULT_BACKOFF, ...deps.backoff };
    this.logger = deps.logger.child({ component: 'proxy' });
    this.requests = proxyRequests(deps.metrics);
    this.duration = proxyDuration(deps.metrics);
    this.retries = proxyRetries(deps.metrics);
    this.streamsEnded = proxyStreamsEnded(deps.metrics);
  }

  /** Closes idle connections to providers. */
  close(): void {
    this.agents.destroy();
  }

  /**
   * Proxies one request. Throws a {@link LatchkeyError} when it answers nothing itself (the caller's
   * error handler writes it); once the provider's response has started, failures end the response.
   */
  async handle(req: IncomingMessage, res: ServerResponse, call: ProxyCall): Promise<void> {
    const started = this.deps.clock.now();
    let providerLabel = 'unknown';
    let status = 0;
    try {
      status = await this.proxy(req, res, call, (p) => (providerLabel = p));
    } catch (err) {
      status = this.deps.statusOf(err);
      throw err;
    } finally {
      this.requests.inc({ provider: providerLabel, status: String(status) });
      this.duration.observe({ provider: providerLabel }, (this.deps.clock.now() - started) / 1000);
    }
  }

  private async proxy(req: IncomingMessage, res: ServerResponse, call: ProxyCall, setProvider: (p: string) => void): Promise<number> {
    // Everything about the target is checked before anything else happens.
    checkProxyPath(call.rawPath);
    checkBaseUrlOverride(req.headers);
    const retries = parseRetries(req.headers.retries);
    const method = (req.method ?? 'GET').toUpperCase();

    const { catalog } = this.deps;
    const found = await proxiedConnection(catalog, this.deps.connections, call);
    const { integration, provider } = found;
    let connection = found.connection;
    setProvider(provider.metadata.name);
    const baseUrl = this.baseUrls.of(provider, connection.resource.spec);
    const clientCertificate = apiCallCertificate(catalog, call.namespace, integration, provider.spec, this.deps.clock.now());

    const modeProxy = moduleOfCredentials(connection.credentials)?.proxy;
    const refreshable = modeProxy?.refreshesOnUse === true && this.deps.refresher !== undefined;
    if (refreshable) {
      // A failed refresh is not the end: the stored token may still work, and if not the provider says so.
      connection = await this.refresh(call, connection, false).catch((err: unknown) => {
        // The refresher's own failures fall back (they are LatchkeyErrors too); others (the API server's) are answered.
        if (err instanceof LatchkeyError && !(err instanceof RefreshError || hasCode(err, UNKNOWN_CONNECTION))) throw err;
        this.logger.warn(
          { provider: provider.metadata.name, integration: call.providerConfigKey, err: (err as Error).message },
          'refresh before a proxied request failed; using the stored token',
        );
        return connection!;
      });
    }

    // Hold the body in memory when it may have to be sent again (retries, 401 refresh) or signed (OAuth 1 forms).
    const needsForm = modeProxy?.signsFormBody === true && isFormBody(req.headers);
    // A provider taking the credential in the JSON body: the caller's object held and checked (json-body-fields.ts).
    const jsonObject = provider.spec.proxy?.body
      ? await readCallerJsonObject(req, req.headers, method, this.replayLimit, provider.spec.displayName)
      : undefined;
    // No body (most calls): no read, and no promise to wait for.
    const body: RequestBody =
      jsonObject || !hasBody(req.headers)
        ? { kind: 'none' }
        : await readBody(req, req.headers, retries > 0 || refreshable || needsForm ? this.replayLimit : 0);
    if (needsForm && body.kind === 'stream')
      throw new LatchkeyError(
        'too_large',
        'payload_too_large',
        `Form bodies signed with OAuth 1.0a are limited to ${this.replayLimit} bytes`,
      );
    const formParams = needsForm && body.kind === 'buffered' ? new URLSearchParams(body.data.toString('utf8')) : undefined;

    await this.openHandshakeWindow(res, call, integration, provider.spec.webhooks?.handshake, method);

    const cancellation = new Cancellation();
    // Only a caller that leaves before the answer is complete cancels the upstream request (and a
    // retry's wait). `writableEnded`, not `writableFinished`: the latter can still be false at 'close'
    // while the socket drains.
    const onClose = () => {
      if (!res.writableEnded) cancellation.cancel();
    };
    res.once('close', onClose);

    const connectionConfig = connection.resource.spec.connectionConfig;
    const client = () => resolveClient(this.deps.catalog, call.namespace, integration); // for templates naming the Integration's client
    const build = (stored: StoredCredentials) => {
      // SIGNATURE: a new value (nonce, time) for every attempt, so a retry is not refused as a replay.
      const mode = moduleOfCredentials(stored)?.proxy;
      const credentials = mode?.perUse?.(provider.spec, stored, this.deps.clock.now()) ?? stored;
      const injection = this.injections.of(provider.spec, credentials, connectionConfig, client);
      // The path was checked first thing; no URL object unless a signature needs one (OAuth 1, TBA).
      const target = upstreamTarget(baseUrl, call.rawPath, call.rawQuery, injection.query);
      const headers = forwardedRequestHeaders(req.headers, injection.headers);
      const authorization = authorizationHeader({
        spec: provider.spec,
        credentials,
        headers: injection.headers,
        method,
        // A function, not a getter: V8 allocates a literal's getter pair in the old generation, which then
        // held the getter's closure, and through it the whole request, until the next full GC (44 full
        // GCs in a benchmark run against 4; docs/benchmarks.md, "Hot paths").
        url: target.url,
        formParams,
        oauth1Consumer: (override) => this.oauth1Consumer(call.namespace, integration, override),
        connectionConfig,
      });
      if (authorization !== undefined) headers.authorization = authorization;
      const own = mode?.ownHeader?.(provider.spec, credentials);
      if (own) headers[own[0]] = own[1];
      const sent = jsonObject ? withBodyFields(jsonObject, injection.body ?? [], headers) : body;
      return { method, url: target, headers, body: sent, ...(clientCertificate ? { clientCertificate } : {}) };
    };

    const send = (credentials: StoredCredentials) =>
      sendWithRetries(() => build(credentials), this.agents, {
        policy: { ...this.backoff, retries },
        cancellation,
        headersTimeoutMs: this.headersTimeoutMs,
        bodyIdleTimeoutMs: this.idleTimeoutMs,
        now: () => this.deps.clock.now(),
        onRetry: (reason, delayMs, attempt) => {
          this.retries.inc({ provider: provider.metadata.name, reason });
          this.logger.info({ provider: provider.metadata.name, reason, delayMs, attempt }, 'retrying proxied request');
        },
      });

    let result: SendResult = await send(connection.credentials);
    // Every retry is decided here, on a status, before anything went to the caller (writeHead below):
    // a body that fails once streaming started (an event stream) is never sent again.
    if (result.response.statusCode === 401 && refreshable && body.kind !== 'stream') {
      // One forced refresh and one retry; if the refresh fails, the provider's 401 goes back.
      let refreshed: StoredConnection | undefined;
      try {
        refreshed = await this.refresh(call, connection, true);
      } catch (err) {
        this.logger.warn(
          { provider: provider.metadata.name, integration: call.providerConfigKey, err: (err as Error).message },
          'refresh after a 401 from the provider failed',
        );
      }
      if (refreshed) {
        result.response.drain();
        this.retries.inc({ provider: provider.metadata.name, reason: 'unauthorized_refresh' });
        connection = refreshed;
        const again = await send(refreshed.credentials);
        result = { response: again.response, attempts: result.attempts + again.attempts };
      }
    }

    const { response } = result;
    if (answeredScopeRefusal(res, response, provider.spec.displayName, connection.credentials, call.providerConfigKey))
      return res.off('close', onClose).statusCode;
    const decoder = decoderFor(response, method, provider.spec.proxy?.decompress === true);
    const statusCode = response.statusCode;
    try {
      res.writeHead(
        statusCode,
        response.statusMessage,
        returnedResponseHeaders(response.rawHeaders, { decompressed: decoder !== undefined }),
      );
    } catch {
      // A status line or header node will not send (the provider's parser let it through): nothing has
      // gone out yet. The refused reason stays on `res` and would fail the error's own writeHead.
      res.statusMessage = '';
      response.drain();
      throw new LatchkeyError(
        'upstream',
        'provider_invalid_response',
        'The provider answered with a status line or header that cannot be passed on',
      );
    }
    try {
      await passBody(response, res, {
        decoder,
        streamMaxMs: this.streamMaxMs,
        provider: provider.metadata.name,
        logger: this.logger,
        streamsEnded: this.streamsEnded,
      });
    } finally {
      res.off('close', onClose);
    }
    // Not built at all unless debug is on: this runs for every proxied request.
    if (this.logger.isLevelEnabled('debug'))
      logProxied(this.logger, {
        provider: provider.metadata.name,
        integration: call.providerConfigKey,
        method,
        path: call.rawPath,
        status: statusCode,
        attempts: result.attempts,
      });
    return statusCode;
  }

  /**
   * A call the Provider declares as creating a webhook whose handshake hands over a secret (Asana)
   * opens the Integration's handshake window for this connection, shared by every replica, and closes
   * it when the response ends: the handshake's secret is kept only if the creation answered 2xx.
   */
  private async openHandshakeWindow(
    res: ServerResponse,
    call: ProxyCall,
    integration: IntegrationResource,
    handshake: WebhookHandshakeSpec | undefined,
    method: string,
  ): Promise<void> {
    const opens = handshake?.opensOn;
    const windows = this.deps.handshakeWindows;
    if (!opens || !windows || opens.method.toUpperCase() !== method || call.rawPath.replace(/\/+$/, '') !== opens.path) return;
    const secretName = integration.spec.clientSecretRef?.name;
    if (!secretName)
      throw new LatchkeyError(
        'conflict',
        'integration_has_no_secret',
        'This integration has no client Secret to keep the webhook secret in',
      );
    const now = this.deps.clock.now();
    const id = await windows
      .open(call.namespace, secretName, call.connectionId, now, (handshake.windowSeconds ?? 30) * 1000)
      .catch((err: unknown) => {
        this.logger.warn({ integration: call.providerConfigKey, err: (err as Error).message }, 'webhook handshake window not opened');
        throw new LatchkeyError('unavailable', 'unavailable', 'The webhook handshake window could not be opened; retry later');
      });
    if (!id)
      throw new LatchkeyError(
        'conflict',
        'webhook_creation_in_progress',
        'Another webhook creation of this integration is in flight; retry when it ends',
      );
    res.once('close', () => {
      const succeeded = res.statusCode >= 200 && res.statusCode < 300 && res.writableFinished;
      windows.close(call.namespace, secretName, id, succeeded, this.deps.clock.now()).then(
        (kept) => this.logger.info({ integration: call.providerConfigKey, kept }, 'webhook handshake window closed'),
        (err: unknown) =>
          this.logger.warn(
            { integration: call.providerConfigKey, err: (err as Error).message },
            'webhook handshake window not closed (it expires)',
          ),
      );
    });
  }

  private async refresh(call: ProxyCall, current: StoredConnection, force: boolean): Promise<StoredConnection> {
    const fresh = await this.deps.refresher!.ensureFresh(
      call.namespace,
      call.providerConfigKey,
      call.connectionId,
      force ? { reason: 'unauthorized', force: true } : { reason: 'proxy' },
    );
    return fresh ?? current;
  }

  private oauth1Consumer(
    namespace: string,
    integration: Parameters<typeof resolveClient>[2],
    override?: { client_id?: string; client_secret?: string },
  ): OAuth1Consumer | undefined {
    const client = resolveClient(this.deps.catalog, namespace, integration, override);
    if (!client?.clientId || client.clientSecret === undefined) return undefined;
    return { consumerKey: client.clientId, consumerSecret: client.clientSecret };
  }
}

function logProxied(
  logger: Logger,
  fields: { provider: string; integration: string; method: string; path: string; status: number; attempts: number },
): void {
  logger.debug(fields, 'proxied request');
}

/**
 * A provider's 403 for a missing scope, answered with the upstream status and a clear error naming the
 * scope (the provider's body is not passed on; its scope headers are). No credential is in it: the
 * message holds scope names only.
 */
function answeredScopeRefusal(
  res: ServerResponse,
  response: UpstreamResponse,
  providerName: string,
  credentials: StoredCredentials,
  integration: string,
): boolean {
  const refusal = scopeRefusal(response.statusCode, (name) => response.header(name));
  if (!refusal) return false;
  const message = scopeRefusalMessage(refusal, providerName, recordedScopes(credentials), integration);
  response.drain();
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  for (const name of SCOPE_HEADERS) {
    const value = response.header(name);
    if (value !== undefined && value.length <= 8192 && !isUnsafeHeaderValue(value)) headers[name] = value;
  }
  const body = JSON.stringify({
    error: {
      code: 'insufficient_scope',
      message,
      errors: refusal.needed.map((scope) => ({ path: 'scope', message: `missing scope ${scope}`, code: 'insufficient_scope' })),
    },
  });
  res.writeHead(response.statusCode, headers).end(body);
  return true;
}

/** The Integration's TLS client certificate, for Providers that require it on API calls (mutual TLS): on every attempt. */
function apiCallCertificate(
  catalog: CatalogStore,
  namespace: string,
  integration: IntegrationResource,
  spec: ProviderSpec,
  now: number,
): ClientCertificate | undefined {
  if (!spec.clientCertificate?.apiCalls) return undefined;
  return requiredCertificate(true, integrationCertificate(catalog, namespace, integration, now));
}

/** The Integration, connection and Provider a proxied call names; 404 for each one missing. */
async function proxiedConnection(
  catalog: CatalogStore,
  connections: ConnectionStore,
  call: ProxyCall,
): Promise<{ integration: IntegrationResource; connection: StoredConnection; provider: ProviderResource }> {
  const integration = catalog.getIntegration(call.namespace, call.providerConfigKey);
  if (!integration)
    throw new LatchkeyError('not_found', 'unknown_integration', `No integration "${call.providerConfigKey}" in this environment`);
  const connection = await connections.findConnection(call.namespace, call.providerConfigKey, call.connectionId);
  if (!connection)
    throw new LatchkeyError(
      'not_found',
      'unknown_connection',
      `No connection "${call.connectionId}" for integration "${call.providerConfigKey}"`,
    );
  const provider = catalog.getProvider(connection.resource.spec.provider);
  if (!provider)
    throw new LatchkeyError(
      'not_found',
      'unknown_provider',
      `The provider "${connection.resource.spec.provider}" of this connection is not in the catalog`,
    );
  return { integration, connection, provider };
}
