/**
 * CredentialBindings against a real control plane (kube-controller-manager's garbage collector
 * included) and a real OAuth server (oidc-provider): the current access token written into a Secret
 * of an application namespace the Environment allows, following every refresh, and nothing written
 * anywhere else.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Secret } from '@kubernetes/client-node';
import { refresherFor } from '../../src/connections/shared-refresher.js';
import { REAUTH_VERSION_ANNOTATION } from '../../src/auth/refresh/reauthorization.js';
import {
  ANNOTATIONS,
  GROUP,
  VERSION,
  type ConnectionResource,
  type CredentialBindingResource,
  type CredentialBindingSpec,
} from '../../src/k8s/resources.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment } from '../../dev/fixtures.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, readCustom, customObject } from '../support/kube.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const apps = kc.makeApiClient(AppsV1Api);
const client: TestClient = { clientId: 'latchkey-bindings', clientSecret: 'bindings-client-secret-0123456789' };
const INTEGRATION = 'oidc';
/** The label the Environment selects application namespaces by (unique to this run). */
const ALLOW_LABEL = 'latchkey.dev/bindings-test';
const allowValue = randomBytes(4).toString('hex');

let bed: OAuthBed | undefined;
let oidc: OidcTestServer;
let providerName: string;
let envNs: string;
let replica: Replica;
const namespaces: string[] = [];
let allowedNs: string;
let deniedNs: string;

