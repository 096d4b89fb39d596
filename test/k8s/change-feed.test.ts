/** The change feed on a real API server: what it reports, and that a quiet collection does not make it stale. */
import { CoreV1Api } from '@kubernetes/client-node';
import { ChangeFeed, type Change } from '../../src/k8s/change-feed.js';
import { metadataOnly } from '../../src/k8s/metadata-only.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let feed: ChangeFeed;
const changes: Change[] = [];
let resets = 0;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'change-feed');
  const path = `/api/v1/namespaces/${ns.name}/configmaps`;
  feed = new ChangeFeed({
    kc: metadataOnly(kc),
    path,
    labelSelector: 'feed=yes',
    logger: testLogger(),
    // client-node's watch ends one that brought nothing for this long: here a second, so the test sees several.
    idleTimeoutMs: 1000,
    currentVersion: async () => (await core.listNamespacedConfigMap({ namespace: ns.name, limit: 1 })).metadata?.resourceVersion ?? '0',
  });
  feed.onChange((c) => changes.push(c));
  feed.onReset(() => (resets += 1));
  await feed.start();
});
afterAll(async () => {
  await feed?.stop();
  await ns?.delete();
});

it('stays fresh through a quiet spell longer than its idle timeout, and still reports what changes after it', async () => {
  expect(feed.isFresh).toBe(true);
  const fresh: boolean[] = [];
  for (let i = 0; i < 8; i++) {
    await new Promise((r) => setTimeout(r, 500));
    fresh.push(feed.isFresh);
  }
  expect(fresh.every(Boolean)).toBe(true);
  expect(feed.restarts).toBe(0);
  expect(resets).toBe(1); // the first start only: no history was lost

  await core.createNamespacedConfigMap({
    namespace: ns.name,
    body: { metadata: { name: 'watched', labels: { feed: 'yes' } }, data: { a: '1' } },
  });
  await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'not-selected' }, data: { a: '1' } } });
  await eventually(() => changes.find((c) => c.name === 'watched' && !c.deleted));
  await core.deleteNamespacedConfigMap({ namespace: ns.name, name: 'watched' });
  await eventually(() => changes.find((c) => c.name === 'watched' && c.deleted));
  expect(changes.map((c) => c.name)).not.toContain('not-selected');
  // Metadata only: a change carries the object's name and version, never its data.
  expect(Object.keys(changes[0]!).sort()).toEqual(['deleted', 'name', 'namespace', 'resourceVersion']);
});
