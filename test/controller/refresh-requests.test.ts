/**
 * Refresh requests (`latchkey.dev/refresh-requested-at`, what `kubectl latchkey refresh` writes)
 * answered by the owning controller, against the real control plane and a real OAuth server
 * (oidc-provider, refresh-token rotation): one token call per request, none for a request repeated,
 * stale or arriving while its refresh runs.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';
import { ANNOTATIONS, GROUP, VERSION, type ConnectionResource } from '../../src/k8s/resources.js';
import { parseRefreshRequestRecord, type RefreshRequestRecord } from '../../src/domain/refresh-request.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, eventsOf, readCustom } from '../support/kube.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const client: TestClient = { clientId: 'latchkey-requests', clientSecret: 'requests-client-secret-0123456789' };
const INTEGRATION = 'oidc';
let bed: OAuthBed | undefined;
let oidc: OidcTestServer;
let ns: string;
let providerName: string;
let replica: Replica;

beforeAll(async () => {
  bed = await startOAuthBed(kc, { namespace: 'refresh-requests', client, integration: INTEGRATION, accessTokenTtl: 3600 });
  ({ oidc, providerName } = bed);
  ns = bed.ns.name;
  replica = await startReplica(kc, { namespaces: [ns], components: ['controller'], identity: 'solo', config: { leaderElection: false } });
  await eventually(() => replica.ctx.catalog.getIntegration(ns, INTEGRATION));
});

afterAll(async () => {
  await replica?.stop();
  await bed?.close();
});

const store = () => replica.ctx;

async function annotate(name: string, annotations: Record<string, string>): Promise<void> {
  await custom.patchNamespacedCustomObject(
    { group: GROUP, version: VERSION, namespace: ns, plural: 'connections', name, body: { metadata: { annotations } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function recordOf(name: string): Promise<RefreshRequestRecord | undefined> {
  const c = await readCustom<ConnectionResource>(kc, 'connections', ns, name);
  return parseRefreshRequestRecord(c.metadata.annotations?.[ANNOTATIONS.refreshRequest]);
}

/** Waits for the controller's final answer to the request made at `requestedAt`. */
function answerTo(name: string, requestedAt: string): Promise<RefreshRequestRecord> {
  return eventually(
    async () => {
      const r = await recordOf(name);
      return r?.requestedAt === requestedAt && r.outcome !== 'InProgress' ? r : undefined;
    },
    20_000,
    100,
  );
}

/** The connection's `status.lastRefreshedAt`, once written. */
function lastRefreshOf(name: string): Promise<string> {
  return eventually(async () => (await readCustom<ConnectionResource>(kc, 'connections', ns, name)).status?.lastRefreshedAt, 20_000, 100);
}

async function readyConnection(connectionId: string): Promise<string> {
  const name = (await importOAuth2(store(), oidc, client, ns, INTEGRATION, providerName, { connectionId })).conn.resource.metadata.name;
  await eventually(
    async () => condition(await readCustom<ConnectionResource>(kc, 'connections', ns, name), 'Ready')?.status === 'True',
    20_000,
    100,
  );
  return name;
}

it('refreshes once per request, and not again for the same request repeated or re-applied', async () => {
  const name = await readyConnection('repeat');
  const before = oidc.refreshCalls();
  const tokenBefore = store().connections.getConnectionByName(ns, name)!.credentials.access_token;

  const requestedAt = new Date().toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: requestedAt });
  // Changes while the refresh runs (each a reconcile) do not make a second one.
  for (let i = 0; i < 5; i++) await annotate(name, { 'example.com/touch': String(i) });
  const answer = await answerTo(name, requestedAt);
  expect(answer).toMatchObject({ outcome: 'Refreshed', message: expect.stringMatching(/^Refreshed as requested; the token expires at /) });
  expect(oidc.refreshCalls()).toBe(before + 1);
  expect(store().connections.getConnectionByName(ns, name)!.credentials.access_token).not.toBe(tokenBefore);
  // The refresher writes the status just after the credentials (the record may be written first).
  expect(Date.parse(await lastRefreshOf(name))).toBeGreaterThanOrEqual(Date.parse(requestedAt));
  const events = await eventsOf(kc, ns, name);
  expect(events.filter((e) => e.reason === 'RefreshRequested')).toHaveLength(1);

  // The same request again (a re-applied manifest, a retried patch), and reconciles after it: nothing.
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: requestedAt, 'example.com/touch': 'again' });
  await sleep(3_000);
  expect(oidc.refreshCalls()).toBe(before + 1);
  expect(await recordOf(name)).toEqual(answer);
});

it('answers a stale request (older than the last refresh) without a token call', async () => {
  const name = await readyConnection('stale');
  const first = new Date().toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: first });
  await answerTo(name, first);
  const calls = oidc.refreshCalls();
  const lastRefreshedAt = await lastRefreshOf(name);

  // A request from before that refresh (an old manifest applied late): the refresh it asked for happened.
  const stale = new Date(Date.parse(lastRefreshedAt) - 60_000).toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: stale });
  expect(await answerTo(name, stale)).toMatchObject({
    outcome: 'AlreadyRefreshed',
    message: `The connection was refreshed at ${lastRefreshedAt}, after the request.`,
  });
  expect(oidc.refreshCalls()).toBe(calls);
});

it('says why when it cannot refresh: credentials without renewal, a value that is not a time, a refused grant', async () => {
  const plain = (
    await store().connections.createConnection({
      namespace: ns,
      spec: { integration: INTEGRATION, provider: providerName, connectionId: 'plain', authMode: 'OAUTH2' },
      credentials: {
        type: 'OAUTH2',
        access_token: 'no-refresh-token',
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        raw: {},
      },
    })
  ).resource.metadata.name;
  const calls = oidc.refreshCalls();
  const at = new Date().toISOString();
  await annotate(plain, { [ANNOTATIONS.refreshRequestedAt]: at });
  expect(await answerTo(plain, at)).toMatchObject({ outcome: 'NotRenewable', message: expect.stringMatching(/cannot be renewed/) });
  expect((await eventsOf(kc, ns, plain)).map((e) => e.reason)).toContain('RefreshRequestNotRenewable');

  await annotate(plain, { [ANNOTATIONS.refreshRequestedAt]: 'next tuesday' });
  expect(await answerTo(plain, 'next tuesday')).toMatchObject({ outcome: 'Invalid' });
  expect(oidc.refreshCalls()).toBe(calls);

  const revoked = await importOAuth2(store(), oidc, client, ns, INTEGRATION, providerName, { connectionId: 'refused' });
  const name = revoked.conn.resource.metadata.name;
  await oidc.revoke(revoked.refreshToken, client);
  const when = new Date().toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: when });
  const answer = await answerTo(name, when);
  expect(answer).toMatchObject({
    outcome: 'Failed',
    message: expect.stringMatching(/^The provider refused the credentials: .*invalid_grant/),
  });
  expect(JSON.stringify(answer)).not.toContain(revoked.refreshToken);
});
