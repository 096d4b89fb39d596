/**
 * Refresh before expiry against a real control plane and a real OAuth server (oidc-provider with
 * 10-second access tokens and refresh-token rotation). Nothing fetches the connections here: every
 * refresh comes from the controller's scheduler.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { refresherFor } from '../../src/connections/shared-refresher.js';
import { WEBHOOK_DELIVERY_LABEL } from '../../src/k8s/webhook-outbox.js';
import { ConnectionCondition } from '../../src/domain/conditions.js';
import type { ConnectionResource } from '../../src/k8s/resources.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, eventsOf, readCustom } from '../support/kube.js';
import { bedForFile } from '../support/file-bed.js';
import { startOAuthControllerBed } from '../support/oauth-bed.js';
import { startReplica } from '../support/replica.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kc = testKubeConfig();
const client: TestClient = { clientId: 'latchkey-refresh', clientSecret: 'refresh-client-secret-0123456789' };
const INTEGRATION = 'oidc';
const bed = bedForFile(() =>
  startOAuthControllerBed(kc, {
    namespace: 'refresh',
    client,
    integration: INTEGRATION,
    accessTokenTtl: 10,
    // The webhook URL is never reached here (no dispatcher runs): the test reads the queued delivery.
    environment: { webhooks: { url: 'http://127.0.0.1:9/hooks' } },
  }),
);
const store = () => bed.store();
const tokenOf = (name: string) =>
  store().connections.getConnectionByName(bed.ns.name, name)?.credentials.access_token as string | undefined;
const userinfo = (token: string) => fetch(`${bed.oidc.issuer}/me`, { headers: { authorization: `Bearer ${token}` } });

async function removeConnection(name: string) {
  await store().connections.deleteConnection(bed.ns.name, name);
}

it('refreshes a 10-second token before it expires, again and again, without any fetch', async () => {
  const firstCall = bed.oidc.tokenCalls.length;
  const { conn, accessToken } = await importOAuth2(store(), bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName, {
    expiresInMs: 10_000,
  });
  const name = conn.resource.metadata.name;
  const chain: Array<{ token: string; expiresAt: number }> = [
    { token: accessToken, expiresAt: Date.parse(conn.credentials.expires_at as string) },
  ];
  await eventually(
    () => {
      const c = store().connections.getConnectionByName(bed.ns.name, name);
      const token = c?.credentials.access_token as string | undefined;
      if (c && token && token !== chain[chain.length - 1]!.token)
        chain.push({ token, expiresAt: Date.parse(c.credentials.expires_at as string) });
      return chain.length >= 4;
    },
    45_000,
    50,
  );

  // Three refreshes, each made at the token endpoint before the token it replaced had expired.
  const refreshes = bed.oidc.tokenCalls.slice(firstCall).filter((c) => c.grantType === 'refresh_token' && c.status === 200);
  expect(refreshes.length).toBeGreaterThanOrEqual(3);
  for (let i = 0; i < 3; i++) expect(refreshes[i]!.at).toBeLessThan(chain[i]!.expiresAt);
  expect(new Set(chain.map((c) => c.token)).size).toBe(chain.length);

  // The stored token is one the provider accepts.
  const latest = tokenOf(name)!;
  expect((await userinfo(latest)).status).toBe(200);

  // kubectl shows expiry and the next refresh, before the expiry, and Ready.
  const fresh = await readCustom<ConnectionResource>(kc, 'connections', bed.ns.name, name);
  expect(Date.parse(fresh.status!.nextRefreshAt!)).toBeLessThan(Date.parse(fresh.status!.expiresAt!));
  expect(fresh.status!.refreshAttempts).toBe(0);
  expect(condition(fresh, 'Ready')).toMatchObject({ status: 'True' });
  expect(fresh.status!.observedGeneration).toBe(fresh.metadata.generation);
  expect(JSON.stringify(fresh)).not.toContain(latest);
  await removeConnection(name);
});

it('stops at a revoked grant: re-authorization condition, exactly one Event, no retry storm', async () => {
  const { conn, refreshToken } = await importOAuth2(store(), bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName, {
    expiresInMs: 3_000,
  });
  const name = conn.resource.metadata.name;
  await bed.oidc.revoke(refreshToken, client);
  const failed = await eventually(
    async () => {
      const c = await readCustom<ConnectionResource>(kc, 'connections', bed.ns.name, name);
      return condition(c, ConnectionCondition.NeedsReauthorization)?.status === 'True' ? c : undefined;
    },
    30_000,
    100,
  );
  const callsAtFailure = bed.oidc.refreshCalls();

  expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'ReauthorizationRequired' });
  expect(condition(failed, 'CredentialsValid')).toMatchObject({ status: 'False', reason: 'ReauthorizationRequired' });
  expect(condition(failed, ConnectionCondition.NeedsReauthorization)!.message).toMatch(/invalid_grant/);
  expect(condition(failed, ConnectionCondition.NeedsReauthorization)!.message).toMatch(/reconnect session/);
  expect(failed.status!.nextRefreshAt).toBeUndefined();

  // A whole token lifetime later: not one more call to the token endpoint.
  await sleep(6_000);
  expect(bed.oidc.refreshCalls()).toBe(callsAtFailure);

  // The application backend is told once, by an auth webhook with operation "refresh".
  const queued = (
    await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: bed.ns.name, labelSelector: WEBHOOK_DELIVERY_LABEL })
  ).items
    .map((cm) => JSON.parse(cm.data!.body!) as Record<string, unknown>)
    .filter((b) => b.connectionId === conn.resource.spec.connectionId);
  expect(queued).toHaveLength(1);
  expect(queued[0]).toMatchObject({
    type: 'auth',
    operation: 'refresh',
    success: false,
    providerConfigKey: INTEGRATION,
    environment: bed.env!.name,
    error: { type: 'reauthorization_required' },
  });

  // A fetch now answers from the recorded failure without asking the provider again.
  await eventually(
    () =>
      store().connections.getConnectionByName(bed.ns.name, name)?.resource.metadata.annotations?.[
        'latchkey.dev/reauthorization-credentials-version'
      ],
  );
  await expect(
    refresherFor(bed.replica.ctx).ensureFresh(bed.ns.name, INTEGRATION, conn.resource.spec.connectionId, { reason: 'fetch', force: true }),
  ).rejects.toMatchObject({ permanent: true, code: 'reauthorization_required' });
  expect(bed.oidc.refreshCalls()).toBe(callsAtFailure);

  const events = await eventsOf(kc, bed.ns.name, name);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: 'Warning' });
  const after = await readCustom<ConnectionResource>(kc, 'connections', bed.ns.name, name);
  expect(after.status!.errors).toHaveLength(1);
  // log_id names the operation log entry (the Event is recorded beside it).
  expect(after.status!.errors![0]).toMatchObject({ type: 'auth', logId: expect.any(String) });

  // The end user authorizes again (new credentials stored): the condition lifts and refreshing resumes.
  const tokens = await bed.oidc.mintTokens({ clientId: client.clientId });
  await store().connections.updateCredentials(bed.ns.name, name, (cur) => ({
    ...cur,
    access_token: tokens.accessToken,
    refresh_token: tokens.refreshToken,
    expires_at: new Date(Date.now() + 3_000).toISOString(),
    raw: { expires_in: 10 },
  }));
  await eventually(
    async () => {
      const c = await readCustom<ConnectionResource>(kc, 'connections', bed.ns.name, name);
      return condition(c, ConnectionCondition.NeedsReauthorization)?.status === 'False' && condition(c, 'Ready')?.status === 'True';
    },
    20_000,
    100,
  );
  await eventually(() => tokenOf(name) !== tokens.accessToken, 20_000, 100);
  await removeConnection(name);
});

it('backs off on 503 and 429 with Retry-After, then succeeds', async () => {
  bed.oidc.failNext(2, 503, { 'retry-after': '1' });
  const firstCall = bed.oidc.tokenCalls.length;
  const { conn, accessToken } = await importOAuth2(store(), bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName, {
    expiresInMs: 3_000,
  });
  const name = conn.resource.metadata.name;

  // While failing, kubectl says so: attempts counted, Ready=False RefreshFailing.
  const failing = await eventually(
    async () => {
      const c = await readCustom<ConnectionResource>(kc, 'connections', bed.ns.name, name);
      return (c.status?.refreshAttempts ?? 0) >= 1 && condition(c, 'Ready')?.reason === 'RefreshFailing' ? c : undefined;
    },
    20_000,
    50,
  );
  expect(condition(failing, 'Ready')!.message).toMatch(/retrying/);
  await eventually(() => tokenOf(name) !== accessToken, 20_000, 50);

  const calls = bed.oidc.tokenCalls.slice(firstCall);
  expect(calls.slice(0, 3).map((c) => c.status)).toEqual([503, 503, 200]);
  // Retry-After: 1 was honoured (the backoff alone would have been 300 ms, then 600 ms).
  expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
  expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(950);
  await eventually(
    async () => {
      const c = await readCustom<ConnectionResource>(kc, 'connections', bed.ns.name, name);
      return c.status?.refreshAttempts === 0 && condition(c, 'Ready')?.status === 'True';
    },
    10_000,
    100,
  );

  // 429 with Retry-After: 2 on the next scheduled refresh.
  const beforeSecond = bed.oidc.tokenCalls.length;
  bed.oidc.failNext(1, 429, { 'retry-after': '2' });
  const second = tokenOf(name);
  await eventually(() => tokenOf(name) !== second, 25_000, 50);
  const calls2 = bed.oidc.tokenCalls.slice(beforeSecond);
  expect(calls2.slice(0, 2).map((c) => c.status)).toEqual([429, 200]);
  expect(calls2[1]!.at - calls2[0]!.at).toBeGreaterThanOrEqual(1_950);
  await removeConnection(name);
});

it('a fetch through the REST API racing the scheduled refresh makes one token-endpoint call', async () => {
  // A second replica: the REST server, with its own caches and its own (shared-code) refresher.
  const serverReplica = await startReplica(kc, { namespaces: [bed.ns.name], identity: 'server' });
  const serverStore = serverReplica.ctx;
  const server = serverReplica.server!;
  try {
    const { conn } = await importOAuth2(store(), bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName, { expiresInMs: 10_000 });
    const name = conn.resource.metadata.name;
    const { connectionId } = conn.resource.spec;
    await eventually(
      () => serverStore.connections.getConnectionByName(bed.ns.name, name) && serverStore.catalog.listEnvironments(bed.ns.name).length > 0,
    );
    await eventually(() => store().caches.connections.get(name, bed.ns.name)?.status?.nextRefreshAt);
    bed.oidc.setTokenDelay(800); // the provider is slow: the scheduled refresh and the fetch overlap
    const before = bed.oidc.refreshCalls();
    const tokenCallsBefore = bed.oidc.tokenCalls.length;
    // The scheduled refresh has reached the (slow) provider: the token is due, and a fetch now races it.
    await eventually(() => bed.oidc.tokenCalls.length > tokenCallsBefore, 20_000, 20);
    const res = await fetch(`${server.url}/connections/${encodeURIComponent(connectionId)}?provider_config_key=${INTEGRATION}`, {
      headers: { authorization: `Bearer ${bed.env!.secretKey}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { credentials: { access_token: string } };
    await eventually(() => tokenOf(name) === body.credentials.access_token, 10_000, 50);
    // Both refreshes (the scheduled one, and the fetch's had it made its own) were asked of the provider
    // before the fetch was answered; a call is counted once the provider has answered it: wait for that.
    await eventually(() => bed.oidc.tokenCalls.slice(tokenCallsBefore).every((c) => c.status !== 0), 10_000, 20);
    expect(bed.oidc.refreshCalls() - before).toBe(1);
    expect((await userinfo(body.credentials.access_token)).status).toBe(200);
    await removeConnection(name);
  } finally {
    bed.oidc.setTokenDelay(0);
    await serverReplica.stop();
  }
});
