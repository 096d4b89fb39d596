/**
 * `kubectl latchkey` as a process against the real control plane, a controller replica and a real
 * OAuth server (oidc-provider): status, refresh (answered by the controller), logs and bindings, with
 * the admin's kubeconfig and with a ServiceAccount's that a Role limits.
 */
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment } from '../../dev/fixtures.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { ANNOTATIONS, type ConnectionResource } from '../../src/k8s/resources.js';
import { parseRefreshRequestRecord } from '../../src/domain/refresh-request.js';
import type { StatusReport } from '../../src/kubectl/status.js';
import type { OplogEntry } from '../../src/oplog/entry.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, readCustom, customObject } from '../support/kube.js';
import { runPlugin, serviceAccountKubeconfig } from '../support/kubectl-plugin.js';
import { bedForFile } from '../support/file-bed.js';
import { startOAuthControllerBed } from '../support/oauth-bed.js';
import { startReplica } from '../support/replica.js';

const kc = testKubeConfig();
const admin = process.env.LATCHKEY_TEST_KUBECONFIG!;
const client: TestClient = { clientId: 'latchkey-kubectl', clientSecret: 'kubectl-client-secret-0123456789' };
const INTEGRATION = 'oidc';
const bed = bedForFile(() => startOAuthControllerBed(kc, { namespace: 'kubectl', client, integration: INTEGRATION, accessTokenTtl: 3600 }));
const store = () => bed.store();
const readyReason = async (name: string) =>
  condition(await readCustom<ConnectionResource>(kc, 'connections', bed.namespace, name), 'Ready');

it('status shows connections by state, tokens expiring with no refresh planned, and failing ones with their last error', async () => {
  const healthy = (await importOAuth2(store(), bed.oidc, client, bed.namespace, INTEGRATION, bed.providerName, { connectionId: 'healthy' }))
    .conn.resource.metadata.name;
  // A token nothing can renew (no refresh token), expiring in two hours.
  const expiring = (
    await store().connections.createConnection({
      namespace: bed.namespace,
      spec: { integration: INTEGRATION, provider: bed.providerName, connectionId: 'expiring', authMode: 'OAUTH2', endUser: { id: 'u2' } },
      credentials: { type: 'OAUTH2', access_token: 'at-expiring', expires_at: new Date(Date.now() + 2 * 3_600_000).toISOString(), raw: {} },
    })
  ).resource.metadata.name;
  const revoked = await importOAuth2(store(), bed.oidc, client, bed.namespace, INTEGRATION, bed.providerName, {
    connectionId: 'revoked',
    expiresInMs: 2_000,
  });
  await bed.oidc.revoke(revoked.refreshToken, client);
  const failing = revoked.conn.resource.metadata.name;
  await eventually(async () => (await readyReason(failing))?.reason === 'ReauthorizationRequired', 30_000, 200);
  await eventually(
    async () => (await readyReason(healthy))?.status === 'True' && (await readyReason(expiring))?.status === 'True',
    20_000,
    200,
  );

  const table = await runPlugin(admin, ['status', '-n', bed.namespace]);
  expect(table).toMatchObject({ code: 0, stderr: '' });
  expect(table.stdout).toMatch(/^STATE\s+CONNECTIONS\nReady\s+2\nReauthorizationRequired\s+1\n/);
  expect(table.stdout).toMatch(new RegExp(`\\n${expiring}\\s+oidc\\s+expiring\\s+u2\\s+\\S+Z \\(in (1h|2h|119m|120m)\\)`));
  expect(table.stdout).toMatch(
    new RegExp(
      `\\n${failing}\\s+oidc\\s+revoked\\s+ReauthorizationRequired\\s+\\S+\\s+Token refresh failed.*invalid_grant.*\\(log ${failing}\\.`,
    ),
  );
  expect(table.stdout).not.toContain('at-expiring');

  const json = await runPlugin(admin, ['status', '-n', bed.namespace, '-o', 'json']);
  expect(json.code).toBe(0);
  const report = JSON.parse(json.stdout) as StatusReport & { namespace: string };
  expect(report.namespace).toBe(bed.namespace);
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
  const { conn, accessToken } = await importOAuth2(store(), bed.oidc, client, bed.namespace, INTEGRATION, bed.providerName, {
    connectionId: 'on-request',
  });
  const name = conn.resource.metadata.name;
  await eventually(async () => (await readyReason(name))?.status === 'True', 20_000, 200);
  const before = bed.oidc.refreshCalls();

  const run = await runPlugin(admin, ['refresh', name, '-n', bed.namespace]);
  expect(run).toMatchObject({ code: 0, stderr: '' });
  expect(run.stdout).toMatch(new RegExp(`^connection/${name} Refreshed: Refreshed as requested; the token expires at \\S+Z\\.\\n$`));
  expect(bed.oidc.refreshCalls()).toBe(before + 1);
  const token = store().connections.getConnectionByName(bed.namespace, name)?.credentials.access_token;
  expect(token).not.toBe(accessToken);

  const stored = await readCustom<ConnectionResource>(kc, 'connections', bed.namespace, name);
  const record = parseRefreshRequestRecord(stored.metadata.annotations?.[ANNOTATIONS.refreshRequest]);
  expect(record).toMatchObject({ outcome: 'Refreshed', requestedAt: stored.metadata.annotations?.[ANNOTATIONS.refreshRequestedAt] });
  expect(JSON.stringify(stored.metadata.annotations)).not.toContain(String(token));

  const json = await runPlugin(admin, ['refresh', name, '-n', bed.namespace, '-o', 'json']);
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toMatchObject({ connection: name, namespace: bed.namespace, outcome: 'Refreshed' });
  expect(bed.oidc.refreshCalls()).toBe(before + 2);

  const logs = await runPlugin(admin, ['logs', name, '-n', bed.namespace]);
  expect(logs.code).toBe(0);
  expect(logs.stdout).toMatch(/refresh\s+request\s+success\s+\d+ms\s+\S+\s+Token refreshed \(request\)/);
  const entries = (
    JSON.parse((await runPlugin(admin, ['logs', name, '-n', bed.namespace, '-o', 'json'])).stdout) as { entries: OplogEntry[] }
  ).entries;
  expect(entries.filter((e) => e.operation === 'refresh' && e.step === 'request' && e.outcome === 'success')).toHaveLength(2);
  expect(JSON.stringify(entries)).not.toContain(String(token));
});

