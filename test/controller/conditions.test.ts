/**
 * Reconcilers against a real control plane: Integrations, Environments and Providers get Ready
 * conditions that say what is wrong; a change to a referenced Secret is noticed; deleting an
 * Integration or a Provider that connections use shows in those connections' conditions; a refused
 * credentials version shows as re-authorization. Also the controller's own /healthz, /readyz and /metrics.
 * Each case sets up what it needs, so any one of them runs alone (-t).
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, LABELS, VERSION, type ConnectionResource, type EnvironmentResource } from '../../src/k8s/resources.js';
import { REAUTH_VERSION_ANNOTATION } from '../../src/auth/refresh/reauthorization.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';
import { condition, readCustom, customObject } from '../support/kube.js';
import type { Replica } from '../support/replica.js';
import { ConnectionStatusWriter } from '../../src/domain/connection-status-writers.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
let bed: ControllerBed;
let ns: ControllerBed['ns'];
let replica: Replica;

beforeAll(async () => {
  bed = await startControllerBed(kc, 'conditions');
  ({ ns, replica } = bed);
});

afterAll(async () => {
  await bed?.close();
});

const provider = (suffix: string, spec: Parameters<ControllerBed['provider']>[1]) => bed.provider(suffix, spec);
const readyOf = (plural: string, name: string, reason?: string) => bed.readyOf(plural, name, reason);
/** An Integration written as is (no client Secret made for it). */
const integrationObject = (name: string, spec: Record<string, unknown>) =>
  custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: 'integrations',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Integration', metadata: { name }, spec },
  });

const oauth2Spec = {
  displayName: 'Example',
  authMode: 'OAUTH2' as const,
  authorizationUrl: 'https://auth.example.test/authorize',
  tokenUrl: 'https://auth.example.test/token',
};

it('an Integration whose Secret lacks clientSecret is not Ready, and fixing the Secret makes it Ready', async () => {
  const p = await provider('p-secret', oauth2Spec);
  await createIntegration(kc, ns.name, 'missing-secret', { provider: p }, { clientId: 'id-only' });
  const { ready, obj } = await readyOf('integrations', 'missing-secret', 'SecretKeyMissing');
  expect(ready.status).toBe('False');
  expect(ready.message).toMatch(/lacks "clientSecret"/);
  expect(ready).toMatchObject({ observedGeneration: obj.metadata.generation });

  await core.patchNamespacedSecret({
    namespace: ns.name,
    name: 'missing-secret-client',
    body: [{ op: 'add', path: '/data/clientSecret', value: Buffer.from('now-it-is-there').toString('base64') }],
  });
  const fixed = await readyOf('integrations', 'missing-secret', 'Ready');
  expect(fixed.ready.status).toBe('True');
});

it('tells a missing Secret from one that is not labelled for Latchkey', async () => {
  const p = await provider('p-label', oauth2Spec);
  await core.createNamespacedSecret({
    namespace: ns.name,
    body: { metadata: { name: 'unlabelled' }, stringData: { clientId: 'a', clientSecret: 'b' } },
  });
  await integrationObject('unlabelled', { provider: p, clientSecretRef: { name: 'unlabelled' } });
  await integrationObject('nosecret', { provider: p, clientSecretRef: { name: 'does-not-exist' } });
  const unlabelled = await readyOf('integrations', 'unlabelled', 'SecretNotWatched');
  expect(unlabelled.ready.message).toContain(`${LABELS.watch}=true`);
  await readyOf('integrations', 'nosecret', 'SecretNotFound');
  // Labelling it is noticed.
  await core.patchNamespacedSecret({
    namespace: ns.name,
    name: 'unlabelled',
    body: [{ op: 'add', path: '/metadata/labels', value: { [LABELS.watch]: 'true' } }],
  });
  await readyOf('integrations', 'unlabelled', 'Ready');
});

it('reports an invalid Provider and an Integration that points at a missing one', async () => {
  const p = await provider('p-bad', {
    displayName: 'Bad',
    authMode: 'API_KEY',
    proxy: { baseUrl: 'https://${connectionConfig.subdomain}.example.test' },
  });
  const bad = await bed.providerReady(p);
  expect(bad).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
  expect(bad.message).toMatch(/subdomain/);
  expect(bad.message).toMatch(/\$\{apiKey\}/);

  await integrationObject('orphan', { provider: `nope-${ns.name}` });
  const orphan = await readyOf('integrations', 'orphan', 'ProviderNotFound');
  expect(orphan.ready.message).toContain(`nope-${ns.name}`);
});

