/**
 * Refresh requests (`latchkey.dev/refresh-requested-at`, what `kubectl latchkey refresh` writes)
 * answered by the owning controller, against the real control plane and a real OAuth server
 * (oidc-provider, refresh-token rotation): one token call per request, none for a request repeated,
 * stale or arriving while its refresh runs.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { ANNOTATIONS, GROUP, VERSION, type ConnectionResource } from '../../src/k8s/resources.js';
import { parseRefreshRequestRecord, type RefreshRequestRecord } from '../../src/domain/refresh-request.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, eventsOf, readCustom } from '../support/kube.js';
import { bedForFile } from '../support/file-bed.js';
import { startOAuthControllerBed } from '../support/oauth-bed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const client: TestClient = { clientId: 'latchkey-requests', clientSecret: 'requests-client-secret-0123456789' };
const INTEGRATION = 'oidc';
const bed = bedForFile(() =>
  startOAuthControllerBed(kc, { namespace: 'refresh-requests', client, integration: INTEGRATION, accessTokenTtl: 3600 }),
);
const store = () => bed.store();

async function annotate(name: string, annotations: Record<string, string>): Promise<void> {
  await custom.patchNamespacedCustomObject(
    { group: GROUP, version: VERSION, namespace: bed.namespace, plural: 'connections', name, body: { metadata: { annotations } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function recordOf(name: string): Promise<RefreshRequestRecord | undefined> {
  const c = await readCustom<ConnectionResource>(kc, 'connections', bed.namespace, name);
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
  return eventually(
    async () => (await readCustom<ConnectionResource>(kc, 'connections', bed.namespace, name)).status?.lastRefreshedAt,
    20_000,
    100,
  );
}

async function readyConnection(connectionId: string): Promise<string> {
  const name = (await importOAuth2(store(), bed.oidc, client, bed.namespace, INTEGRATION, bed.providerName, { connectionId })).conn.resource
    .metadata.name;
  await eventually(
    async () => condition(await readCustom<ConnectionResource>(kc, 'connections', bed.namespace, name), 'Ready')?.status === 'True',
    20_000,
    100,
  );
  return name;
}

it('refreshes once per request, and not again for the same request repeated or re-applied', async () => {
  const name = await readyConnection('repeat');
  const before = bed.oidc.refreshCalls();
  const tokenBefore = store().connections.getConnectionByName(bed.namespace, name)!.credentials.access_token;

  const requestedAt = new Date().toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: requestedAt });
  // Changes while the refresh runs (each a reconcile) do not make a second one.
  for (let i = 0; i < 5; i++) await annotate(name, { 'example.com/touch': String(i) });
  const answer = await answerTo(name, requestedAt);
  expect(answer).toMatchObject({ outcome: 'Refreshed', message: expect.stringMatching(/^Refreshed as requested; the token expires at /) });
  expect(bed.oidc.refreshCalls()).toBe(before + 1);
  expect(store().connections.getConnectionByName(bed.namespace, name)!.credentials.access_token).not.toBe(tokenBefore);
  // The refresher writes the status just after the credentials (the record may be written first).
  expect(Date.parse(await lastRefreshOf(name))).toBeGreaterThanOrEqual(Date.parse(requestedAt));
  // The Event is recorded after the answer, without being awaited by it.
  const events = await eventually(
    async () => {
      const found = (await eventsOf(kc, bed.namespace, name)).filter((e) => e.reason === 'RefreshRequested');
      return found.length > 0 ? found : undefined;
    },
    20_000,
    100,
  );
  expect(events).toHaveLength(1);

  // The same request again (a re-applied manifest, a retried patch), and reconciles after it: nothing.
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: requestedAt, 'example.com/touch': 'again' });
  await sleep(3_000);
  expect(bed.oidc.refreshCalls()).toBe(before + 1);
  expect(await recordOf(name)).toEqual(answer);
});

it('answers a stale request (older than the last refresh) without a token call', async () => {
  const name = await readyConnection('stale');
  const first = new Date().toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: first });
  await answerTo(name, first);
  const calls = bed.oidc.refreshCalls();
  const lastRefreshedAt = await lastRefreshOf(name);

  // A request from before that refresh (an old manifest applied late): the refresh it asked for happened.
  const stale = new Date(Date.parse(lastRefreshedAt) - 60_000).toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: stale });
  expect(await answerTo(name, stale)).toMatchObject({
    outcome: 'AlreadyRefreshed',
    message: `The connection was refreshed at ${lastRefreshedAt}, after the request.`,
  });
  expect(bed.oidc.refreshCalls()).toBe(calls);
});

it('says why when it cannot refresh: credentials without renewal, a value that is not a time, a refused grant', async () => {
  const plain = (
    await store().connections.createConnection({
      namespace: bed.namespace,
      spec: { integration: INTEGRATION, provider: bed.providerName, connectionId: 'plain', authMode: 'OAUTH2' },
      credentials: {
        type: 'OAUTH2',
        access_token: 'no-refresh-token',
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        raw: {},
      },
    })
  ).resource.metadata.name;
  const calls = bed.oidc.refreshCalls();
  const at = new Date().toISOString();
  await annotate(plain, { [ANNOTATIONS.refreshRequestedAt]: at });
  expect(await answerTo(plain, at)).toMatchObject({ outcome: 'NotRenewable', message: expect.stringMatching(/cannot be renewed/) });
  // The Event is recorded after the answer, without being awaited by it.
  await eventually(
    async () => ((await eventsOf(kc, bed.namespace, plain)).some((e) => e.reason === 'RefreshRequestNotRenewable') ? true : undefined),
    20_000,
    100,
  );

  await annotate(plain, { [ANNOTATIONS.refreshRequestedAt]: 'next tuesday' });
  expect(await answerTo(plain, 'next tuesday')).toMatchObject({ outcome: 'Invalid' });
  expect(bed.oidc.refreshCalls()).toBe(calls);

  const revoked = await importOAuth2(store(), bed.oidc, client, bed.namespace, INTEGRATION, bed.providerName, { connectionId: 'refused' });
  const name = revoked.conn.resource.metadata.name;
  await bed.oidc.revoke(revoked.refreshToken, client);
  const when = new Date().toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: when });
  const answer = await answerTo(name, when);
  expect(answer).toMatchObject({
    outcome: 'Failed',
    message: expect.stringMatching(/^The provider refused the credentials: .*invalid_grant/),
  });
  expect(JSON.stringify(answer)).not.toContain(revoked.refreshToken);
  // Marked for re-authorization at once, as a refusal the schedule meets (its token is not due for an hour).
  await eventually(
    async () =>
      condition(await readCustom<ConnectionResource>(kc, 'connections', bed.namespace, name), 'NeedsReauthorization')?.status === 'True',
    20_000,
    100,
  );
  // Asked again, the refused grant is not sent to the provider again.
  const refusedCalls = bed.oidc.refreshCalls();
  const again = new Date().toISOString();
  await annotate(name, { [ANNOTATIONS.refreshRequestedAt]: again });
  expect(await answerTo(name, again)).toMatchObject({ outcome: 'Failed' });
  expect(bed.oidc.refreshCalls()).toBe(refusedCalls);
});
