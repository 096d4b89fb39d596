import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { KubeStore } from '../../src/k8s/store.js';
import { eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { namespaceForFile } from '../support/file-bed.js';
import { apiServerBehindProxy } from '../support/tcp-proxy.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const ns = namespaceForFile(kc, 'watch');

const integration = (name: string) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'Integration',
  metadata: { name },
  spec: { provider: 'github' },
});

it('recovers when the watch connection breaks and the API server is unreachable for a while', async () => {
  // A client that reaches the API server only through the proxy the test can cut.
  const { proxy, kc: viaProxy } = await apiServerBehindProxy(kc);
  const store = new KubeStore(viaProxy, { namespaces: [ns.name], logger: testLogger() });
  await store.start();
  try {
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'integrations',
      body: integration('before'),
    });
    await eventually(() => store.catalog.getIntegration(ns.name, 'before'));

    proxy.refuse(true);
    proxy.cut();
    // Changes made while the watch is down...
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'integrations',
      body: integration('during'),
    });
    await custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'integrations',
      name: 'before',
    });
    // The cache knows it is stale (what /readyz reports) once its watch failed, and missed the changes.
    await eventually(() => !store.caches.integrations.isFresh && !store.isFresh, 20_000);
    expect(store.catalog.getIntegration(ns.name, 'during')).toBeUndefined();

    proxy.refuse(false);
    // ...are in the cache once the informer has restarted itself.
    await eventually(() => store.catalog.getIntegration(ns.name, 'during') && !store.catalog.getIntegration(ns.name, 'before'), 40_000);
    expect(store.caches.integrations.restarts).toBeGreaterThan(0);
    await eventually(() => store.isFresh, 40_000);

    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'integrations',
      body: integration('after'),
    });
    await eventually(() => store.catalog.getIntegration(ns.name, 'after'), 20_000);
  } finally {
    await store.stop();
    await proxy.close();
  }
});