it('deleting an Integration or a Provider that connections use shows in their conditions', async () => {
  const p1 = await provider('p-int', oauth2Spec);
  const p2 = await provider('p-prov', oauth2Spec);
  await createIntegration(kc, ns.name, 'will-go', { provider: p1 }, { clientId: 'a', clientSecret: 'b' });
  await createIntegration(kc, ns.name, 'provider-goes', { provider: p2 }, { clientId: 'a', clientSecret: 'b' });
  await readyOf('integrations', 'will-go', 'Ready');
  await readyOf('integrations', 'provider-goes', 'Ready');
  const store = replica.ctx;
  const make = (integration: string, provider: string, connectionId: string) =>
    store.connections.createConnection({
      namespace: ns.name,
      spec: { integration, provider, connectionId, authMode: 'OAUTH2' },
      credentials: { type: 'OAUTH2', access_token: 'never-expires', raw: {} },
    });
  const c1 = (await make('will-go', p1, 'c1')).resource.metadata.name;
  const c2 = (await make('provider-goes', p2, 'c2')).resource.metadata.name;
  for (const c of [c1, c2]) await readyOf('connections', c, 'Ready');
  const first = await readCustom<ConnectionResource>(kc, 'connections', ns.name, c1);
  expect(condition(first, 'Ready')!.message).toMatch(/do not expire/);
  // The healthy conditions say it in their reasons alone (etcd bytes per connection); each still carries its generation.
  expect(first.status?.conditions?.filter((c) => c.type !== 'Ready').map((c) => [c.reason, c.message])).toEqual([
    ['IntegrationReady', ''],
    ['CredentialsPresent', ''],
    ['CredentialsAccepted', ''],
  ]);
  expect(first.status?.conditions?.every((c) => c.observedGeneration === first.metadata.generation)).toBe(true);
  expect(first.status?.observedGeneration).toBe(first.metadata.generation);
  expect(first.status?.nextRefreshAt).toBeUndefined();

  await custom.deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: 'integrations',
    name: 'will-go',
  });
  const gone = await readyOf('connections', c1, 'IntegrationNotFound');
  expect(gone.ready.status).toBe('False');
  expect(condition(gone.obj, 'IntegrationReady')).toMatchObject({ status: 'False', reason: 'IntegrationNotFound' });
  expect(gone.ready.message).toContain('will-go');

  await deleteProvider(kc, p2);
  const noProvider = await readyOf('connections', c2, 'ProviderNotFound');
  expect(noProvider.ready.message).toContain(p2);
  await readyOf('integrations', 'provider-goes', 'ProviderNotFound');

  // Putting the Provider back heals both.
  await applyProvider(kc, p2, oauth2Spec);
  await readyOf('integrations', 'provider-goes', 'Ready');
  await readyOf('connections', c2, 'Ready');
});

it('a token nothing renews turns the connection TokenExpired when it expires, without waiting for a resync', async () => {
  const p = await provider('p-expiring', oauth2Spec);
  await createIntegration(kc, ns.name, 'expiring', { provider: p }, { clientId: 'a', clientSecret: 'b' });
  await readyOf('integrations', 'expiring', 'Ready');
  const expiresAt = new Date(Date.now() + 6_000).toISOString();
  const created = await replica.ctx.connections.createConnection({
    namespace: ns.name,
    spec: { integration: 'expiring', provider: p, connectionId: 'no-refresh-token', authMode: 'OAUTH2' },
    // No refresh token: nothing can renew it.
    credentials: { type: 'OAUTH2', access_token: 'short-lived', expires_at: expiresAt, raw: {} },
  });
  const name = created.resource.metadata.name;
  const valid = await readyOf('connections', name, 'Ready');
  expect(valid.ready.message).toMatch(/cannot be renewed automatically/);
  // The periodic resync is 30 minutes away: only the revisit at the expiry can make this happen.
  const expired = await readyOf('connections', name, 'TokenExpired');
  expect(expired.ready.status).toBe('False');
  expect(expired.ready.message).toContain(expiresAt);
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
});

