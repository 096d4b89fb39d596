/**
 * Refresh fencing against a real control plane and oidc-provider (refresh-token rotation with reuse
 * detection: spending a rotated refresh token again revokes the whole grant). Faults are injected
 * through the objects the refresher is given (a store whose Secret write fails once, a short
 * Lease), never by module mocking. After each fault, "no grant lost" is checked the only way that
 * counts: the connection still refreshes at the provider.
 */
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { RefreshLock } from '../../src/auth/refresh/lock.js';
import { CLIENT_FAULT_ANNOTATION } from '../../src/auth/refresh/integration-fault.js';
import { RefreshError, refreshRecords, TokenRefresher } from '../../src/auth/refresh/token-refresher.js';
import { refreshStrategies } from '../../src/modes/registry.js';
import { REAUTH_VERSION_ANNOTATION } from '../../src/auth/refresh/reauthorization.js';
import { reauthorize } from '../../src/connections/service.js';
import { IntegrationReconciler } from '../../src/controller/reconcilers/integration.js';
import { systemClock } from '../../src/domain/clock.js';
import { IntegrationReason } from '../../src/domain/conditions.js';
import { ConnectionEvents } from '../../src/k8s/events.js';
import { Leases, toState } from '../../src/k8s/leases.js';
import type { ConnectionStore } from '../../src/k8s/store.js';
import { eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';
import { testConfig } from '../support/config.js';
import { importOAuth2 } from '../support/fixtures.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const client: TestClient = { clientId: 'latchkey-fencing', clientSecret: 'fencing-client-secret-0123456789' };
const INTEGRATION = 'fenced';
const WRONG = 'wrong-secret';
let ns: OAuthBed['ns'];
let oidc: OidcTestServer;
let bed: OAuthBed | undefined;
let replica: Replica;
let providerName: string;

beforeAll(async () => {
  bed = await startOAuthBed(kc, { namespace: 'fencing', client, integration: INTEGRATION, accessTokenTtl: 120 });
  ({ ns, oidc, providerName } = bed);
  await createIntegration(
    kc,
    ns.name,
    WRONG,
    { provider: providerName },
    { clientId: client.clientId, clientSecret: 'not-the-client-secret-000000' },
  );
  replica = await startReplica(kc, { namespaces: [ns.name], components: [] });
  await eventually(() => replica.ctx.catalog.getIntegration(ns.name, WRONG) && replica.ctx.catalog.getProvider(providerName));
});

afterAll(async () => {
  oidc?.setTokenDelay(0);
  await replica?.stop();
  await bed?.close();
});

const store = () => replica.ctx;

function refresher(opts: { connections?: ConnectionStore; lockTtlSeconds?: number; holder?: string; tokenTimeoutSeconds?: number } = {}) {
  return new TokenRefresher({
    connections: opts.connections ?? store().connections,
    catalog: store().catalog,
    strategies: refreshStrategies(),
    lock: new RefreshLock(new Leases(kc), opts.holder ?? 'fencing', opts.lockTtlSeconds ?? 30),
    hooks: hooks(),
    config: testConfig([ns.name]),
    logger: testLogger(),
    clock: systemClock,
    fetch,
    tokenTimeoutSeconds: opts.tokenTimeoutSeconds ?? 10,
  });
}

/** The refresher's records, as every process makes them (src/connections/shared-refresher.ts). */
const hooks = () => refreshRecords({ ...store(), events: new ConnectionEvents(kc, 'test'), logger: testLogger(), clock: systemClock });

/** The grant is alive: a forced refresh at the provider succeeds and the new token is stored. */
async function stillRefreshes(integration: string, connectionId: string): Promise<void> {
  const before = store().connections.getConnection(ns.name, integration, connectionId)!.credentials.access_token;
  const after = await refresher({ holder: 'check' }).ensureFresh(ns.name, integration, connectionId, { reason: 'fetch', force: true });
  expect(after.credentials.access_token).not.toBe(before);
  expect(oidc.tokenCalls.at(-1)).toMatchObject({ grantType: 'refresh_token', status: 200 });
}

it('retries a Secret write the API server refused once, and keeps the rotated refresh token', async () => {
  const { conn, refreshToken } = await importOAuth2(store(), oidc, client, ns.name, INTEGRATION, providerName);
  const { connectionId } = conn.resource.spec;
  // A store whose first credentials write fails the way the API server fails (500), then behaves.
  let refused = 0;
  const real = store();
  const faulty: ConnectionStore = Object.create(real.connections);
  faulty.updateCredentials = async (...args) => {
    if (refused++ === 0) throw new ApiException(500, 'injected: etcd unavailable', { message: 'injected' }, {});
    return real.connections.updateCredentials(...args);
  };
  const calls = oidc.refreshCalls();
  const result = await refresher({ connections: faulty }).ensureFresh(ns.name, INTEGRATION, connectionId, { reason: 'fetch', force: true });
  expect(refused).toBe(2);
  expect(oidc.refreshCalls() - calls).toBe(1);
  expect(result.credentials.refresh_token).not.toBe(refreshToken);
  expect(store().connections.getConnection(ns.name, INTEGRATION, connectionId)!.credentials.refresh_token).toBe(
    result.credentials.refresh_token,
  );
  await stillRefreshes(INTEGRATION, connectionId);
});

it('writes credentials it kept after failed writes on its own, before another replica can spend the stored token', async () => {
  const { conn, refreshToken } = await importOAuth2(store(), oidc, client, ns.name, INTEGRATION, providerName);
  const { connectionId } = conn.resource.spec;
  // Replica A's Secret writes fail (500) until the test lets them through: its refresh keeps the rotated
  // credentials in memory. Nobody asks A again (say its shard moved to B), and B is asked to refresh.
  let failing = true;
  let refused = 0;
  const real = store();
  const faulty: ConnectionStore = Object.create(real.connections);
  faulty.updateCredentials = async (...args) => {
    if (failing) {
      refused++;
      throw new ApiException(500, 'injected: etcd unavailable', { message: 'injected' }, {});
    }
    return real.connections.updateCredentials(...args);
  };
  const a = new TokenRefresher({
    connections: faulty,
    catalog: store().catalog,
    strategies: refreshStrategies(),
    lock: new RefreshLock(new Leases(kc), 'replica-a', 30),
    hooks: hooks(),
    config: testConfig([ns.name]),
    logger: testLogger(),
    clock: systemClock,
    fetch,
    writeAttempts: 2,
  });
  const calls = oidc.refreshCalls();
  await expect(a.ensureFresh(ns.name, INTEGRATION, connectionId, { reason: 'schedule', force: true })).rejects.toMatchObject({
    code: 'provider_unavailable',
  });
  expect(refused).toBe(2);
  expect(oidc.refreshCalls() - calls).toBe(1);
  // B waits for A's Lease (kept with the credentials); A writes them on its own once writes work again.
  const writesWork = Date.now();
  failing = false;
  const result = await refresher({ holder: 'replica-b' }).ensureFresh(ns.name, INTEGRATION, connectionId, {
    reason: 'schedule',
    force: true,
  });
  expect(result.credentials.refresh_token).not.toBe(refreshToken);
  // One rotation in all, and none refused: B found A's credentials instead of spending the stored token.
  expect(oidc.refreshCalls() - calls).toBe(1);
  expect(oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token' && c.status === 400)).toEqual([]);
  expect(store().connections.getConnection(ns.name, INTEGRATION, connectionId)!.credentials.refresh_token).toBe(
    result.credentials.refresh_token,
  );
  // A's write on its own records the refresh in status too: no scheduler is there to hand it on.
  const status = await eventually(() => {
    const s = store().connections.getConnection(ns.name, INTEGRATION, connectionId)?.resource.status;
    return s?.lastRefreshedAt && Date.parse(s.lastRefreshedAt) >= writesWork ? s : undefined;
  });
  expect(status.refreshAttempts).toBe(0);
  expect(Date.parse(status.expiresAt!)).toBe(Date.parse(String(result.credentials.expires_at)));
  await stillRefreshes(INTEGRATION, connectionId);
});

it('keeps the Lease through a token call slower than its TTL: a second replica does not spend the same token', async () => {
  const { conn } = await importOAuth2(store(), oidc, client, ns.name, INTEGRATION, providerName);
  const { connectionId } = conn.resource.spec;
  // A 2-second Lease and a token endpoint that takes 8 s: without renewal the Lease lapses mid-call. The
  // call must still be in flight when B asks (B's baseline is then the old credentials), however slowly the
  // Lease reads below come back on a loaded machine.
  const a = refresher({ holder: 'replica-a', lockTtlSeconds: 2 });
  const b = refresher({ holder: 'replica-b', lockTtlSeconds: 2 });
  const calls = oidc.refreshCalls();
  const tokenCallsBefore = oidc.tokenCalls.length;
  oidc.setTokenDelay(8000);
  try {
    const first = a.ensureFresh(ns.name, INTEGRATION, connectionId, { reason: 'fetch', force: true });
    // B asks once A's Lease, as the API server stores it, has outlived its first term (acquireTime + TTL:
    // without renewals it would have lapsed) and is still A's, renewed since, while A's call is at the provider.
    const lease = await eventually(
      async () => {
        const l = await new Leases(kc).read(ns.name, RefreshLock.leaseName(conn.resource.metadata.name));
        if (!l?.spec?.holderIdentity?.startsWith('replica-a/') || !l.spec.acquireTime) return undefined;
        const { renewedAt, durationSeconds } = toState(l);
        const acquiredAt = new Date(l.spec.acquireTime as unknown as string | Date).getTime();
        const inFlight = oidc.tokenCalls.slice(tokenCallsBefore).some((c) => c.status === 0);
        return Date.now() > acquiredAt + durationSeconds * 1000 && renewedAt > acquiredAt && inFlight ? l : undefined;
      },
      10_000,
      50,
    );
    expect(lease.spec!.leaseDurationSeconds).toBe(2);
    const second = b.ensureFresh(ns.name, INTEGRATION, connectionId, { reason: 'fetch', force: true });
    const [ra, rb] = await Promise.all([first, second]);
    expect(rb.credentials.refresh_token).toBe(ra.credentials.refresh_token);
  } finally {
    oidc.setTokenDelay(0);
  }
  expect(oidc.refreshCalls() - calls).toBe(1);
  await stillRefreshes(INTEGRATION, connectionId);
});

it('lets a reconnect that lands mid-refresh win over the refreshed tokens of the old grant', async () => {
  const { conn } = await importOAuth2(store(), oidc, client, ns.name, INTEGRATION, providerName);
  const { connectionId } = conn.resource.spec;
  oidc.setTokenDelay(1500);
  let reconnected: { accessToken: string; refreshToken: string };
  try {
    const callsBefore = oidc.tokenCalls.length;
    const refreshing = refresher().ensureFresh(ns.name, INTEGRATION, connectionId, { reason: 'fetch', force: true });
    // The old grant's token call has reached the (slow) provider.
    await eventually(() => oidc.tokenCalls.length > callsBefore, 10_000, 20);
    // The end user authorizes again (a new grant) while the provider call of the old one runs.
    reconnected = await oidc.mintTokens({ clientId: client.clientId, accountId: 'end-user-2' });
    await reauthorize(
      { connections: store().connections, config: testConfig([ns.name]), clock: systemClock },
      ns.name,
      INTEGRATION,
      connectionId,
      {
        type: 'OAUTH2',
        access_token: reconnected.accessToken,
        refresh_token: reconnected.refreshToken,
        expires_at: new Date(Date.now() + 120_000).toISOString(),
        raw: { expires_in: 120 },
      },
    );
    const result = await refreshing;
    // The newer credentials won, and the refresher returned them.
    expect(result.credentials.refresh_token).toBe(reconnected.refreshToken);
  } finally {
    oidc.setTokenDelay(0);
  }
  expect(store().connections.getConnection(ns.name, INTEGRATION, connectionId)!.credentials.refresh_token).toBe(reconnected.refreshToken);
  await stillRefreshes(INTEGRATION, connectionId);
});

it('blames a rejected client on the Integration, not on the end user', async () => {
  const { conn } = await importOAuth2(store(), oidc, client, ns.name, WRONG, providerName);
  const { connectionId } = conn.resource.spec;
  let error: unknown;
  try {
    await refresher().ensureFresh(ns.name, WRONG, connectionId, { reason: 'schedule', force: true });
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(RefreshError);
  expect((error as RefreshError).code).toBe('integration_misconfigured');
  expect((error as RefreshError).providerError?.error).toBe('invalid_client');
  // Nothing recorded against the connection: no re-authorization mark, no credential error.
  const after = store().connections.getConnection(ns.name, WRONG, connectionId)!;
  expect(after.resource.metadata.annotations?.[REAUTH_VERSION_ANNOTATION]).toBeUndefined();
  expect(after.resource.status?.errors ?? []).toEqual([]);
  // The Integration carries the fault, and its reconciler turns it into a condition.
  const integration = await eventually(() => {
    const i = store().catalog.getIntegration(ns.name, WRONG);
    return i?.metadata.annotations?.[CLIENT_FAULT_ANNOTATION] ? i : undefined;
  });
  expect(integration.metadata.annotations![CLIENT_FAULT_ANNOTATION]).not.toContain('not-the-client-secret');
  const reconciler = new IntegrationReconciler(store(), systemClock);
  expect(await reconciler.check(integration)).toMatchObject({ status: 'False', reason: IntegrationReason.ClientRejected });

  // The operator fixes the Secret: the fault no longer applies, and the connection refreshes.
  const core = kc.makeApiClient(CoreV1Api);
  const secretName = integration.spec.clientSecretRef!.name;
  const secret = await core.readNamespacedSecret({ namespace: ns.name, name: secretName });
  await core.replaceNamespacedSecret({
    namespace: ns.name,
    name: secretName,
    body: { ...secret, data: { ...secret.data, clientSecret: Buffer.from(client.clientSecret).toString('base64') } },
  });
  await eventually(
    () => store().catalog.getReferencedSecret(ns.name, secretName)?.metadata?.resourceVersion !== secret.metadata!.resourceVersion,
  );
  expect(await reconciler.check(store().catalog.getIntegration(ns.name, WRONG)!)).toMatchObject({ status: 'True' });
  await stillRefreshes(WRONG, connectionId);
});