it('a connection that does not exist, and a refresh nothing answers in time, are said so with exit 1', async () => {
  const missing = await runPlugin(admin, ['logs', 'no-such-connection', '-n', bed.namespace]);
  expect(missing).toMatchObject({ code: 1, stdout: '' });
  expect(missing.stderr).toMatch(/connection "no-such-connection" not found in namespace/);

  // A namespace no controller watches: the request stays, unanswered.
  const other = await createTestNamespace(kc, 'kubectl-unwatched');
  try {
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject(
      customObject(other.name, 'connections', {
        kind: 'Connection',
        metadata: { name: 'lonely' },
        spec: { integration: INTEGRATION, provider: bed.providerName, connectionId: 'lonely', id: 1, authMode: 'OAUTH2' },
      }),
    );
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
  const conn = (await importOAuth2(store(), bed.oidc, client, bed.namespace, INTEGRATION, bed.providerName, { connectionId: 'rbac' })).conn
    .resource.metadata.name;
  const viewer = await serviceAccountKubeconfig(kc, bed.namespace, 'viewer', [
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

  const nobody = await serviceAccountKubeconfig(kc, bed.namespace, 'nobody', []);
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
  const run = await runPlugin(admin, ['bindings', '-n', bed.namespace]);
  if (installed) {
    expect(run).toMatchObject({ code: 0, stdout: 'No CredentialBindings found.\n' });
  } else {
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(/CredentialBinding API \(credentialbindings.latchkey.dev\/v1alpha1\) is not installed/);
  }
});

it('connect-link prints a Connect link for a token of the audience latchkey that RBAC lets create connectsessions, and refuses the others', async () => {
  await createEnvironment(kc, bed.namespace);
  const server = await startReplica(kc, { namespaces: [bed.namespace], components: ['server'], identity: 'links', selfBaseUrl: true });
  try {
    await eventually(
      () => server.ctx.catalog.listEnvironments(bed.namespace).length > 0 && server.ctx.catalog.getIntegration(bed.namespace, INTEGRATION),
    );
    const startSessions = { apiGroups: ['latchkey.dev'], resources: ['connectsessions'], verbs: ['create'] };
    const link = (kubeconfig: string, output: string[] = []) =>
      runPlugin(kubeconfig, ['connect-link', INTEGRATION, '--end-user', 'u-7', '--server', server.url, ...output]);

    const starter = await serviceAccountKubeconfig(kc, bed.namespace, 'starter', [startSessions], { audiences: ['latchkey'] });
    const json = await link(starter, ['-o', 'json']);
    expect(json.code).toBe(0);
    const printed = JSON.parse(json.stdout) as { connect_link: string; expires_at: string };
    expect(printed).toMatchObject({ integration: INTEGRATION, endUser: 'u-7', expires_at: expect.any(String) });
    expect(printed.connect_link.startsWith(`${server.url}/connect?session_token=`)).toBe(true);
    // The session it names is one the Connect API serves, for that end user's integration.
    const token = new URL(printed.connect_link).searchParams.get('session_token')!;
    const session = await fetch(`${server.url}/connect/api/session`, { headers: { authorization: `Bearer ${token}` } });
    expect(session.status).toBe(200);
    expect(JSON.stringify(await session.json())).toContain(INTEGRATION);
    const table = await link(starter);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^http:\/\/\S+\/connect\?session_token=\S+\n$/);

    // Without the right: the server's 403, naming what would allow it.
    const idle = await serviceAccountKubeconfig(kc, bed.namespace, 'idle', [], { audiences: ['latchkey'] });
    const refused = await link(idle);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toContain(`HTTP 403, forbidden: system:serviceaccount:${bed.namespace}:idle may not create connectsessions`);
    expect(refused.stderr).toContain(`in namespace "${bed.namespace}"`);
    // A token for the API server's audience is not Latchkey's.
    const apiOnly = await serviceAccountKubeconfig(kc, bed.namespace, 'api-only', [startSessions]);
    const wrongAudience = await link(apiOnly);
    expect(wrongAudience.code).toBe(1);
    expect(wrongAudience.stderr).toMatch(/HTTP 401, invalid_token: .*audience "latchkey"/);
  } finally {
    await server.stop();
  }
});
