/**
 * Memory and start-up against the number of connections: creates connections through
 * KubeStore.createConnection (the import path: Connection, Secret, status) in parallel, then at each
 * size starts a fresh KubeStore in a new Node.js process (bench/store-sync.ts) and measures the time
 * to sync and the heap and RSS retained after sync. Real control plane on loopback; bounded in count
 * and time; the namespace is deleted at the end.
 *
 *   npm run bench:store                                   # rewrites the store section of docs/benchmarks.md
 *   BENCH_STORE_COUNTS=500,2000 BENCH_STORE_REPEATS=1 npm run bench:store
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { connectionObjectName } from '../src/k8s/names.js';
import { CONNECTIONS, GROUP, VERSION, type ConnectionStatus } from '../src/k8s/resources.js';
import { KubeStore, type StoredCredentials } from '../src/k8s/store.js';
import { createLogger } from '../src/platform/log.js';
import { createTestNamespace } from '../dev/cluster.js';
import { machine, median, mib, ms, processCpuMs, runLoad, writeSection, type Summary, startBenchControlPlane } from './support.js';
import type { SyncResult } from './store-sync.js';

const COUNTS = (process.env.BENCH_STORE_COUNTS ?? '1000,5000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0)
  .sort((a, b) => a - b);
const CONCURRENCY = Number(process.env.BENCH_STORE_CONCURRENCY ?? 32);
const REPEATS = Number(process.env.BENCH_STORE_REPEATS ?? 3);
/** Upper bound of the whole creation phase. */
const MAX_CREATE_SECONDS = Number(process.env.BENCH_STORE_MAX_CREATE_SECONDS ?? 300);
const MAX_COUNT = 20_000;
const INTEGRATION = 'bench-oauth';
const PROVIDER = 'bench-oauth-provider';

const here = dirname(fileURLToPath(import.meta.url));
/** Described when the run starts (the load average then). */
const MACHINE = machine();

/** A connection shaped like a real OAuth 2 import: opaque tokens of typical length, end user, metadata. */
function connectionInput(namespace: string, i: number) {
  const now = Date.now();
  const accessToken = randomBytes(135).toString('base64url'); // 180 characters
  const refreshToken = randomBytes(75).toString('base64url'); // 100 characters
  const expiresAt = new Date(now + 3600_000).toISOString();
  const credentials: StoredCredentials = {
    type: 'OAUTH2',
    access_token: accessToken,
    refresh_token: refreshToken,
    expires_at: expiresAt,
    raw: {
      access_token: accessToken,
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid offline_access read write',
    },
  };
  const status: ConnectionStatus = {
    expiresAt,
    nextRefreshAt: new Date(now + 2700_000).toISOString(),
    updatedAt: new Date(now).toISOString(),
  };
  return {
    namespace,
    spec: {
      integration: INTEGRATION,
      provider: PROVIDER,
      connectionId: `conn-${String(i).padStart(6, '0')}`,
      authMode: 'OAUTH2' as const,
      endUser: { id: `user-${i}`, email: `user-${i}@example.test`, displayName: `User ${i}`, tags: { organizationId: `org-${i % 50}` } },
      metadata: { plan: 'pro', region: 'eu' },
      connectionConfig: {},
    },
    credentials,
    status,
  };
}

