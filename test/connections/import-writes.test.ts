/**
 * An import makes at most two API writes (the Connection and its Secret): the status fields that
 * follow from the credentials are derived for readers until the owning controller writes them.
 * Writes are counted as watch events of a second, independent store (each write is one event).
 */
import { importConnection } from '../../src/connections/service.js';
import type { IntegrationResource, ProviderResource } from '../../src/k8s/resources.js';
import { KubeStore } from '../../src/k8s/store.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let replica: Replica;
let watcher: KubeStore;
const events: string[] = [];

// Only the names and the auth mode are read from these.
const integration = { metadata: { name: 'crm' }, spec: { provider: 'acme' } } as unknown as IntegrationResource;
const provider = { metadata: { name: 'acme' }, spec: { authMode: 'OAUTH2' } } as unknown as ProviderResource;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'import-writes');
  replica = await startReplica(kc, { namespaces: [ns.name] });
  watcher = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
  await watcher.start();
  for (const verb of ['add', 'update', 'delete'] as const) {
    watcher.caches.watched.connections.on(verb, (c) => events.push(`connection ${verb} ${c.metadata.name}`));
    watcher.caches.watched.credentialSecrets.on(verb, (s) => events.push(`secret ${verb} ${s.metadata!.name}`));
  }
});
afterAll(async () => {
  await watcher?.stop();
  await replica?.stop();
  await ns?.delete();
});

it('imports a new connection in two writes, and readers still see its expiry and next refresh', async () => {
  const expiresAt = new Date(Date.now() + 3600_000).toISOString();
  const deps = { connections: replica.ctx.connections, catalog: replica.ctx.catalog, config: replica.ctx.config, clock: replica.ctx.clock };
  const { connection, created } = await importConnection(deps, {
    namespace: ns.name,
    integration,
    provider,
    connectionId: 'two-writes',
    credentials: { type: 'OAUTH2', access_token: 'a1', refresh_token: 'r1', expires_at: expiresAt, raw: {} },
  });
  expect(created).toBe(true);
  const name = connection.resource.metadata.name;
  await eventually(() => events.filter((e) => e.endsWith(` ${name}`)).length >= 2, 30_000, 50);
  // Another import in the same namespace marks the end of this one's writes: events arrive in order per watch.
  await importConnection(deps, {
    namespace: ns.name,
    integration,
    provider,
    connectionId: 'marker',
    credentials: { type: 'OAUTH2', access_token: 'a2', expires_at: expiresAt, raw: {} },
  });
  await eventually(() => events.some((e) => e.startsWith('secret add crm-marker')), 30_000, 50);
  expect(events.filter((e) => e.endsWith(` ${name}`))).toEqual([`connection add ${name}`, `secret add ${name}`]);

  // What a reader sees: the answer, and the replica's reads (REST API, dashboard).
  for (const seen of [connection, replica.ctx.connections.getConnection(ns.name, 'crm', 'two-writes')!]) {
    expect(seen.resource.status?.expiresAt).toBe(expiresAt);
    expect(seen.resource.status?.nextRefreshAt).toBeDefined();
    expect(seen.resource.status?.updatedAt).toBeDefined();
  }
}, 120_000);