async function appNamespace(prefix: string, labels: Record<string, string>): Promise<string> {
  const name = `t-${prefix}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name, labels: { 'latchkey.dev/test': 'true', ...labels } } } });
  namespaces.push(name);
  return name;
}

beforeAll(async () => {
  bed = await startOAuthBed(kc, { namespace: 'bindings', client, integration: INTEGRATION, accessTokenTtl: 600 });
  ({ oidc, providerName } = bed);
  envNs = bed.ns.name;
  await createEnvironment(kc, envNs, { credentialBindings: { namespaceSelector: { matchLabels: { [ALLOW_LABEL]: allowValue } } } });
  allowedNs = await appNamespace('bind-app', { [ALLOW_LABEL]: allowValue });
  deniedNs = await appNamespace('bind-other', {});
  replica = await startReplica(kc, {
    namespaces: [envNs],
    components: ['controller'],
    identity: 'solo',
    // The scheduler's own margin small: a refresh ahead of it is the binding's.
    config: { leaderElection: false, refreshMarginSeconds: 5 },
  });
  await eventually(() => replica.ctx.catalog.getIntegration(envNs, INTEGRATION) && replica.ctx.catalog.listEnvironments(envNs).length);
});

afterAll(async () => {
  await replica?.stop();
  for (const ns of namespaces) await core.deleteNamespace({ name: ns }).catch(() => undefined);
  await bed?.close();
});

const store = () => replica.ctx;

async function connection(expiresInMs = 600_000) {
  const made = await importOAuth2(store(), oidc, client, envNs, INTEGRATION, providerName, { expiresInMs });
  await eventually(() => store().connections.getConnectionByName(envNs, made.conn.resource.metadata.name));
  return made;
}

async function bind(namespace: string, name: string, connectionId: string, spec: Partial<CredentialBindingSpec> = {}) {
  return (await custom.createNamespacedCustomObject(
    customObject(namespace, 'credentialbindings', {
      kind: 'CredentialBinding',
      metadata: { name },
      spec: { connectionRef: { namespace: envNs, integration: INTEGRATION, connectionId }, ...spec },
    }),
  )) as CredentialBindingResource;
}

/** Waits for the binding's Ready condition with `reason` (computed for its current generation). */
async function readyOf(namespace: string, name: string, reason: string, timeoutMs = 20_000) {
  return eventually(
    async () => {
      const b = await readCustom<CredentialBindingResource>(kc, 'credentialbindings', namespace, name);
      const ready = condition(b, 'Ready');
      return ready?.reason === reason && ready.observedGeneration === b.metadata.generation ? b : undefined;
    },
    timeoutMs,
    100,
  );
}

async function readSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
  try {
    return await core.readNamespacedSecret({ namespace, name });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

const decoded = (s: V1Secret | undefined) =>
  Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

it('writes the current access token, and nothing else, into a Secret of an allowed namespace; kubectl wait sees Ready', async () => {
  const { conn, accessToken, refreshToken } = await connection();
  const connectionId = conn.resource.spec.connectionId;
  const binding = await bind(allowedNs, 'api-token', connectionId, {
    target: {
      name: 'oidc-token',
      template: { token: '${accessToken}', authorization: 'Bearer ${accessToken}', connection: '${integration}/${connectionId}' },
    },
  });

  // kubectl wait --for=condition=Ready, as a user would.
  const kubeconfig = process.env.LATCHKEY_TEST_KUBECONFIG!;
  await promisify(execFile)(
    'kubectl',
    ['--kubeconfig', kubeconfig, '-n', allowedNs, 'wait', '--for=condition=Ready', 'credentialbinding/api-token', '--timeout=30s'],
    { timeout: 40_000 },
  );
  const ready = await readyOf(allowedNs, 'api-token', 'Synced');
  expect(condition(ready, 'Synced')).toMatchObject({ status: 'True', observedGeneration: ready.metadata.generation });
  expect(ready.status).toMatchObject({ secretName: 'oidc-token', expiresAt: conn.credentials.expires_at, observedGeneration: 1 });
  expect(Date.parse(ready.status!.lastSyncTime!)).toBeGreaterThan(Date.now() - 60_000);

  const secret = (await readSecret(allowedNs, 'oidc-token'))!;
  expect(decoded(secret)).toEqual({
    token: accessToken,
    authorization: `Bearer ${accessToken}`,
    connection: `${INTEGRATION}/${connectionId}`,
  });
  expect(secret.type).toBe('latchkey.dev/bound-token');
  expect(secret.metadata!.annotations![ANNOTATIONS.expiresAt]).toBe(conn.credentials.expires_at);
  expect(secret.metadata!.ownerReferences).toEqual([
    expect.objectContaining({ kind: 'CredentialBinding', name: 'api-token', uid: binding.metadata.uid, controller: true }),
  ]);
  // Never the refresh token or the client secret, in the Secret or in the binding.
  const everything = JSON.stringify([decoded(secret), secret.metadata, ready]);
  expect(everything).not.toContain(refreshToken);
  expect(everything).not.toContain(client.clientSecret);
  expect(JSON.stringify(ready)).not.toContain(accessToken);
  // The token works at the provider.
  expect((await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${decoded(secret).token}` } })).status).toBe(200);

  // The printer columns read what the status says.
  const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, '-n', allowedNs, 'get', 'lkbinding', 'api-token']);
  expect(stdout).toMatch(/ENVIRONMENT\s+INTEGRATION\s+CONNECTION\s+SECRET\s+READY\s+REASON\s+EXPIRES\s+SYNCED\s+AGE/);
  expect(stdout).toContain('oidc-token');
  expect(stdout).toMatch(/True\s+Synced/);
});

it('follows a forced refresh within seconds: the new token, its expiry, a later sync time', async () => {
  const { conn, accessToken } = await connection();
  const connectionId = conn.resource.spec.connectionId;
  await bind(allowedNs, 'follows', connectionId);
  const first = await readyOf(allowedNs, 'follows', 'Synced');
  expect(decoded(await readSecret(allowedNs, 'follows')).token).toBe(accessToken);

  await new Promise((r) => setTimeout(r, 1_100)); // lastSyncTime has a resolution of one second
  const refreshed = await refresherFor(replica.ctx).ensureFresh(envNs, INTEGRATION, connectionId, { reason: 'fetch', force: true });
  const newToken = refreshed.credentials.access_token as string;
  expect(newToken).not.toBe(accessToken);
  const secret = await eventually(
    async () => {
      const s = await readSecret(allowedNs, 'follows');
      return decoded(s).token === newToken ? s : undefined;
    },
    10_000,
    50,
  );
  expect(secret.metadata!.annotations![ANNOTATIONS.expiresAt]).toBe(refreshed.credentials.expires_at);
  const after = await eventually(async () => {
    const b = await readCustom<CredentialBindingResource>(kc, 'credentialbindings', allowedNs, 'follows');
    return b.status?.expiresAt === refreshed.credentials.expires_at ? b : undefined;
  });
  expect(Date.parse(after.status!.lastSyncTime!)).toBeGreaterThan(Date.parse(first.status!.lastSyncTime!));
  expect(condition(after, 'Ready')).toMatchObject({ status: 'True', reason: 'Synced' });
});

