import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { KubeStore } from '../../src/k8s/store.js';
import { createTestNamespace, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { apiServerBehindProxy, type TcpProxy } from '../support/tcp-proxy.js';

const kc = testKubeConfig();
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
/** The API server behind a proxy that counts the connections opened; `shared` reaches it only through the proxy. */
let proxy: TcpProxy;
let shared: KubeConfig;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'shared-dispatcher');
  ({ proxy, kc: shared } = await apiServerBehindProxy(kc));
});
afterAll(async () => {
  await proxy?.close();
  await ns?.delete();
});

// The store is not started: no watch connection, only the calls below go through the proxy.
it("a store's API calls, and those of other clients of its KubeConfig, reuse their connections", async () => {
  const store = new KubeStore(shared, { namespaces: [ns.name], logger: testLogger() });
  const other = shared.makeApiClient(CoreV1Api); // as the operation log and the Leases make theirs
  const before = proxy.accepted();
  for (let i = 0; i < 10; i++) {
    await store.caches.core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } },
    });
    await other.readNamespacedConfigMap({ namespace: ns.name, name: `cm-${i}` });
  }
  // 20 calls one after the other: client-node alone opens one TLS connection per call.
  expect(proxy.accepted() - before).toBeLessThanOrEqual(2);

  // Calls in parallel open connections as needed, and the next ones reuse them.
  await Promise.all(
    Array.from({ length: 8 }, (_, i) => store.caches.core.readNamespacedConfigMap({ namespace: ns.name, name: `cm-${i}` })),
  );
  const afterParallel = proxy.accepted();
  for (let i = 0; i < 10; i++) await store.caches.core.readNamespacedConfigMap({ namespace: ns.name, name: `cm-${i}` });
  expect(proxy.accepted()).toBe(afterParallel);

  // A dropped connection (API server restart, load balancer) is replaced by the next call.
  proxy.cut();
  const read = await other.readNamespacedConfigMap({ namespace: ns.name, name: 'cm-3' });
  expect(read.data).toEqual({ i: '3' });
  expect(proxy.accepted()).toBeGreaterThan(afterParallel);
});