it('derives re-authorization from the refused credentials version alone, and lifts it when new credentials are stored', async () => {
  const p = await provider('p-refused', oauth2Spec);
  await createIntegration(kc, ns.name, 'refused', { provider: p }, { clientId: 'a', clientSecret: 'b' });
  await readyOf('integrations', 'refused', 'Ready');
  const store = replica.ctx;
  const created = await store.connections.createConnection({
    namespace: ns.name,
    spec: { integration: 'refused', provider: p, connectionId: 'refused-1', authMode: 'OAUTH2' },
    credentials: { type: 'OAUTH2', access_token: 'never-expires', raw: {} },
  });
  const name = created.resource.metadata.name;
  await readyOf('connections', name, 'Ready');

  // What the refresh scheduler records on a permanent failure (and nothing more): the refused Secret
  // version and the provider's answer. The conditions are the connection reconciler's to write.
  await store.connections.updateConnection(ns.name, name, (c) => ({
    ...c,
    metadata: { ...c.metadata, annotations: { ...c.metadata.annotations, [REAUTH_VERSION_ANNOTATION]: created.credentialsVersion } },
  }));
  await store.connections.updateConnectionStatus(ns.name, name, ConnectionStatusWriter.Scheduler, (s) => ({
    ...s,
    errors: [
      { type: 'auth', logId: 'refused-event', message: 'invalid_grant, HTTP 400: grant revoked', occurredAt: new Date().toISOString() },
    ],
  }));
  // Written one after the other, so the reconciler may see the annotation before the answer: wait for both.
  const refused = await eventually(async () => {
    const r = await readyOf('connections', name, 'ReauthorizationRequired');
    return r.ready.message.includes('grant revoked') ? r : undefined;
  });
  expect(refused.ready).toMatchObject({ status: 'False' });
  expect((refused.obj as unknown as ConnectionResource).status?.observedGeneration).toBe(refused.obj.metadata.generation);
  expect(refused.ready.message).toMatch(/reconnect session for connection "refused-1"/);
  expect(condition(refused.obj, 'NeedsReauthorization')).toMatchObject({ status: 'True', reason: 'ReauthorizationRequired' });
  expect(condition(refused.obj, 'CredentialsValid')).toMatchObject({ status: 'False', reason: 'ReauthorizationRequired' });

  // New credentials (another Secret version) lift it.
  await store.connections.updateCredentials(ns.name, name, (cur) => ({ ...cur, access_token: 'a-new-one' }));
  const lifted = await readyOf('connections', name, 'Ready');
  expect(lifted.ready.status).toBe('True');
  expect(condition(lifted.obj, 'NeedsReauthorization')).toMatchObject({ status: 'False', reason: 'Reauthorized' });
  expect(condition(lifted.obj, 'CredentialsValid')).toMatchObject({ status: 'True' });
});

it('checks Environments: Secret, duplicates, webhook URL', async () => {
  await createEnvironment(kc, ns.name, { webhooks: { url: 'https://hooks.example.test/latchkey' } }, 'main');
  const main = await readyOf('environments', 'main', 'Ready');
  // The duplicate must be younger: creationTimestamp has whole seconds, so wait for the clock to pass main's.
  const mainCreated = new Date(main.obj.metadata.creationTimestamp!).getTime();
  await eventually(() => Date.now() >= mainCreated + 1000, 5_000, 50);
  await custom.createNamespacedCustomObject(
    customObject(ns.name, 'environments', {
      kind: 'Environment',
      metadata: { name: 'second' },
      spec: { secretRef: { name: 'no-such-secret' } },
    }),
  );
  const dup = await readyOf('environments', 'second', 'DuplicateEnvironment');
  expect(dup.ready.message).toContain('"main"');
  const mainAfter = await readCustom<EnvironmentResource>(kc, 'environments', ns.name, 'main');
  expect(condition(mainAfter, 'Ready')?.status).toBe('True');
});

it('serves /healthz, /readyz and /metrics with bounded labels', async () => {
  // A connection of its own, so the gauge has something to count and the label check something to find.
  const p = await provider('p-metrics', oauth2Spec);
  await createIntegration(kc, ns.name, 'metrics', { provider: p }, { clientId: 'a', clientSecret: 'b' });
  await readyOf('integrations', 'metrics', 'Ready');
  const created = await replica.ctx.connections.createConnection({
    namespace: ns.name,
    spec: { integration: 'metrics', provider: p, connectionId: 'metrics-connection-id', authMode: 'OAUTH2' },
    credentials: { type: 'OAUTH2', access_token: 'never-expires', raw: {} },
  });
  const name = created.resource.metadata.name;
  await readyOf('connections', name, 'Ready');

  const url = replica.controller!.health!.url;
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  // The gauge is counted from the replica's cache when scraped: wait for the cache to see Ready=True.
  const text = await eventually(
    async () => {
      const body = await (await fetch(`${url}/metrics`)).text();
      return /latchkey_connections\{condition="Ready",status="True"\} [1-9]\d*/.test(body) ? body : undefined;
    },
    20_000,
    100,
  );
  expect(text).toMatch(/latchkey_leader 1/);
  expect(text).toMatch(/latchkey_workqueue_depth\{queue="reconcile"\}/);
  // No connection IDs or object names in label values.
  expect(text).not.toContain(name);
  expect(text).not.toContain('metrics-connection-id');
  expect((await fetch(`${url}/nope`)).status).toBe(404);
});
