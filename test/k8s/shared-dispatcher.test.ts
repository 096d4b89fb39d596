import { CoreV1Api } from '@kubernetes/client-node';
import { KubeStore } from '../../src/k8s/store.js';
import { testKubeConfig, testLogger } from '../../dev/cluster.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxiedApiServerBed } from '../support/tcp-proxy.js';

const kc = testKubeConfig();
const bed = bedForFile(() => startProxiedApiServerBed(kc, 'shared-dispatcher'));

// The store is not started: no watch connection, only the calls below go through the proxy.
it("a store's API calls, and those of other clients of its KubeConfig, reuse their connections", async () => {
  const store = new KubeStore(bed.viaProxy, { namespaces: [bed.ns.name], logger: testLogger() });
  const other = bed.viaProxy.makeApiClient(CoreV1Api); // as the operation log and the Leases make theirs
  const before = bed.proxy.accepted();
  for (let i = 0; i < 10; i++) {
    await store.caches.core.createNamespacedConfigMap({
      namespace: bed.ns.name,
      body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } },
    });
    await other.readNamespacedConfigMap({ namespace: bed.ns.name, name: `cm-${i}` });
  }
  // 20 calls one after the other: client-node alone opens one TLS connection per call.
  expect(bed.proxy.accepted() - before).toBeLessThanOrEqual(2);

  // Calls in parallel open connections as needed, and the next ones reuse them.
  await Promise.all(
    Array.from({ length: 8 }, (_, i) => store.caches.core.readNamespacedConfigMap({ namespace: bed.ns.name, name: `cm-${i}` })),
  );
  const afterParallel = bed.proxy.accepted();
  for (let i = 0; i < 10; i++) await store.caches.core.readNamespacedConfigMap({ namespace: bed.ns.name, name: `cm-${i}` });
  expect(bed.proxy.accepted()).toBe(afterParallel);

  // A dropped connection (API server restart, load balancer) is replaced by the next call.
  bed.proxy.cut();
  const read = await other.readNamespacedConfigMap({ namespace: bed.ns.name, name: 'cm-3' });
  expect(read.data).toEqual({ i: '3' });
  expect(bed.proxy.accepted()).toBeGreaterThan(afterParallel);
});
