/**
 * Refresh on fetch against a real OAuth 2 server (oidc-provider, refresh-token rotation on) and a
 * real control plane: freshness, force_refresh, hidden refresh tokens, exactly one token call for
 * 50 concurrent fetches on one and on two replicas, revoked grants vs. provider outages.
 */
import { CoreV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { RefreshLock } from '../../src/auth/refresh/lock.js';
import { RefreshError, refreshRecords, TokenRefresher } from '../../src/auth/refresh/token-refresher.js';
import { refreshStrategies } from '../../src/modes/registry.js';
import { ConnectionEvents } from '../../src/k8s/events.js';
import { Leases } from '../../src/k8s/leases.js';
import { isNotFound } from '../../src/k8s/errors.js';
import { systemClock } from '../../src/domain/clock.js';
import { eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { testConfig } from '../support/config.js';
import { startHttpFaultProxy } from '../support/faults/http-fault-proxy.js';
import { bedForFile } from '../support/file-bed.js';
import { startOAuthServersBed } from '../support/oauth-bed.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const client = { clientId: 'latchkey-refresh-test', clientSecret: 'refresh-test-secret-0123456789' };
const PROVIDER = 'rest-refresh-oidc';
const CC_PROVIDER = 'rest-refresh-oidc-cc';
const INTEGRATION = 'oidc-app';
const CC_INTEGRATION = 'oidc-cc';
/** The token-timeout case's own: a Provider whose token endpoint is a proxy the case holds. */
const SLOW_PROVIDER = 'rest-refresh-oidc-slow';
const SLOW_INTEGRATION = 'oidc-slow';

const bed = bedForFile(() =>
  startOAuthServersBed(kc, {
    namespace: 'rest-refresh',
    client,
    integration: INTEGRATION,
    providerName: PROVIDER,
    accessTokenTtl: 120,
    provider: { tokenRequestAuthMethod: 'body' },
    before: async ({ namespace, oidc, alsoStop }) => {
      alsoStop(() => Promise.all([deleteProvider(kc, CC_PROVIDER), deleteProvider(kc, SLOW_PROVIDER)]));
      await applyProvider(kc, CC_PROVIDER, { displayName: 'Test OIDC CC', authMode: 'OAUTH2_CC', tokenUrl: oidc.tokenUrl });
      await createIntegration(kc, namespace, CC_INTEGRATION, { provider: CC_PROVIDER, scopes: ['read'] }, client);
    },
    kubeconfigs: [kc, kc],
    // last_fetched_at is flushed every second here (the default interval is 5 minutes).
    replica: { config: { lastFetchedIntervalSeconds: 1 } },
    ready: (store, namespace) => store.catalog.getIntegration(namespace, CC_INTEGRATION) && store.catalog.getProvider(CC_PROVIDER),
  }),
);
const a = () => bed.servers[0]!;
const b = () => bed.servers[1]!;

/** Imports a connection holding real tokens; `expired` makes its access token already past expiry. */
async function importOAuth2(connectionId: string, opts: { expired: boolean; integration?: string }) {
  const integration = opts.integration ?? INTEGRATION;
  const tokens = await bed.oidc.mintTokens({ clientId: client.clientId });
  const expiresAt = new Date(Date.now() + (opts.expired ? -60_000 : 3_600_000)).toISOString();
  const res = await a().call('POST', '/connections', {
    body: {
      provider_config_key: integration,
      connection_id: connectionId,
      metadata: { plan: 'pro' },
      end_user: { id: `user-${connectionId}`, email: `${connectionId}@example.test` },
      credentials: { type: 'OAUTH2', access_token: tokens.accessToken, refresh_token: tokens.refreshToken, expires_at: expiresAt },
    },
  });
  expect(res.status).toBe(201);
  await eventually(() => b().ctx.connections.getConnection(bed.ns.name, integration, connectionId));
  return tokens;
}

const getPath = (id: string, extra = '') => `/connections/${encodeURIComponent(id)}?provider_config_key=${INTEGRATION}${extra}`;

describe('refresh on fetch', () => {
  it('refreshes an expired access token before answering, and keeps the refresh token out of the response', async () => {
    const tokens = await importOAuth2('expired-1', { expired: true });
    const before = bed.oidc.refreshCalls();
    const res = await a().call('GET', getPath('expired-1'));
    expect(res.status).toBe(200);
    expect(bed.oidc.refreshCalls()).toBe(before + 1);
    expect(res.body.credentials.type).toBe('OAUTH2');
    expect(res.body.credentials.access_token).not.toBe(tokens.accessToken);
    expect(Date.parse(res.body.credentials.expires_at)).toBeGreaterThan(Date.now() + 60_000);
    expect(res.body.credentials).not.toHaveProperty('refresh_token');
    expect(JSON.stringify(res.body)).not.toContain(tokens.refreshToken);
    expect(res.body.credentials.raw).not.toHaveProperty('refresh_token');
    expect(res.body.credentials.raw.access_token).toBe(res.body.credentials.access_token);
    // Every field of the spec's Connection table.
    for (const k of [
      'id',
      'connection_id',
      'provider_config_key',
      'provider',
      'errors',
      'end_user',
      'metadata',
      'connection_config',
      'created_at',
      'updated_at',
      'last_fetched_at',
      'credentials',
    ]) {
      expect(res.body).toHaveProperty(k);
    }
    expect(res.body.provider).toBe(PROVIDER);
    expect(res.body.metadata).toEqual({ plan: 'pro' });
    expect(Date.parse(res.body.last_fetched_at)).toBeGreaterThan(Date.now() - 10_000);

    // The new access token works at the provider; the rotated refresh token was stored.
    const withRt = await a().call('GET', getPath('expired-1', '&refresh_token=true'));
    expect(withRt.body.credentials.refresh_token).toEqual(expect.any(String));
    expect(withRt.body.credentials.refresh_token).not.toBe(tokens.refreshToken);
    const introspected = await bed.oidc.provider.AccessToken.find(withRt.body.credentials.access_token);
    expect(introspected).toBeDefined();
    // The answer carried the status; the store gets it right after (written off the request path),
    // and the fetch in the next batch.
    const status = await eventually(() => {
      const s = a().ctx.connections.getConnection(bed.ns.name, INTEGRATION, 'expired-1')?.resource.status;
      return s?.lastRefreshedAt ? s : undefined;
    });
    expect(status.refreshAttempts).toBe(0);
    expect(Date.parse(status.expiresAt!)).toBe(Date.parse(res.body.credentials.expires_at));
    await eventually(() => a().ctx.connections.getConnection(bed.ns.name, INTEGRATION, 'expired-1')?.resource.status?.lastFetchedAt);
  });

  it('does not call the provider for a fresh token, and does with force_refresh', async () => {
    const tokens = await importOAuth2('fresh-1', { expired: false });
    const before = bed.oidc.refreshCalls();
    const res = await a().call('GET', getPath('fresh-1'));
    expect(res.status).toBe(200);
    expect(res.body.credentials.access_token).toBe(tokens.accessToken);
    expect(bed.oidc.refreshCalls()).toBe(before);

    const forced = await a().call('GET', getPath('fresh-1', '&force_refresh=true'));
    expect(forced.status).toBe(200);
    expect(bed.oidc.refreshCalls()).toBe(before + 1);
    expect(forced.body.credentials.access_token).not.toBe(tokens.accessToken);
  });

  it('makes exactly one token call for 50 concurrent fetches of an expired connection (one replica)', async () => {
    await importOAuth2('crowd-1', { expired: true });
    bed.oidc.setTokenDelay(300);
    const before = bed.oidc.refreshCalls();
    try {
      const results = await Promise.all(Array.from({ length: 50 }, () => a().call('GET', getPath('crowd-1'))));
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(new Set(results.map((r) => r.body.credentials.access_token)).size).toBe(1);
    } finally {
      bed.oidc.setTokenDelay(0);
    }
    expect(bed.oidc.refreshCalls()).toBe(before + 1);
  });

  it('makes exactly one token call for 50 concurrent fetches spread over two replicas', async () => {
    await importOAuth2('crowd-2', { expired: true });
    bed.oidc.setTokenDelay(300);
    const before = bed.oidc.refreshCalls();
    try {
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a() : b()).call('GET', getPath('crowd-2'))));
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(new Set(results.map((r) => r.body.credentials.access_token)).size).toBe(1);
    } finally {
      bed.oidc.setTokenDelay(0);
    }
    expect(bed.oidc.refreshCalls()).toBe(before + 1);
    // The grant is still good: a later forced refresh works (no refresh token was used twice).
    const again = await b().call('GET', getPath('crowd-2', '&force_refresh=true'));
    expect(again.status).toBe(200);
  });

  it('answers 424 reauthorization_required for a revoked grant, records an Event and keeps the stored credentials', async () => {
    const tokens = await importOAuth2('revoked-1', { expired: true });
    await bed.oidc.revoke(tokens.refreshToken, client);
    const res = await a().call('GET', getPath('revoked-1'));
    expect(res.status).toBe(424);
    expect(res.body.error.code).toBe('reauthorization_required');
    expect(res.body.error.message).toContain('invalid_grant');

    const after = await a()
      .call('GET', getPath('revoked-1', '&refresh_token=true'))
      .catch(() => undefined);
    expect(after?.status).toBe(424);
    const stored = a().ctx.connections.getConnection(bed.ns.name, INTEGRATION, 'revoked-1')!;
    expect(stored.credentials.access_token).toBe(tokens.accessToken);
    expect(stored.credentials.refresh_token).toBe(tokens.refreshToken);
    const errors = stored.resource.status!.errors!;
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toMatchObject({ type: 'auth', logId: expect.any(String) });

    // log_id names the operation log entry; the Event is still recorded for kubectl describe.
    // Entries are stored in batches, off the request path: wait for it.
    await eventually(async () => (await a().call('GET', `/logs/${encodeURIComponent(errors[0]!.logId)}`)).status === 200);
    const events = (await core.listNamespacedEvent({ namespace: bed.ns.name })).items.filter(
      (e) => e.involvedObject.name === stored.resource.metadata.name && e.reason === 'RefreshFailed',
    );
    expect(events.length).toBeGreaterThanOrEqual(1);
    const event = events[0]!;
    expect(event.reason).toBe('RefreshFailed');
    expect(event.type).toBe('Warning');
    expect(event.involvedObject.name).toBe(stored.resource.metadata.name);
    expect(event.message).toContain('invalid_grant');
    expect(event.message).not.toContain(tokens.refreshToken);
    expect(event.message).not.toContain(tokens.accessToken);

    // The list shows the error with its log_id.
    const list = await a().call('GET', `/connections?connectionId=revoked-1`);
    expect(list.body.connections[0].errors[0]).toEqual({ type: 'auth', log_id: errors[0]!.logId });
  });

  it('tells a provider outage (5xx) apart from a revoked grant: 502 provider_unavailable, credentials kept', async () => {
    const tokens = await importOAuth2('outage-1', { expired: true });
    bed.oidc.failNext(1, 503);
    const res = await a().call('GET', getPath('outage-1'));
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('provider_unavailable');
    const stored = a().ctx.connections.getConnection(bed.ns.name, INTEGRATION, 'outage-1')!;
    expect(stored.credentials.refresh_token).toBe(tokens.refreshToken);
    // Once the provider is back, the same refresh token still works.
    const ok = await a().call('GET', getPath('outage-1'));
    expect(ok.status).toBe(200);
    expect(ok.body.credentials.access_token).not.toBe(tokens.accessToken);
    expect(ok.body.errors).toEqual([]);
  });

  it('passes a rate limit on as 503 with Retry-After', async () => {
    await importOAuth2('ratelimited-1', { expired: true });
    bed.oidc.failNext(1, 429, { 'retry-after': '17' });
    const res = await a().call('GET', getPath('ratelimited-1'));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('provider_unavailable');
    expect(res.headers.get('retry-after')).toBe('17');
  });

  it("classifies a token endpoint timeout as transient (for the controller's back-off)", async () => {
    // Its own Provider, whose token endpoint is a proxy in front of oidc-provider that holds the request
    // until the refresher gave up: the held request is then dropped, never passed on (the provider never
    // sees it), so nothing of this case is left in flight for a later one.
    const proxy = await startHttpFaultProxy(bed.oidc.issuer);
    try {
      await applyProvider(kc, SLOW_PROVIDER, {
        displayName: 'Test OIDC behind a slow proxy',
        authMode: 'OAUTH2',
        authorizationUrl: bed.oidc.authorizationUrl,
        tokenUrl: `${proxy.url}/token`,
        tokenRequestAuthMethod: 'body',
      });
      await createIntegration(kc, bed.ns.name, SLOW_INTEGRATION, { provider: SLOW_PROVIDER }, client);
      for (const r of [a(), b()])
        await eventually(() => r.ctx.catalog.getIntegration(bed.ns.name, SLOW_INTEGRATION) && r.ctx.catalog.getProvider(SLOW_PROVIDER));
      await importOAuth2('timeout-1', { expired: true, integration: SLOW_INTEGRATION });
      const refresher = new TokenRefresher({
        connections: a().ctx.connections,
        catalog: a().ctx.catalog,
        strategies: refreshStrategies(),
        lock: new RefreshLock(new Leases(kc), 'timeout-test', 30),
        hooks: refreshRecords({ ...a().ctx, events: new ConnectionEvents(kc, 'test') }),
        config: testConfig([bed.ns.name]),
        logger: testLogger(),
        clock: systemClock,
        fetch,
        tokenTimeoutSeconds: 1,
      });
      const tokenCallsBefore = bed.oidc.tokenCalls.length;
      // The token request is held until the refresher gave up on it and its socket closed (seen by the
      // proxy while the request still waits): only then is the gate opened, so it is never passed on.
      const release = proxy.hold();
      let error: unknown;
      try {
        await refresher.ensureFresh(bed.ns.name, SLOW_INTEGRATION, 'timeout-1', { reason: 'schedule' });
      } catch (err) {
        error = err;
      }
      try {
        await eventually(() => proxy.dropped.length === 1, 10_000, 20);
      } finally {
        release();
      }
      expect(error).toBeInstanceOf(RefreshError);
      expect((error as RefreshError).permanent).toBe(false);
      expect((error as RefreshError).code).toBe('provider_unavailable');
      expect((error as RefreshError).message).toContain('timed out');
      expect((error as RefreshError).logId).toEqual(expect.any(String));
      // The lock was released (the Lease deleted, as after any failure): the next refresh goes through at once.
      const lease = await kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({
          namespace: bed.ns.name,
          name: RefreshLock.leaseName(
            a().ctx.connections.getConnection(bed.ns.name, SLOW_INTEGRATION, 'timeout-1')!.resource.metadata.name,
          ),
        })
        .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
      expect(lease).toBeUndefined();
      // The token request the refresher gave up on left the proxy without reaching the provider.
      expect(proxy.seen).toHaveLength(1);
      expect(bed.oidc.tokenCalls.length).toBe(tokenCallsBefore);
    } finally {
      await proxy.close();
    }
  });

  it('gets a new client-credentials token (OAUTH2_CC) when the stored one expired', async () => {
    const res = await a().call('POST', '/connections', {
      body: {
        provider_config_key: CC_INTEGRATION,
        connection_id: 'cc-1',
        credentials: {
          type: 'OAUTH2_CC',
          token: 'old-token',
          expires_at: new Date(Date.now() - 1000).toISOString(),
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
      },
    });
    expect(res.status).toBe(201);
    const got = await a().call('GET', `/connections/cc-1?provider_config_key=${CC_INTEGRATION}`);
    expect(got.status).toBe(200);
    expect(got.body.credentials.type).toBe('OAUTH2_CC');
    expect(got.body.credentials.token).not.toBe('old-token');
    expect(await bed.oidc.provider.ClientCredentials.find(got.body.credentials.token)).toBeDefined();
    expect(bed.oidc.tokenCalls.at(-1)?.grantType).toBe('client_credentials');
  });
});