function syncOnce(kubeconfig: string, namespace: string, expected: number): Promise<SyncResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', join(here, 'store-sync.js')],
      {
        env: { ...process.env, BENCH_KUBECONFIG: kubeconfig, BENCH_NAMESPACE: namespace, BENCH_EXPECT: String(expected) },
        timeout: 120_000,
      },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`store-sync failed: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as SyncResult);
      },
    );
  });
}

interface Row {
  count: number;
  runs: SyncResult[];
  syncMs: number;
  readyMs: number;
  heapAfter: number;
  heapRetained: number;
  rssAfter: number;
  getConnectionUs: number;
}

function row(count: number, runs: SyncResult[]): Row {
  return {
    count,
    runs,
    syncMs: median(runs.map((r) => r.syncMs)),
    readyMs: median(runs.map((r) => r.readyMs)),
    heapAfter: median(runs.map((r) => r.heapAfter)),
    heapRetained: median(runs.map((r) => r.heapAfter - r.heapBefore)),
    rssAfter: median(runs.map((r) => r.rssAfter)),
    getConnectionUs: count ? median(runs.map((r) => r.getConnectionUs)) : NaN,
  };
}

async function main(): Promise<void> {
  if (!COUNTS.length || COUNTS[COUNTS.length - 1]! > MAX_COUNT)
    throw new Error(`BENCH_STORE_COUNTS must be positive and at most ${MAX_COUNT}`);
  const logger = createLogger('silent');
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const ns = await createTestNamespace(kc, 'bench-store');
  const writer = new KubeStore(kc, { namespaces: [ns.name], logger });
  const rows: Row[] = [];
  const creates: Array<{ from: number; to: number; summary: Summary }> = [];
  let sizes = { connection: 0, secret: 0, managedFields: 0 };
  const deadline = Date.now() + MAX_CREATE_SECONDS * 1000;

  try {
    process.stderr.write(`[store] empty namespace: ${REPEATS} fresh stores\n`);
    const baseline: SyncResult[] = [];
    for (let r = 0; r < REPEATS; r++) baseline.push(await syncOnce(cp.kubeconfigPath, ns.name, 0));
    rows.push(row(0, baseline));

    let have = 0;
    for (const target of COUNTS) {
      const remaining = Math.max(1, (deadline - Date.now()) / 1000);
      const from = have;
      const summary = await runLoad({
        count: target - have,
        concurrency: CONCURRENCY,
        maxSeconds: remaining,
        controlPlaneCpu: () => processCpuMs(cp.workDir),
        op: async (i) => {
          await writer.connections.createConnection(connectionInput(ns.name, from + i));
        },
        onFirstError: (err) => process.stderr.write(`[store] create failed: ${(err as Error).message}\n`),
      });
      have += summary.count;
      creates.push({ from, to: have, summary });
      process.stderr.write(`[store] created ${summary.count} connections (${summary.errors} errors) in ${summary.seconds.toFixed(1)} s\n`);
      if (summary.errors || have !== target)
        throw new Error(`wanted ${target} connections, have ${have} (${summary.errors} errors; time bound ${MAX_CREATE_SECONDS} s)`);

      const runs: SyncResult[] = [];
      for (let r = 0; r < REPEATS; r++) runs.push(await syncOnce(cp.kubeconfigPath, ns.name, target));
      rows.push(row(target, runs));
      process.stderr.write(
        `[store] ${target}: sync ${ms(rows.at(-1)!.syncMs)}, heap after ${mib(rows.at(-1)!.heapAfter)}, rss ${mib(rows.at(-1)!.rssAfter)}\n`,
      );
    }

    // What one connection weighs as the API server stores it (JSON, managedFields included).
    const name = connectionObjectName(INTEGRATION, 'conn-000000');
    const custom = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const connection = await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: CONNECTIONS.plural,
      name,
    });
    const secret = await core.readNamespacedSecret({ namespace: ns.name, name });
    const managed = (o: unknown) =>
      Buffer.byteLength(JSON.stringify((o as { metadata?: { managedFields?: unknown } }).metadata?.managedFields ?? []));
    sizes = {
      connection: Buffer.byteLength(JSON.stringify(connection)),
      secret: Buffer.byteLength(JSON.stringify(secret)),
      managedFields: managed(connection) + managed(secret),
    };
  } finally {
    await ns.delete();
    await cp.stop();
  }
  for (const r of rows) {
    process.stdout.write(
      `${r.count} connections: sync ${ms(r.syncMs)}, ready ${ms(r.readyMs)}, heap retained ${mib(r.heapRetained)}, rss ${mib(r.rssAfter)}, getConnection ${r.count ? `${r.getConnectionUs.toFixed(1)} µs` : '—'}\n`,
    );
  }
  writeReport(rows, creates, sizes);
}

function range(values: number[]): string {
  return `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;
}

