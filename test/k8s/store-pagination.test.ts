/**
 * A store's first list is read in pages of 500: with more objects than one page, every Connection and
 * every credentials Secret must still be in the caches of a store started afterwards. (Custom object
 * lists carry their continue token as raw JSON `continue`; reading only client-node's `_continue`
 * stopped the Connections' list at its first page, so a restarted controller never saw the rest.)
 */
import { KubeStore } from '../../src/k8s/store.js';
import { createTestNamespace, testKubeConfig, testLogger } from '../../dev/cluster.js';

const kc = testKubeConfig();
const COUNT = 1_100;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'pages');
});
afterAll(async () => {
  await ns.delete();
});

it('a store started after more than two pages of connections were written holds all of them, with their credentials', async () => {
  const writer = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
  await writer.start();
  try {
    const ids = Array.from({ length: COUNT }, (_, i) => `user-${i}`);
    // 16 at a time: what the API server on a shared 2-core machine takes without timing out.
    for (let i = 0; i < ids.length; i += 16) {
      await Promise.all(
        ids.slice(i, i + 16).map((connectionId) =>
          writer.connections.createConnection({
            namespace: ns.name,
            spec: { integration: 'paged', provider: 'github', connectionId, authMode: 'API_KEY', metadata: {}, connectionConfig: {} },
            credentials: { type: 'API_KEY', apiKey: `key-${connectionId}` },
          }),
        ),
      );
    }
  } finally {
    await writer.stop();
  }

  const reader = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
  await reader.start();
  try {
    expect(reader.connectionScans.listConnections(ns.name).length).toBe(COUNT);
    const missing = [0, 499, 500, 999, 1000, COUNT - 1].filter(
      (i) => reader.connections.getConnection(ns.name, 'paged', `user-${i}`)?.credentials.apiKey !== `key-user-${i}`,
    );
    expect(missing).toEqual([]);
  } finally {
    await reader.stop();
  }
});