it("asks for a refresh when the token is due within the binding's own margin, before writing it", async () => {
  // 60 s left: not due for the scheduler (5 s margin), due for a binding with a 120 s margin.
  const callsBefore = oidc.refreshCalls();
  const { conn, accessToken } = await connection(60_000);
  await bind(allowedNs, 'margin', conn.resource.spec.connectionId, { refreshBeforeSeconds: 120 });
  const ready = await readyOf(allowedNs, 'margin', 'Synced');
  const token = decoded(await readSecret(allowedNs, 'margin')).token!;
  expect(token).not.toBe(accessToken);
  expect(oidc.refreshCalls()).toBeGreaterThan(callsBefore);
  expect(Date.parse(ready.status!.expiresAt!) - Date.now()).toBeGreaterThan(120_000);
  expect(store().connections.getConnectionByName(envNs, conn.resource.metadata.name)!.credentials.access_token).toBe(token);
});

it('refuses a binding from a namespace the Environment does not select, and writes nothing', async () => {
  const { conn } = await connection();
  await bind(deniedNs, 'not-allowed', conn.resource.spec.connectionId);
  const refused = await readyOf(deniedNs, 'not-allowed', 'NotAllowed');
  expect(condition(refused, 'Ready')).toMatchObject({ status: 'False' });
  expect(condition(refused, 'Synced')).toMatchObject({ status: 'False', reason: 'NotAllowed' });
  expect(condition(refused, 'Ready')!.message).toContain(`namespace ${deniedNs} is not selected by Environment ${envNs}/`);
  expect(refused.status!.expiresAt).toBeUndefined();
  expect(await readSecret(deniedNs, 'not-allowed')).toBeUndefined();
  const secrets = await core.listNamespacedSecret({ namespace: deniedNs, labelSelector: 'app.kubernetes.io/managed-by=latchkey' });
  expect(secrets.items).toHaveLength(0);
});

it('the Environment taking its permission back empties a bound Secret at once; giving it back refills it', async () => {
  const { conn, accessToken } = await connection();
  await bind(allowedNs, 'withdrawn', conn.resource.spec.connectionId);
  await readyOf(allowedNs, 'withdrawn', 'Synced');
  const setSelector = async (value: string) => {
    const env = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: envNs,
      plural: 'environments',
      name: 'test',
    })) as {
      spec: Record<string, unknown>;
    };
    env.spec.credentialBindings = { namespaceSelector: { matchLabels: { [ALLOW_LABEL]: value } } };
    await custom.replaceNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: envNs,
      plural: 'environments',
      name: 'test',
      body: env,
    });
  };
  await setSelector('nobody');
  try {
    await readyOf(allowedNs, 'withdrawn', 'NotAllowed');
    expect(decoded(await readSecret(allowedNs, 'withdrawn'))).toEqual({ token: '' });
  } finally {
    await setSelector(allowValue);
  }
  await readyOf(allowedNs, 'withdrawn', 'Synced');
  expect(decoded(await readSecret(allowedNs, 'withdrawn'))).toEqual({ token: accessToken });
});

it('refuses at the API server a template naming anything but the token and the connection (a refresh token, a client secret)', async () => {
  const { conn } = await connection();
  for (const value of ['${refreshToken}', 'Bearer ${clientSecret}', '${credentials.refresh_token}']) {
    await expect(
      bind(allowedNs, `bad-${randomBytes(2).toString('hex')}`, conn.resource.spec.connectionId, { target: { template: { x: value } } }),
    ).rejects.toMatchObject({ code: 422 });
  }
});

