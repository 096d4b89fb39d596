/**
 * A file's own namespace and a started KubeStore watching it, as a server replica's, for tests of
 * the code above the store (src/connections). Both are gone after the file's tests.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace, testLogger } from '../../dev/cluster.js';
import { KubeStore } from '../../src/k8s/store.js';
import { bedForFile } from './file-bed.js';

export function storeForFile(kc: KubeConfig, prefix: string): { ns: { name: string }; store: KubeStore } {
  return bedForFile(async () => {
    const ns = await createTestNamespace(kc, prefix);
    const store = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
    await store.start();
    return {
      ns,
      store,
      async close() {
        await store.stop();
        await ns.delete();
      },
    };
  });
}
