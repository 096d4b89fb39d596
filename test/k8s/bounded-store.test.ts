/**
 * A bounded store (a server's, LATCHKEY_CONNECTION_CACHE_ENTRIES) on a real API server: it lists
 * nothing, reads connections on demand, keeps at most its size, and drops what another replica
 * changes as the metadata-only watch reports it.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { connectionObjectName } from '../../src/k8s/names.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import type { BoundedCache } from '../../src/k8s/bounded-cache.js';
import { KubeStore, type StoreParts } from '../../src/k8s/store.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
/** Another replica: caches everything (as the controller's and the tests' stores do), and writes. */
let writer: KubeStore;
let bounded: KubeStore;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'bounded-store');
  writer = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
  bounded = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger(), boundedConnections: { maxEntries: 2 }, scanPageSize: 2 });
  await Promise.all([writer.start(), bounded.start()]);
});
afterAll(async () => {
  await Promise.all([writer?.stop(), bounded?.stop()]);
  await ns?.delete();
});

const spec = (integration: string, connectionId: string, endUser = 'user-1') => ({
  integration,
  provider: 'github',
  connectionId,
  authMode: 'API_KEY' as const,
  endUser: { id: endUser },
  connectionConfig: {},
});
const key = (apiKey: string) => ({ type: 'API_KEY', apiKey });
const size = (s: StoreParts) => (s.caches.connections as BoundedCache<never>).size;

it('keeps nothing at start, reads a connection on demand and at most maxEntries of them', async () => {
  for (const id of ['a', 'b', 'c'])
    await writer.connections.createConnection({ namespace: ns.name, spec: spec('keys', id), credentials: key(`k-${id}`) });
  expect(bounded.connections.getConnection(ns.name, 'keys', 'a')).toBeUndefined();
  expect(size(bounded)).toBe(0);
  for (const id of ['a', 'b', 'c'])
    expect((await bounded.connections.findConnection(ns.name, 'keys', id))?.credentials.apiKey).toBe(`k-${id}`);
  expect(size(bounded)).toBe(2);
  // The most recent two are answered without the API server.
  expect(bounded.connections.getConnection(ns.name, 'keys', 'c')?.credentials.apiKey).toBe('k-c');
  expect(bounded.connections.getConnection(ns.name, 'keys', 'a')).toBeUndefined();
  expect(await bounded.connections.findConnection(ns.name, 'keys', 'nobody')).toBeUndefined();
  // The name is derived from the integration and the ID: another integration's ID does not answer.
  expect(await bounded.connections.findConnection(ns.name, 'other', 'a')).toBeUndefined();
});

it('drops a kept connection when another replica changes its credentials, and then reads the new ones', async () => {
  await writer.connections.createConnection({ namespace: ns.name, spec: spec('keys', 'rotated'), credentials: key('before') });
  expect((await bounded.connections.findConnection(ns.name, 'keys', 'rotated'))?.credentials.apiKey).toBe('before');
  expect(bounded.connections.getConnection(ns.name, 'keys', 'rotated')).toBeDefined();
  const name = connectionObjectName('keys', 'rotated');
  await writer.connections.updateCredentials(ns.name, name, () => key('after'));
  // The watch's event drops it: no timer, no expiry.
  await eventually(() => bounded.connections.getConnection(ns.name, 'keys', 'rotated') === undefined || undefined);
  expect((await bounded.connections.findConnection(ns.name, 'keys', 'rotated'))?.credentials.apiKey).toBe('after');
  // A change of the Connection alone (its spec's metadata) is seen as well.
  await writer.connections.updateConnection(ns.name, name, (c) => ({ ...c, spec: { ...c.spec, metadata: { plan: 'team' } } }));
  await eventually(
    async () =>
      (await bounded.connections.findConnection(ns.name, 'keys', 'rotated'))?.resource.spec.metadata?.plan === 'team' || undefined,
  );
});