it("leaves a Secret that is not the binding's alone (SecretNotOwned), and writes nothing for a template the connection cannot fill", async () => {
  const { conn } = await connection();
  const connectionId = conn.resource.spec.connectionId;
  await core.createNamespacedSecret({ namespace: allowedNs, body: { metadata: { name: 'taken' }, stringData: { token: 'mine' } } });
  await bind(allowedNs, 'collides', connectionId, { target: { name: 'taken' } });
  const collided = await readyOf(allowedNs, 'collides', 'SecretNotOwned');
  expect(condition(collided, 'Synced')).toMatchObject({ status: 'False', reason: 'SecretNotOwned' });
  const taken = (await readSecret(allowedNs, 'taken'))!;
  expect(decoded(taken)).toEqual({ token: 'mine' });
  expect(taken.metadata!.ownerReferences).toBeUndefined();

  await bind(allowedNs, 'unfillable', connectionId, { target: { template: { org: '${connectionConfig.org}' } } });
  const invalid = await readyOf(allowedNs, 'unfillable', 'TemplateInvalid');
  expect(condition(invalid, 'Ready')!.message).toContain("the connection's configuration has no org");
  expect(await readSecret(allowedNs, 'unfillable')).toBeUndefined();
});

it('deleting the binding deletes its Secret (owner reference)', async () => {
  const { conn } = await connection();
  await bind(allowedNs, 'short-lived', conn.resource.spec.connectionId);
  await readyOf(allowedNs, 'short-lived', 'Synced');
  expect(await readSecret(allowedNs, 'short-lived')).toBeDefined();
  await custom.deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: allowedNs,
    plural: 'credentialbindings',
    name: 'short-lived',
  });
  // The garbage collector deletes it; it watches a new kind (the CRD the global setup installed) only
  // after its next discovery of the API (every 30 s), so the first such deletion of a run can take that long.
  await eventually(async () => (await readSecret(allowedNs, 'short-lived')) === undefined, 90_000, 200);
}, 120_000);

it("deleting the connection empties the Secret's values and sets Ready=False with the reason", async () => {
  const { conn } = await connection();
  await bind(allowedNs, 'orphan', conn.resource.spec.connectionId, { target: { template: { token: '${accessToken}', url: 'x' } } });
  await readyOf(allowedNs, 'orphan', 'Synced');
  await store().connections.deleteConnection(envNs, conn.resource.metadata.name);
  const gone = await readyOf(allowedNs, 'orphan', 'ConnectionNotFound');
  expect(condition(gone, 'Ready')).toMatchObject({ status: 'False' });
  expect(gone.status!.expiresAt).toBeUndefined();
  const secret = (await readSecret(allowedNs, 'orphan'))!;
  expect(decoded(secret)).toEqual({ token: '', url: '' });
  expect(secret.metadata!.annotations?.[ANNOTATIONS.expiresAt]).toBeUndefined();
});

it('a grant the provider refuses empties the Secret (ReauthorizationRequired)', async () => {
  // 12 s left: the scheduler (5 s margin) refreshes it soon after; the binding's margin 0 leaves that to it.
  const { conn, refreshToken } = await connection(12_000);
  await bind(allowedNs, 'revoked', conn.resource.spec.connectionId, { refreshBeforeSeconds: 0 });
  await readyOf(allowedNs, 'revoked', 'Synced');
  await oidc.revoke(refreshToken, client);
  // The scheduled refresh meets invalid_grant; the connection needs re-authorization.
  const revoked = await readyOf(allowedNs, 'revoked', 'ReauthorizationRequired', 30_000);
  expect(condition(revoked, 'Synced')).toMatchObject({ status: 'False', reason: 'ReauthorizationRequired' });
  expect(revoked.status!.expiresAt).toBeUndefined();
  expect(decoded(await readSecret(allowedNs, 'revoked'))).toEqual({ token: '' });
});

