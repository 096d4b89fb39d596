/**
 * `kubectl latchkey` as a process against the real control plane, a controller replica and a real
 * OAuth server (oidc-provider): status, refresh (answered by the controller), logs and bindings, with
 * the admin's kubeconfig and with a ServiceAccount's that a Role limits.
 */
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';
import { ANNOTATIONS, GROUP, VERSION, type ConnectionResource } from '../../src/k8s/resources.js';
import { parseRefreshRequestRecord } from '../../src/domain/refresh-request.js';
import type { StatusReport } from '../../src/kubectl/status.js';
import type { OplogEntry } from '../../src/oplog/entry.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, readCustom } from '../support/kube.js';
import { runPlugin, serviceAccountKubeconfig } from '../support/kubectl-plugin.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const admin = process.env.LATCHKEY_TEST_KUBECONFIG!;
const client: TestClient = { clientId: 'latchkey-kubectl', clientSecret: 'kubectl-client-secret-0123456789' };
const INTEGRATION = 'oidc';
let bed: OAuthBed | undefined;
let oidc: OidcTestServer;
let ns: string;
let providerName: string;
let replica: Replica;

beforeAll(async () => {
  bed = await startOAuthBed(kc, { namespace: 'kubectl', client, integration: INTEGRATION, accessTokenTtl: 3600 });
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
const readyReason = async (name: string) => condition(await readCustom<ConnectionResource>(kc, 'connections', ns, name), 'Ready');

it('status shows connections by state, tokens expiring with no refresh planned, and failing ones with their last error', async () => {
  const healthy = (await importOAuth2(store(), oidc, client, ns, INTEGRATION, providerName, { connectionId: 'healthy' })).conn.resource
    .metadata.name;
  // A token nothing can renew (no refresh token), expiring in two hours.
  const expiring = (
    await store().connections.createConnection({
      namespace: ns,
      spec: { integration: INTEGRATION, provider: providerName, connectionId: 'expiring', authMode: 'OAUTH2', endUser: { id: 'u2' } },
      credentials: { type: 'OAUTH2', access_token: 'at-expiring', expires_at: new Date(Date.now() + 2 * 3_600_000).toISOString(), raw: {} },
    })
  ).resource.metadata.name;
  const revoked = await importOAuth2(store(), oidc, client, ns, INTEGRATION, providerName, { connectionId: 'revoked', expiresInMs: 2_000 });
  await oidc.revoke(revoked.refreshToken, client);
  const failing = revoked.conn.resource.metadata.name;
  await eventually(async () => (await readyReason(failing))?.reason === 'ReauthorizationRequired', 30_000, 200);
  await eventually(
    async () => (await readyReason(healthy))?.status === 'True' && (await readyReason(expiring))?.status === 'True',
    20_000,
    200,
  );

  const table = await runPlugin(admin, ['status', '-n', ns]);
  expect(table).toMatchObject({ code: 0, stderr: '' });
  expect(table.stdout).toMatch(/^STATE\s+CONNECTIONS\nReady\s+2\nReauthorizationRequired\s+1\n/);
  expect(table.stdout).toMatch(new RegExp(`\\n${expiring}\\s+oidc\\s+expiring\\s+u2\\s+\\S+Z \\(in (1h|2h|119m|120m)\\)`));
  expect(table.stdout).toMatch(
    new RegExp(
      `\\n${failing}\\s+oidc\\s+revoked\\s+ReauthorizationRequired\\s+\\S+\\s+Token refresh failed.*invalid_grant.*\\(log ${failing}\\.`,
    ),
  );
  expect(table.stdout).not.toContain('at-expiring');

  const json = await runPlugin(admin, ['status', '-n', ns, '-o', 'json']);
  expect(json.code).toBe(0);
  const report = JSON.parse(json.stdout) as StatusReport & { namespace: string };
  expect(report.namespace).toBe(ns);
  expect(report.byState).toEqual({ Ready: 2, ReauthorizationRequired: 1 });
  expect(report.expiringSoon.map((e) => e.name)).toContain(expiring);
  expect(report.expiringSoon.map((e) => e.name)).not.toContain(healthy);
  expect(report.failing).toEqual([
    expect.objectContaining({
      name: failing,
      reason: 'ReauthorizationRequired',
      lastError: expect.objectContaining({ type: 'auth', message: expect.stringMatching(/invalid_grant/) }),
    }),
  ]);
});

it('refresh asks the owning controller, waits for its answer, and logs shows the refresh it made', async () => {
  const { conn, accessToken } = await importOAuth2(store(), oidc, client, ns, INTEGRATION, providerName, { connectionId: 'on-request' });
  const name = conn.resource.metadata.name;
  await eventually(async () => (await readyReason(name))?.status === 'True', 20_000, 200);
  const before = oidc.refreshCalls();

  const run = await runPlugin(admin, ['refresh', name, '-n', ns]);
  expect(run).toMatchObject({ code: 0, stderr: '' });
  expect(run.stdout).toMatch(new RegExp(`^connection/${name} Refreshed: Refreshed as requested; the token expires at \\S+Z\\.\\n$`));
  expect(oidc.refreshCalls()).toBe(before + 1);
  const token = store().connections.getConnectionByName(ns, name)?.credentials.access_token;
  expect(token).not.toBe(accessToken);

  const stored = await readCustom<ConnectionResource>(kc, 'connections', ns, name);
  const record = parseRefreshRequestRecord(stored.metadata.annotations?.[ANNOTATIONS.refreshRequest]);
  expect(record).toMatchObject({ outcome: 'Refreshed', requestedAt: stored.metadata.annotations?.[ANNOTATIONS.refreshRequestedAt] });
  expect(JSON.stringify(stored.metadata.annotations)).not.toContain(String(token));

  const json = await runPlugin(admin, ['refresh', name, '-n', ns, '-o', 'json']);
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toMatchObject({ connection: name, namespace: ns, outcome: 'Refreshed' });
  expect(oidc.refreshCalls()).toBe(before + 2);

  const logs = await runPlugin(admin, ['logs', name, '-n', ns]);
  expect(logs.code).toBe(0);
  expect(logs.stdout).toMatch(/refresh\s+request\s+success\s+\d+ms\s+\S+\s+Token refreshed \(request\)/);
  const entries = (JSON.parse((await runPlugin(admin, ['logs', name, '-n', ns, '-o', 'json'])).stdout) as { entries: OplogEntry[] })
    .entries;
  expect(entries.filter((e) => e.operation === 'refresh' && e.step === 'request' && e.outcome === 'success')).toHaveLength(2);
  expect(JSON.stringify(entries)).not.toContain(String(token));
});

it('a connection that does not exist, and a refresh nothing answers in time, are said so with exit 1', async () => {
  const missing = await runPlugin(admin, ['logs', 'no-such-connection', '-n', ns]);
  expect(missing).toMatchObject({ code: 1, stdout: '' });
  expect(missing.stderr).toMatch(/connection "no-such-connection" not found in namespace/);

  // A namespace no controller watches: the request stays, unanswered.
  const other = await createTestNamespace(kc, 'kubectl-unwatched');
  try {
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: other.name,
      plural: 'connections',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'Connection',
        metadata: { name: 'lonely' },
        spec: { integration: INTEGRATION, provider: providerName, connectionId: 'lonely', id: 1, authMode: 'OAUTH2' },
      },
    });
    const run = await runPlugin(admin, ['refresh', 'lonely', '-n', other.name, '--timeout', '2s']);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(/no answer from the controller within 2s/);
    const left = await readCustom<ConnectionResource>(kc, 'connections', other.name, 'lonely');
    expect(Date.parse(left.metadata.annotations![ANNOTATIONS.refreshRequestedAt]!)).toBeGreaterThan(0);
  } finally {
    await other.delete();
  }
});