it('sees a deletion by another replica', async () => {
  await writer.connections.createConnection({ namespace: ns.name, spec: spec('keys', 'deleted'), credentials: key('k') });
  expect(await bounded.connections.findConnection(ns.name, 'keys', 'deleted')).toBeDefined();
  await custom.deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: 'connections',
    name: connectionObjectName('keys', 'deleted'),
  });
  await eventually(async () => (await bounded.connections.findConnection(ns.name, 'keys', 'deleted')) === undefined || undefined);
});

it('remembers its own writes', async () => {
  const created = await bounded.connections.createConnection({ namespace: ns.name, spec: spec('keys', 'own'), credentials: key('mine') });
  expect(bounded.connections.getConnection(ns.name, 'keys', 'own')?.credentialsVersion).toBe(created.credentialsVersion);
  const written = await bounded.connections.updateCredentials(ns.name, created.resource.metadata.name, () => key('mine-2'));
  expect(bounded.connections.getConnection(ns.name, 'keys', 'own')?.credentials.apiKey).toBe('mine-2');
  expect(bounded.connections.getConnection(ns.name, 'keys', 'own')?.credentialsVersion).toBe(written.credentialsVersion);
});

it('scans connections page by page, narrowed by integration and label, and never puts a caller value into a selector', async () => {
  for (const id of ['s1', 's2', 's3'])
    await writer.connections.createConnection({ namespace: ns.name, spec: spec('scanned', id), credentials: key(id) });
  await writer.connections.createConnection({
    namespace: ns.name,
    spec: spec('scanned', 's4'),
    credentials: key('s4'),
    labels: { 'latchkey.dev/connect-session': 'abc' },
  });
  const scan = async (select: Parameters<KubeStore['connectionScans']['scanConnections']>[1]) => {
    const ids: string[] = [];
    for await (const c of bounded.connectionScans.scanConnections(ns.name, select)) ids.push(c.spec.connectionId);
    return ids.sort();
  };
  // Five pages of two, read one at a time: every connection of the integration, no other.
  expect(await scan({ integrations: ['scanned'] })).toEqual(['s1', 's2', 's3', 's4']);
  expect(await scan({ labels: { 'latchkey.dev/connect-session': 'abc' } })).toEqual(['s4']);
  expect((await scan({})).length).toBeGreaterThanOrEqual(9);
  // Not a label value: it could not be on a connection, and would change the selector's meaning.
  expect(await scan({ integrations: ['scanned,keys'] })).toEqual([]);
  expect(await scan({ integrations: ['x) ,(y'] })).toEqual([]);
  expect(await scan({ labels: { 'latchkey.dev/connect-session': 'abc,latchkey.dev/integration!=x' } })).toEqual([]);
  // The same scan on an informer-backed store answers the same.
  const full: string[] = [];
  for await (const c of writer.connectionScans.scanConnections(ns.name, { integrations: ['scanned'] })) full.push(c.spec.connectionId);
  expect(full.sort()).toEqual(['s1', 's2', 's3', 's4']);
});

it('a scan leaves out a connection whose Secret was never written', async () => {
  const name = connectionObjectName('scanned', 'half');
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: 'connections',
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Connection',
      metadata: { name, labels: { 'latchkey.dev/integration': 'scanned' } },
      spec: { ...spec('scanned', 'half'), id: 7 },
    },
  });
  const ids: string[] = [];
  for await (const c of bounded.connectionScans.scanConnections(ns.name, { integrations: ['scanned'] })) ids.push(c.spec.connectionId);
  expect(ids).not.toContain('half');
  expect(await bounded.connections.findConnection(ns.name, 'scanned', 'half')).toBeUndefined();
});

it('keeps no informer caches of connections', () => {
  expect(() => bounded.caches.watched).toThrow(/bounded store/);
  expect(() => bounded.connectionScans.listConnections(ns.name)).toThrow(/bounded store/);
});