function writeReport(
  rows: Row[],
  creates: Array<{ from: number; to: number; summary: Summary }>,
  sizes: { connection: number; secret: number; managedFields: number },
): void {
  const base = rows[0]!;
  const largest = rows[rows.length - 1]!;
  const perK = (r: Row, f: (r: Row) => number) => (r.count ? ((f(r) - f(base)) / r.count) * 1000 : NaN);
  const heapPerK = perK(largest, (r) => r.heapRetained);
  const rssPerK = perK(largest, (r) => r.rssAfter);
  const syncPerK = perK(largest, (r) => r.syncMs);
  const totalCreated = creates.reduce((n, c) => n + c.summary.count, 0);
  const totalSeconds = creates.reduce((n, c) => n + c.summary.seconds, 0);
  const createRate = totalCreated / totalSeconds;
  const createP50 = median(creates.map((c) => c.summary.p50));
  const weighted = (f: (s: Summary) => number) => creates.reduce((n, c) => n + f(c.summary) * c.summary.count, 0) / totalCreated;
  const nodeCores = (createRate * weighted((x) => x.cpuMsPerOp)) / 1000;
  const cpCores = (createRate * weighted((x) => x.controlPlaneCpuMsPerOp)) / 1000;
  const idle = weighted((x) => x.machineIdle);

  const text = `## Memory and start-up vs number of connections (\`npm run bench:store\`, \`bench/store.ts\`)

**What:** how much memory a Latchkey replica keeps for its connections and how long it takes to start
serving, as the number of connections grows. Every replica (REST server and controller) holds every
Connection and every credentials Secret of its watched namespaces in informer caches, so this is the
figure to size the pods' memory requests and limits with.

**How:** connections were created through \`KubeStore.createConnection\` (the path the import takes: the
Connection, its Secret, then its status; ${CONCURRENCY} in parallel), shaped like real OAuth 2 imports: a
180-character access token, a 100-character refresh token, \`raw\` with both, an end user with e-mail, display
name and one tag, two metadata keys. As the API server stores them, one Connection is ${(sizes.connection / 1024).toFixed(1)} KiB
and its Secret ${(sizes.secret / 1024).toFixed(1)} KiB of JSON, ${((sizes.connection + sizes.secret) / 1024).toFixed(1)} KiB per connection, of which
${(sizes.managedFields / 1024).toFixed(1)} KiB is \`metadata.managedFields\` (the API server's field-ownership bookkeeping; the informers drop it before caching). At each size, a fresh Node.js process (\`node --expose-gc dist/bench/store-sync.js\`) started a
\`KubeStore\` on the namespace (6 informers: providers, integrations, connections, environments,
credentials Secrets, watched Secrets), waited for it to sync, forced garbage collection and read
\`process.memoryUsage()\`; ${REPEATS} processes per size, medians shown. "Retained heap" is the V8 heap after a full
GC minus the same process's heap before the store was created. The row with 0 connections is the
baseline (Node.js, the Kubernetes client, pino, zod) that every process pays anyway.

| connections | time to sync (\`store.start()\`), median (min–max) | process start to synced | retained heap | retained heap per 1,000 | heap after sync | RSS after sync | RSS per 1,000 (vs 0) | \`getConnection\` |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.map((r) => `| ${r.count} | ${ms(r.syncMs)} (${range(r.runs.map((x) => x.syncMs))}) | ${ms(r.readyMs)} | ${mib(r.heapRetained)} | ${r.count ? mib(perK(r, (x) => x.heapRetained)) : '—'} | ${mib(r.heapAfter)} | ${mib(r.rssAfter)} | ${r.count ? mib(perK(r, (x) => x.rssAfter)) : '—'} | ${r.count ? `${r.getConnectionUs.toFixed(1)} µs` : '—'} |`).join('\n')}

Per 1,000 connections (from the ${largest.count} row minus the baseline): **${mib(heapPerK)} of retained heap,
${mib(rssPerK)} of RSS, ${ms(syncPerK)} more start-up**.

Creating them: ${totalCreated} connections in ${totalSeconds.toFixed(1)} s, **${createRate.toFixed(0)} connections/s** (${(createRate * 3).toFixed(0)}
API writes/s: Connection, Secret, status each), p50 ${ms(createP50)} per connection at ${CONCURRENCY} in flight. Meanwhile
the Node.js process kept ${nodeCores.toFixed(2)} cores busy, the control plane (kube-apiserver, etcd, controller manager;
from \`/proc\`) ${cpCores.toFixed(2)}, and ${(idle * 100).toFixed(0)} % of the machine's CPU was idle (other processes on this shared
machine included).

**Reading it:**
- Memory per connection: about ${mib(heapPerK)} of retained heap per 1,000 connections at ${largest.count}
  (the "per 1,000" columns show whether it stays flat across sizes, i.e. grows linearly). RSS grows
  faster than the retained heap; since the heap after a full GC shows the difference is not live objects,
  it is memory the process used while receiving and parsing the LIST responses and has not returned to the
  operating system. RSS, not the retained heap, is the figure to set a container limit from. What is retained is the two parsed objects per connection in the informer caches,
  without \`managedFields\` (${(sizes.managedFields / 1024).toFixed(1)} of the ${((sizes.connection + sizes.secret) / 1024).toFixed(1)} KiB the API server stores per
  connection, dropped by \`src/k8s/informer.ts\` before caching) and with the base64 Secret data; credentials are decoded on each read
  (\`getConnection\` above), never kept decoded. Extrapolated (not measured), 50,000 connections would need
  about ${mib(base.rssAfter + rssPerK * 50)} of RSS. Memory limits should leave headroom on top: the whole LIST
  response is parsed in one piece while the existing cache is still held, at start-up and whenever a
  watch has to list again.
- Start-up: \`store.start()\` is the initial LIST of each informer (Connections and Secrets are the large ones,
  JSON over loopback); ${ms(syncPerK)} more per 1,000 connections here. A replica reports ready (\`/readyz\`)
  only after it; "process start to synced" adds Node.js start-up and module loading.
- Creation speed: three API writes per connection, one after the other; ${idle < 0.15 ? 'the CPU was saturated during creation, so on this machine it is the limit (the API server and etcd share it with Latchkey and the other processes)' : 'the CPU was not saturated, so the sequential round trips to the API server are the limit; more in flight would go faster'}.
  The REST import (next section) measures the same path through HTTP.

Machine:

${MACHINE.join('\n')}
`;
  writeSection('store', text);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
