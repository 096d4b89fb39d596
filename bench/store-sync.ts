/**
 * Child process of bench/store.ts: starts a fresh KubeStore on one namespace, as a Latchkey replica
 * does at start-up, and prints one JSON line with the time to sync and the memory retained after
 * sync. Run with --expose-gc so the retained heap can be measured after a full collection.
 *
 *   BENCH_KUBECONFIG=... BENCH_NAMESPACE=... BENCH_EXPECT=1000 node --expose-gc dist/bench/store-sync.js
 */
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeStore } from '../src/k8s/store.js';
import { createLogger } from '../src/platform/log.js';

export interface SyncResult {
  connections: number;
  /** From process start (node boot and module loading included) to caches synced. */
  readyMs: number;
  /** KubeStore.start(): every informer's initial list. */
  syncMs: number;
  heapBefore: number;
  heapAfter: number;
  rssBefore: number;
  rssAfter: number;
  externalAfter: number;
  /** Mean cost of KubeStore.getConnection (cache lookups and decoding the credentials), in µs. */
  getConnectionUs: number;
}

function collect(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage();
}

async function main(): Promise<void> {
  const kubeconfig = process.env.BENCH_KUBECONFIG;
  const namespace = process.env.BENCH_NAMESPACE;
  const expected = Number(process.env.BENCH_EXPECT);
  if (!kubeconfig || !namespace || !Number.isInteger(expected))
    throw new Error('BENCH_KUBECONFIG, BENCH_NAMESPACE and BENCH_EXPECT are required');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const logger = createLogger('silent');

  const before = collect();
  const t0 = performance.now();
  const store = new KubeStore(kc, { namespaces: [namespace], logger });
  await store.start();
  const syncMs = performance.now() - t0;
  const readyMs = performance.now();

  const connections = store.connectionScans.listConnections(namespace);
  if (connections.length !== expected) throw new Error(`expected ${expected} complete connections after sync, found ${connections.length}`);
  const after = collect();

  // Read every connection once through the same call the REST API and the proxy make.
  const t1 = performance.now();
  for (const c of connections) {
    if (!store.connections.getConnection(namespace, c.spec.integration, c.spec.connectionId))
      throw new Error(`connection ${c.spec.connectionId} not readable`);
  }
  const getConnectionUs = connections.length ? ((performance.now() - t1) * 1000) / connections.length : NaN;

  await store.stop();
  const result: SyncResult = {
    connections: connections.length,
    readyMs,
    syncMs,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    rssBefore: before.rss,
    rssAfter: after.rss,
    externalAfter: after.external,
    getConnectionUs,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`store-sync failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