it("a grant refused on the binding's own refresh empties the Secret and marks the connection for re-authorization, asked once", async () => {
  // 60 s left: not due for the scheduler (5 s margin); due for the binding once its margin is 120 s.
  const { conn, accessToken, refreshToken } = await connection(60_000);
  const name = conn.resource.metadata.name;
  await bind(allowedNs, 'refused-own', conn.resource.spec.connectionId, { refreshBeforeSeconds: 0 });
  await readyOf(allowedNs, 'refused-own', 'Synced');
  expect(decoded(await readSecret(allowedNs, 'refused-own'))).toEqual({ token: accessToken });
  await oidc.revoke(refreshToken, client);
  const callsBefore = oidc.refreshCalls();
  await custom.patchNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: allowedNs,
    plural: 'credentialbindings',
    name: 'refused-own',
    body: [{ op: 'replace', path: '/spec/refreshBeforeSeconds', value: 120 }],
  });
  // The binding's refresh meets invalid_grant.
  const refused = await readyOf(allowedNs, 'refused-own', 'ReauthorizationRequired');
  expect(condition(refused, 'Ready')).toMatchObject({ status: 'False', observedGeneration: 2 });
  expect(condition(refused, 'Ready')!.message).toContain('re-authorization required');
  expect(condition(refused, 'Synced')).toMatchObject({ status: 'False', reason: 'ReauthorizationRequired' });
  expect(refused.status!.expiresAt).toBeUndefined();
  const secret = (await readSecret(allowedNs, 'refused-own'))!;
  expect(decoded(secret)).toEqual({ token: '' });
  expect(secret.metadata!.annotations?.[ANNOTATIONS.expiresAt]).toBeUndefined();
  // The connection is marked as for a refusal met by the scheduler: NeedsReauthorization, nothing asks the provider again.
  const marked = await eventually(
    async () => {
      const c = await readCustom<ConnectionResource>(kc, 'connections', envNs, name);
      return condition(c, 'NeedsReauthorization')?.status === 'True' ? c : undefined;
    },
    20_000,
    100,
  );
  expect(marked.metadata.annotations?.[REAUTH_VERSION_ANNOTATION]).toBe(
    store().connections.getConnectionByName(envNs, name)!.credentialsVersion,
  );
  // Past the binding's retry interval (10 s): the revoked grant was sent to the provider once.
  await new Promise((r) => setTimeout(r, 12_000));
  expect(oidc.refreshCalls() - callsBefore).toBe(1);
  expect(condition(await readCustom<CredentialBindingResource>(kc, 'credentialbindings', allowedNs, 'refused-own'), 'Ready')).toMatchObject(
    {
      status: 'False',
      reason: 'ReauthorizationRequired',
    },
  );
}, 60_000);

it('restarts the named Deployment when the token changes (pod template annotation, as kubectl rollout restart)', async () => {
  const labels = { app: 'consumer' };
  await apps.createNamespacedDeployment({
    namespace: allowedNs,
    body: {
      metadata: { name: 'consumer' },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'example.invalid/consumer:1' }] } },
      },
    },
  });
  const restartedAt = async () =>
    (await apps.readNamespacedDeployment({ namespace: allowedNs, name: 'consumer' })).spec!.template.metadata!.annotations?.[
      ANNOTATIONS.restartedAt
    ];
  const { conn } = await connection();
  await bind(allowedNs, 'restarts', conn.resource.spec.connectionId, { rolloutRestartTargets: [{ kind: 'Deployment', name: 'consumer' }] });
  await readyOf(allowedNs, 'restarts', 'Synced');
  // The first write creates the Secret: nothing ran with an older token, nothing is restarted.
  expect(await restartedAt()).toBeUndefined();

  const refreshed = await refresherFor(replica.ctx).ensureFresh(envNs, INTEGRATION, conn.resource.spec.connectionId, {
    reason: 'fetch',
    force: true,
  });
  await eventually(async () => decoded(await readSecret(allowedNs, 'restarts')).token === refreshed.credentials.access_token, 10_000, 50);
  const at = await eventually(restartedAt, 10_000, 50);
  expect(Date.parse(at)).toBeGreaterThan(Date.now() - 30_000);
  const b = await readCustom<CredentialBindingResource>(kc, 'credentialbindings', allowedNs, 'restarts');
  expect(condition(b, 'Synced')).toMatchObject({ status: 'True', reason: 'Synced' });
});