it('acts with the RBAC of whoever runs it: what a Role does not grant is refused with the API server’s words', async () => {
  const conn = (await importOAuth2(store(), oidc, client, ns, INTEGRATION, providerName, { connectionId: 'rbac' })).conn.resource.metadata
    .name;
  const viewer = await serviceAccountKubeconfig(kc, ns, 'viewer', [
    { apiGroups: ['latchkey.dev'], resources: ['connections'], verbs: ['get', 'list'] },
  ]);
  const status = await runPlugin(viewer, ['status']);
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(/^STATE\s+CONNECTIONS\n/);

  const refresh = await runPlugin(viewer, ['refresh', conn]);
  expect(refresh.code).toBe(1);
  expect(refresh.stderr).toMatch(/cannot patch resource "connections" in API group "latchkey.dev" in the namespace/);
  const logs = await runPlugin(viewer, ['logs', conn]);
  expect(logs.code).toBe(1);
  expect(logs.stderr).toMatch(/cannot get resource "configmaps"/);
  const across = await runPlugin(viewer, ['status', '-A']);
  expect(across.code).toBe(1);
  expect(across.stderr).toMatch(/cannot list resource "connections" in API group "latchkey.dev" at the cluster scope/);

  const nobody = await serviceAccountKubeconfig(kc, ns, 'nobody', []);
  const refused = await runPlugin(nobody, ['status']);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/cannot list resource "connections"/);
});

it('bindings lists CredentialBindings, or says their CRD is not installed', async () => {
  const installed = await kc
    .makeApiClient(ApiextensionsV1Api)
    .readCustomResourceDefinition({ name: 'credentialbindings.latchkey.dev' })
    .then(
      () => true,
      () => false,
    );
  const run = await runPlugin(admin, ['bindings', '-n', ns]);
  if (installed) {
    expect(run).toMatchObject({ code: 0, stdout: 'No CredentialBindings found.\n' });
  } else {
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(/CredentialBinding API \(credentialbindings.latchkey.dev\/v1alpha1\) is not installed/);
  }
});
