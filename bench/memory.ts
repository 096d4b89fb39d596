/**
 * Memory and start-up at scale: a server replica and 3 controller replicas, each in its own process
 * (bench/memory-replica.ts, `--expose-gc`), started against a local control plane that holds N
 * connections, for each N of BENCH_MEMORY_COUNTS (the same control plane grows from one N to the next).
 *
 * The connections are written straight to the API server in parallel (not through Latchkey: the
 * point is the replicas' start, not the import path), shaped as an import writes them: a Connection
 * and its credentials Secret owned by it, both carrying the shard label of the controller the
 * rendezvous hashing gives them (so the controllers start without relabelling anything).
 *
 * Per N: the 3 controllers start together; each one's time to /readyz 200, then, once they have
 * reconciled their shares (every connection carries a Ready condition and the work queues are empty),
 * RSS and retained heap after a forced GC. Then the server: time to /readyz 200, RSS and retained
 * heap after a forced GC, and `GET /connections/{id}` throughput and p99 from autocannon in its own
 * process, with the peer row `GET /providers` (same server, same auth, no connection read). Then, as
 * the floor of a bounded credentials cache, the same server holding no credentials Secret at all,
 * and the one-in-flight latency of reading one Secret from the API server (what a cache miss adds).
 *
 *   npm run bench:memory                                   # 10,000 and 50,000
 *   BENCH_MEMORY_COUNTS=1000 npm run bench:memory          # a quick run (figures still written)
 *   BENCH_MEMORY_RENDER_ONLY=1 node dist/bench/memory.js   # the Markdown section again from docs/benchmarks.json
 *   BENCH_MEMORY_HEAP_SNAPSHOT_DIR=/tmp/snaps ...          # each replica also writes a heap snapshot when measured
 */
import { randomBytes, randomInt } from 'node:crypto';
import { loadavg } from 'node:os';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { RendezvousHash } from '../src/controller/rendezvous-hash.js';
import { RECONCILE_WAVE } from '../src/controller/controller.js';
import { connectionObjectName } from '../src/k8s/names.js';
import {
  API_VERSION,
  CONNECTIONS,
  CREDENTIALS_KEY,
  CREDENTIALS_SECRET_TYPE,
  GROUP,
  LABELS,
  VERSION,
  type ConnectionResource,
} from '../src/k8s/resources.js';
import { createTestNamespace } from '../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { mergeFigures, readFigures } from './figures.js';
import { recordKinePostgresPoint } from './memory-kine-postgres.js';
import { cannon } from './load.js';
import type { MemoryReport, ReplicaKind } from './memory-replica.js';
import { CHART_HEAP_LIMIT_MIB, CHART_SEMI_SPACE_MIB, metricSum, startReplica, type RunningReplica } from './replica-process.js';
import { apiKeyProvider, handNotes, machine, percentile, sourceCommit, writeSection, startBenchControlPlane } from './support.js';

const COUNTS = (process.env.BENCH_MEMORY_COUNTS ?? '10000,50000').split(',').map(Number);
/** Writes in flight while filling the API server. */
const CREATE_IN_FLIGHT = Number(process.env.BENCH_MEMORY_CREATE_IN_FLIGHT ?? 32);
const FETCH_SECONDS = Number(process.env.BENCH_MEMORY_FETCH_SECONDS ?? 10);
const FETCH_IN_FLIGHT = 8;
/** Bound on a replica's start (fork to /readyz 200), seconds. */
const WAIT_SECONDS = Number(process.env.BENCH_MEMORY_WAIT_SECONDS ?? 1800);
/** Bound on the controllers' reconciling their shares; past it they are measured as they are (and the table says so). */
const SETTLE_SECONDS = Number(process.env.BENCH_MEMORY_SETTLE_SECONDS ?? 600);
/**
 * The controllers' Lease duration. A shard member stops acting when it could not renew within it; on
 * this shared machine the API server answers in seconds under load, and with the default 15 s the
 * members kept dropping their shares (measured: the reconciled count fell back to 0 again and again).
 */
const LEASE_SECONDS = Number(process.env.BENCH_MEMORY_LEASE_SECONDS ?? 60);
/**
 * After the controllers settled, how long the benchmark waits for the ones that grew since their wave's
 * compaction to compact again once quiet (src/app/idle-compaction.ts: checked every 15 s, at least 2
 * minutes after the last compaction), seconds.
 */
const IDLE_SECONDS = Number(process.env.BENCH_MEMORY_IDLE_SECONDS ?? 180);
const SECRET_READS = 1000;
const CONTROLLERS = ['bench-controller-0', 'bench-controller-1', 'bench-controller-2'];
const INTEGRATION = 'keys';
const MiB = 2 ** 20;

const log = (l: string) => process.stderr.write(`[memory ${new Date().toISOString().slice(11, 19)}] ${l}\n`);

interface Bed {
  kc: KubeConfig;
  kubeconfigPath: string;
  namespace: string;
  provider: string;
  secretKey: string;
  custom: CustomObjectsApi;
  core: CoreV1Api;
  ring: RendezvousHash;
}

// ---- filling the API server ----

function connectionBody(bed: Bed, i: number): ConnectionResource {
  const connectionId = `mem-${i}`;
  const name = connectionObjectName(INTEGRATION, connectionId);
  return {
    apiVersion: API_VERSION,
    kind: CONNECTIONS.kind,
    metadata: {
      name,
      namespace: bed.namespace,
      labels: { [LABELS.integration]: INTEGRATION, [LABELS.shard]: bed.ring.ownerOf(`${bed.namespace}/${name}`)! },
    },
    spec: {
      integration: INTEGRATION,
      provider: bed.provider,
      connectionId,
      authMode: 'API_KEY',
      endUser: { id: `user-${i}` },
      metadata: { plan: 'pro' },
      connectionConfig: {},
      id: randomInt(1, 2 ** 48 - 1),
    },
  };
}

/** As src/k8s/store.ts writes it (credentialsSecret), with the shard label the owner would add. */
function secretBody(owner: ConnectionResource): V1Secret {
  const credentials = { type: 'API_KEY', apiKey: `bench-${randomBytes(16).toString('hex')}` };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: CREDENTIALS_SECRET_TYPE,
    metadata: {
      name: owner.metadata.name,
      namespace: owner.metadata.namespace,
      labels: {
        [LABELS.managedBy]: LABELS.managedByValue,
        [LABELS.connection]: owner.metadata.name,
        [LABELS.integration]: owner.spec.integration,
        [LABELS.shard]: owner.metadata.labels![LABELS.shard]!,
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: CONNECTIONS.kind,
          name: owner.metadata.name,
          uid: owner.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: { [CREDENTIALS_KEY]: Buffer.from(JSON.stringify(credentials), 'utf8').toString('base64') },
  };
}

async function createConnections(bed: Bed, from: number, to: number): Promise<void> {
  let next = from;
  let done = 0;
  const started = Date.now();
  const one = async (i: number) => {
    const created = (await bed.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: bed.namespace,
      plural: CONNECTIONS.plural,
      body: connectionBody(bed, i),
    })) as ConnectionResource;
    await bed.core.createNamespacedSecret({ namespace: bed.namespace, body: secretBody(created) });
  };
  await Promise.all(
    Array.from({ length: CREATE_IN_FLIGHT }, async () => {
      while (next < to) {
        const i = next++;
        for (let attempt = 0; ; attempt++) {
          try {
            await one(i);
            break;
          } catch (err) {
            // A busy API server may time out a request; anything else, or persisting, is a broken run.
            if (attempt >= 3) throw err;
            await new Promise((r) => setTimeout(r, 500 * (attempt + 1)));
            await deleteConnection(bed, i);
          }
        }
        if (++done % 5000 === 0) log(`created ${from + done}/${to} (${(done / ((Date.now() - started) / 1000)).toFixed(0)}/s)`);
      }
    }),
  );
}

async function deleteConnection(bed: Bed, i: number): Promise<void> {
  const name = connectionObjectName(INTEGRATION, `mem-${i}`);
  await bed.custom
    .deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: bed.namespace, plural: CONNECTIONS.plural, name })
    .catch(() => undefined);
  await bed.core.deleteNamespacedSecret({ namespace: bed.namespace, name }).catch(() => undefined);
}

// ---- replicas ----

const startBenchReplica = (bed: Bed, kind: ReplicaKind, identity: string) =>
  startReplica({
    kind,
    identity,
    kubeconfigPath: bed.kubeconfigPath,
    namespace: bed.namespace,
    waitSeconds: WAIT_SECONDS,
    env: { LATCHKEY_LEASE_DURATION_SECONDS: String(LEASE_SECONDS) },
  });

/**
 * Waits (at most SETTLE_SECONDS) until the controllers have reconciled all `count` connections and
 * their queues are empty; returns how long it took, or how far they got.
 */
const COMPACTION_SUM = 'latchkey_heap_compaction_seconds_sum';
const COMPACTION_COUNT = 'latchkey_heap_compaction_seconds_count';
const WAVE_DONE = 'reason="reconcile wave done"';
const IDLE = 'reason="idle after growth"';

/**
 * Waits until every controller has compacted once quiet, at most IDLE_SECONDS (one that did not grow
 * past the threshold does not compact); returns the idle compactions, their longest pause and the wait.
 */
async function waitIdleCompacted(controllers: RunningReplica[]): Promise<{ count: number; longestMs: number; seconds: number }> {
  const t0 = performance.now();
  const deadline = Date.now() + IDLE_SECONDS * 1000;
  const read = async () => {
    const pages = await Promise.all(controllers.map((c) => c.metrics()));
    const counts = pages.map((p) => metricSum(p, COMPACTION_COUNT, IDLE));
    return {
      count: counts.reduce((a, b) => a + b, 0),
      longestMs: Math.max(...pages.map((p) => 1000 * metricSum(p, COMPACTION_SUM, IDLE))),
      compacted: counts.filter((n) => n > 0).length,
    };
  };
  for (;;) {
    const now = await read();
    if (now.compacted === controllers.length || Date.now() > deadline)
      return { count: now.count, longestMs: now.longestMs, seconds: (performance.now() - t0) / 1000 };
    await new Promise((r) => setTimeout(r, 5000));
  }
}

async function waitReconciled(
  controllers: RunningReplica[],
  count: number,
): Promise<{ seconds: number; reconciled: number; waveCompactionMs: number }> {
  const t0 = performance.now();
  const deadline = Date.now() + SETTLE_SECONDS * 1000;
  let last = '';
  for (;;) {
    const pages = await Promise.all(controllers.map((c) => c.metrics()));
    const reconciled = pages.reduce((n, p) => n + metricSum(p, 'latchkey_connections', 'condition="Ready"'), 0);
    const depth = pages.reduce((n, p) => n + metricSum(p, 'latchkey_workqueue_depth'), 0);
    // Settled: every share reconciled, and each controller's own compaction at the end of its first
    // wave done (a share smaller than a wave gets none).
    const compacted = pages.filter(
      (p) => metricSum(p, 'latchkey_connections', 'condition="Ready"') < RECONCILE_WAVE || metricSum(p, COMPACTION_COUNT, WAVE_DONE) > 0,
    ).length;
    const seconds = (performance.now() - t0) / 1000;
    if ((reconciled === count && depth === 0 && compacted === controllers.length) || Date.now() > deadline)
      return { seconds, reconciled, waveCompactionMs: Math.max(...pages.map((p) => 1000 * metricSum(p, COMPACTION_SUM, WAVE_DONE))) };
    const now = `${reconciled}/${count} reconciled, ${depth} queued`;
    if (now !== last) log(now);
    last = now;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** One-in-flight reads of credentials Secrets from the API server: what a bounded cache's miss adds. */
async function secretReadP99(bed: Bed, count: number): Promise<{ p50: number; p99: number }> {
  const latencies: number[] = [];
  for (let k = 0; k < SECRET_READS; k++) {
    const name = connectionObjectName(INTEGRATION, `mem-${randomInt(0, count)}`);
    const t0 = performance.now();
    await bed.core.readNamespacedSecret({ namespace: bed.namespace, name });
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

// ---- one point ----

interface Point {
  serverRssMiB: number;
  serverPeakRssMiB: number;
  serverHeapMiB: number;
  /** RSS after one more, compacting, GC (absent on points from before it was recorded). */
  serverCompactedRssMiB?: number;
  readySeconds: number;
  serverWithoutCredentialsRssMiB: number;
  serverWithoutCredentialsHeapMiB: number;
  serverWithoutCredentialsReadySeconds: number;
  controllerRssMiB: number;
  controllerPeakRssMiB: number;
  controllerHeapMiB: number;
  /** The largest controller RSS after a compacting GC: what a controller's own compaction at the end of its first wave gives. */
  controllerCompactedRssMiB?: number;
  controllerReadySeconds: number;
  controllersReconciledSeconds: number;
  /** The longest pause of a controller's compaction at the end of its first wave, ms (absent before it was recorded). */
  controllerWaveCompactionMs?: number;
  /** The server's compaction pause after its caches' first sync, ms (absent before it was recorded). */
  serverSyncCompactionMs?: number;
  /** Compactions of the controllers once quiet after settling (idle-compaction.ts), their longest pause, and the wait for them (absent before they existed). */
  controllerIdleCompactions?: number;
  controllerIdleCompactionMs?: number;
  controllerIdleWaitSeconds?: number;
  /** Connections the controllers had reconciled when measured (all of them unless the settle bound ran out). */
  controllersReconciled: number;
  fetchPerSecond: number;
  fetchP50Ms: number;
  fetchP99Ms: number;
  fetchErrors: number;
  peerGetProvidersPerSecond: number;
  peerGetProvidersP99Ms: number;
  apiServerSecretReadP50Ms: number;
  apiServerSecretReadP99Ms: number;
  loadAverageAtStart: number[];
  date: string;
  /** The compacted figures were read from the run's log (points measured before the benchmark stored them). */
  compactedFromLog?: boolean;
  /** The code measured (bench/support.ts sourceCommit); absent on points from before it was recorded. */
  commit?: string;
  loadAverage: number[];
}

const mb = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;

/** Where a replica's RSS is (for the notes: V8's heap against malloc's arenas and the binary). */
const anatomy = (m: MemoryReport) =>
  `RSS ${mb(m.rssBytes)} MiB: V8 heap used ${mb(m.heapUsedBytes)} / resident ${mb(m.heapPhysicalBytes)}, external ${mb(m.externalBytes)}, ` +
  Object.entries(m.mappings)
    .map(([k, v]) => `${k.replace(/Bytes$/, '')} ${mb(v)}`)
    .join(', ') +
  `; after a compacting GC: RSS ${mb(m.compacted.rssBytes)}, heap used ${mb(m.compacted.heapUsedBytes)} / resident ${mb(m.compacted.heapPhysicalBytes)}`;

async function measurePoint(bed: Bed, count: number): Promise<Point> {
  const loadAverageAtStart = loadavg();
  log(`${count}: starting ${CONTROLLERS.length} controllers`);
  const controllers = await Promise.all(CONTROLLERS.map((id) => startBenchReplica(bed, 'controller', id)));
  let controllerMemory: MemoryReport[];
  let settled: Awaited<ReturnType<typeof waitReconciled>>;
  let idle: Awaited<ReturnType<typeof waitIdleCompacted>>;
  try {
    settled = await waitReconciled(controllers, count);
    idle = await waitIdleCompacted(controllers);
    log(
      `${count}: ${idle.count} idle compactions within ${idle.seconds.toFixed(0)} s after settling (longest ${idle.longestMs.toFixed(0)} ms)`,
    );
    controllerMemory = await Promise.all(controllers.map((c) => c.measure()));
  } finally {
    await Promise.all(controllers.map((c) => c.stop()));
  }
  log(`${count}: controllers ${controllerMemory.map((m) => `${mb(m.rssBytes)} MiB`).join(', ')}`);
  for (const m of controllerMemory) log(`${count}: controller ${anatomy(m)}`);

  log(`${count}: starting the server`);
  const server = await startBenchReplica(bed, 'server', 'bench-server');
  const headers = { authorization: `Bearer ${bed.secretKey}` };
  let serverMemory: MemoryReport;
  let serverSyncCompactionMs = NaN;
  let fetchRow: Awaited<ReturnType<typeof cannon>>;
  let peer: Awaited<ReturnType<typeof cannon>>;
  try {
    serverMemory = await server.measure();
    serverSyncCompactionMs = 1000 * metricSum(await server.metrics(), COMPACTION_SUM, 'reason="caches synced"');
    const base = `http://127.0.0.1:${server.port}`;
    const id = `mem-${randomInt(0, count)}`;
    fetchRow = await cannon(
      { url: `${base}/connections/${id}?provider_config_key=${INTEGRATION}`, headers },
      { connections: FETCH_IN_FLIGHT, seconds: FETCH_SECONDS },
    );
    peer = await cannon({ url: `${base}/providers`, headers }, { connections: FETCH_IN_FLIGHT, seconds: FETCH_SECONDS });
  } finally {
    await server.stop();
  }
  log(`${count}: server ${mb(serverMemory.rssBytes)} MiB, ready in ${server.readySeconds.toFixed(1)} s, fetch p99 ${fetchRow.p99Ms} ms`);
  log(`${count}: server ${anatomy(serverMemory)}`);

  const floor = await startBenchReplica(bed, 'server-without-credentials', 'bench-server-floor');
  let floorMemory: MemoryReport;
  try {
    floorMemory = await floor.measure();
  } finally {
    await floor.stop();
  }
  const secretRead = await secretReadP99(bed, count);
  log(`${count}: server without credentials ${mb(floorMemory.rssBytes)} MiB; API server Secret read p99 ${secretRead.p99.toFixed(1)} ms`);

  const worst = controllerMemory.reduce((a, b) => (b.rssBytes > a.rssBytes ? b : a));
  return {
    serverRssMiB: mb(serverMemory.rssBytes),
    serverPeakRssMiB: mb(serverMemory.peakRssBytes),
    serverHeapMiB: mb(serverMemory.heapUsedBytes),
    serverCompactedRssMiB: mb(serverMemory.compacted.rssBytes),
    readySeconds: Math.round(server.readySeconds * 10) / 10,
    serverWithoutCredentialsRssMiB: mb(floorMemory.rssBytes),
    serverWithoutCredentialsHeapMiB: mb(floorMemory.heapUsedBytes),
    serverWithoutCredentialsReadySeconds: Math.round(floor.readySeconds * 10) / 10,
    controllerRssMiB: mb(worst.rssBytes),
    controllerPeakRssMiB: mb(Math.max(...controllerMemory.map((m) => m.peakRssBytes))),
    controllerHeapMiB: mb(Math.max(...controllerMemory.map((m) => m.heapUsedBytes))),
    controllerCompactedRssMiB: mb(Math.max(...controllerMemory.map((m) => m.compacted.rssBytes))),
    controllerReadySeconds: Math.round(Math.max(...controllers.map((c) => c.readySeconds)) * 10) / 10,
    controllersReconciledSeconds: Math.round(settled.seconds * 10) / 10,
    controllerWaveCompactionMs: Math.round(settled.waveCompactionMs),
    controllerIdleCompactions: idle.count,
    controllerIdleCompactionMs: Math.round(idle.longestMs),
    controllerIdleWaitSeconds: Math.round(idle.seconds),
    serverSyncCompactionMs: Math.round(serverSyncCompactionMs),
    controllersReconciled: settled.reconciled,
    fetchPerSecond: Math.round(fetchRow.requestsPerSecond),
    fetchP50Ms: fetchRow.p50Ms,
    fetchP99Ms: fetchRow.p99Ms,
    fetchErrors: fetchRow.errors + fetchRow.non2xx,
    peerGetProvidersPerSecond: Math.round(peer.requestsPerSecond),
    peerGetProvidersP99Ms: peer.p99Ms,
    apiServerSecretReadP50Ms: Math.round(secretRead.p50 * 100) / 100,
    apiServerSecretReadP99Ms: Math.round(secretRead.p99 * 100) / 100,
    loadAverageAtStart,
    date: new Date().toISOString(),
    commit: sourceCommit(),
    loadAverage: loadavg(),
  };
}

// ---- report ----

const f1 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(1));
const la = (l: number[] | undefined) => (l ? l.map((x) => x.toFixed(1)).join(' ') : '—');

function renderSection(points: Record<string, Point>, machineLines = machine()): string {
  const counts = Object.keys(points)
    .map(Number)
    .sort((a, b) => a - b);
  const row = (label: string, value: (p: Point) => string) => `| ${label} | ${counts.map((n) => value(points[String(n)]!)).join(' | ')} |`;
  // A slope only between points of the same code (the largest point's commit); a point that
  // recorded no commit, or code with uncommitted changes, pairs with nothing.
  const lastCommit = points[String(counts[counts.length - 1])]?.commit;
  const sameRun =
    lastCommit === undefined || lastCommit.endsWith('+changes') ? [] : counts.filter((n) => points[String(n)]!.commit === lastCommit);
  const slope = (pick: (p: Point) => number) => {
    if (sameRun.length < 2) return '—';
    const a = points[String(sameRun[0])]!;
    const b = points[String(sameRun[sameRun.length - 1])]!;
    const perThousand = (pick(b) - pick(a)) / ((sameRun[sameRun.length - 1]! - sameRun[0]!) / 1000);
    return Number.isFinite(perThousand) ? perThousand.toFixed(2) : '—';
  };
  const extrapolate = (pick: (p: Point) => number, to: number) => {
    if (counts.length < 2 || counts.includes(to)) return undefined;
    const last = counts[counts.length - 1]!;
    return pick(points[String(last)]!) + (Number(slope(pick)) * (to - last)) / 1000;
  };
  const fmtCount = (n: number) => n.toLocaleString('en-US');
  const missing = [10_000, 50_000, 100_000].filter((n) => !counts.includes(n) && n > counts[counts.length - 1]!);
  return `## Scale: memory and start-up

${machineLines.join('\n')}

\`npm run bench:memory\` (\`BENCH_MEMORY_COUNTS\`, default \`10000,50000\`). One local control plane; the connections
(a Connection and its credentials Secret each, shaped as an import writes them, with the shard label of their
controller) are written straight to the API server, then for each count 3 controller replicas (leader election
and sharding on; Lease duration ${LEASE_SECONDS} s, since with the default 15 s the shard members of this overloaded
machine kept losing their Leases and dropping their shares) and one server replica start, each in its own Node.js process (\`bench/memory-replica.ts\`,
\`--expose-gc\`, started as \`latchkey controller\` / \`latchkey server\` start), each with the heap flags the chart
gives it by default (\`--max-old-space-size\` ${CHART_HEAP_LIMIT_MIB.controller} for a controller, ${CHART_HEAP_LIMIT_MIB.server} for the server: 75 % of the
default memory limits; \`--max-semi-space-size=${CHART_SEMI_SPACE_MIB}\`). Memory is read inside the replica
after two forced GCs (RSS and V8's used heap), for the controllers once they have reconciled their shares (or after
${SETTLE_SECONDS} s: the row "shares reconciled" says how many they had). Ready
is the time from the fork to the first \`/readyz\` 200 (all informers listed, page by page). The fetch rows are
autocannon in its own process (${FETCH_IN_FLIGHT} in flight, ${FETCH_SECONDS} s) against the server, one connection;
its peer is \`GET /providers\` on the same server (same auth, no connection read). "Without credentials" is the
same server with a credentials-Secret cache that selects no Secret: the floor a bounded credentials cache could
reach. "API server Secret read" is ${SECRET_READS} one-in-flight reads of a random credentials Secret from the bench
process: what each miss of a bounded cache would add to a fetch.

| | ${counts.map((n) => `${fmtCount(n)} connections`).join(' | ')} | per 1,000 (slope between the columns of the same commit) |
|---|${counts.map(() => '---:|').join('')}---:|
${row('measured (UTC)', (p) => p.date.slice(0, 16).replace('T', ' '))} |
${row('commit measured', (p) => (p.commit === undefined ? 'not recorded' : `\`${p.commit}\``))} |
${row('load average at the start of the point', (p) => la(p.loadAverageAtStart))} |
${row('**server RSS, MiB** (goal at 100k ≤ 512)', (p) => f1(p.serverRssMiB))} ${slope((p) => p.serverRssMiB)} |
${row('server retained heap, MiB', (p) => f1(p.serverHeapMiB))} ${slope((p) => p.serverHeapMiB)} |
${row('server RSS after a compacting GC, MiB', (p) => f1(p.serverCompactedRssMiB))} ${slope((p) => p.serverCompactedRssMiB ?? NaN)} |
${row('server peak RSS (start-up), MiB', (p) => f1(p.serverPeakRssMiB))} ${slope((p) => p.serverPeakRssMiB)} |
${row('**server ready, s** (goal at 100k ≤ 60)', (p) => f1(p.readySeconds))} ${slope((p) => p.readySeconds)} |
${row('server without credentials: RSS, MiB', (p) => f1(p.serverWithoutCredentialsRssMiB))} ${slope((p) => p.serverWithoutCredentialsRssMiB)} |
${row('server without credentials: retained heap, MiB', (p) => f1(p.serverWithoutCredentialsHeapMiB))} ${slope((p) => p.serverWithoutCredentialsHeapMiB)} |
${row('**controller RSS, MiB**, largest of 3 (goal at 100k ≤ 256)', (p) => f1(p.controllerRssMiB))} ${slope((p) => p.controllerRssMiB)} |
${row('controller retained heap, MiB, largest of 3', (p) => f1(p.controllerHeapMiB))} ${slope((p) => p.controllerHeapMiB)} |
${row('**controller RSS after a compacting GC, MiB**, largest of 3 (what its own compaction at the end of its first wave gives)', (p) => f1(p.controllerCompactedRssMiB))} ${slope((p) => p.controllerCompactedRssMiB ?? NaN)} |
${row('controller peak RSS (start-up), MiB, largest of 3', (p) => f1(p.controllerPeakRssMiB))} ${slope((p) => p.controllerPeakRssMiB)} |
${row('controller ready, s, slowest of 3', (p) => f1(p.controllerReadySeconds))} ${slope((p) => p.controllerReadySeconds)} |
${row('compaction pauses, ms: server after sync / controller at the end of its first wave, longest of 3', (p) => `${f1(p.serverSyncCompactionMs)} / ${f1(p.controllerWaveCompactionMs)}`)} — |
${row('controller compactions once quiet after settling: count / longest pause, ms / measured s after settling', (p) => (p.controllerIdleCompactions === undefined ? 'not built yet' : `${p.controllerIdleCompactions} / ${f1(p.controllerIdleCompactionMs)} / ${p.controllerIdleWaitSeconds}`))} — |
${row('controllers: shares reconciled (of all) when measured, s after ready', (p) => `${p.controllersReconciled} in ${f1(p.controllersReconciledSeconds)}`)} — |
${row('**fetch `GET /connections/{id}` p99, ms** (cached; goal ≤ 10)', (p) => f1(p.fetchP99Ms))} — |
${row('fetch p50, ms / requests/s / errors', (p) => `${f1(p.fetchP50Ms)} / ${p.fetchPerSecond} / ${p.fetchErrors}`)} — |
${row('peer: `GET /providers` p99, ms / requests/s', (p) => `${f1(p.peerGetProvidersP99Ms)} / ${p.peerGetProvidersPerSecond}`)} — |
${row('API server Secret read, one in flight, p50 / p99 ms', (p) => `${f1(p.apiServerSecretReadP50Ms)} / ${f1(p.apiServerSecretReadP99Ms)}`)} — |
${row('load average at the end of the point', (p) => la(p.loadAverage))} |
${
  missing.length === 0
    ? ''
    : counts.length < 2
      ? `
Not run: ${missing.map(fmtCount).join(', ')} connections (not yet in a window when this shared 2-core machine was
otherwise idle, which they need). One measured point gives no slope, so nothing is extrapolated.
`
      : `
Not run: ${missing.map(fmtCount).join(', ')} connections (not yet in a window when this shared 2-core machine was
otherwise idle, which they need). Extrapolated
linearly from the slope above, **not measured**:

| extrapolated | ${missing.map((n) => `${fmtCount(n)} connections`).join(' | ')} |
|---|${missing.map(() => '---:|').join('')}
| server RSS, MiB | ${missing.map((n) => f1(extrapolate((p) => p.serverRssMiB, n))).join(' | ')} |
| controller RSS, MiB, largest of 3 | ${missing.map((n) => f1(extrapolate((p) => p.controllerRssMiB, n))).join(' | ')} |
| server ready, s | ${missing.map((n) => f1(extrapolate((p) => p.readySeconds, n))).join(' | ')} |
`
}
${handNotes('memory')}`;
}

async function main(): Promise<void> {
  if (process.env.BENCH_MEMORY_RENDER_ONLY === '1') {
    // The section again from docs/benchmarks.json (after a change of this text), nothing measured.
    const points = (readFigures().memory as { connections: Record<string, Point> }).connections;
    const lines = machine().filter((l) => !l.includes('Load average') && !l.includes('Date:'));
    writeSection('memory', renderSection(points, [...lines, '- Load average and date: per point, in the table']));
    return;
  }
  const { cp, kc, kine } = await startBenchControlPlane(new KubeConfig());
  const ns = await createTestNamespace(kc, 'bench-memory');
  const provider = `bench-memory-keys-${ns.name}`;
  await applyProvider(kc, provider, apiKeyProvider('Bench keys'));
  const env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, INTEGRATION, { provider });
  const bed: Bed = {
    kc,
    kubeconfigPath: cp.kubeconfigPath,
    namespace: ns.name,
    provider,
    secretKey: env.secretKey,
    custom: kc.makeApiClient(CustomObjectsApi),
    core: kc.makeApiClient(CoreV1Api),
    ring: new RendezvousHash(CONTROLLERS),
  };
  // On kine (BENCH_STORAGE=kine-postgres): what Postgres holds before the fill, and the points go to their own key.
  const baselineBytes = await kine?.databaseBytes();
  try {
    let created = 0;
    for (const count of [...COUNTS].sort((a, b) => a - b)) {
      const t0 = Date.now();
      await createConnections(bed, created, count);
      const fillSeconds = (Date.now() - t0) / 1000;
      log(`${count} connections in the API server (${fillSeconds.toFixed(0)} s to add ${count - created})`);
      const perSecond = (count - created) / fillSeconds;
      created = count;
      const point = await measurePoint(bed, count);
      if (kine) {
        await recordKinePostgresPoint(kine, count, point, { perSecond, baselineBytes: baselineBytes!, namespace: bed.namespace });
        continue;
      }
      mergeFigures(['memory', 'connections', String(count)], point as unknown as Record<string, unknown>);
      const points = (readFigures().memory as { connections: Record<string, Point> }).connections;
      writeSection('memory', renderSection(points));
    }
  } finally {
    // The whole control plane (and its data) goes: deleting 100,000 objects one by one would take longer.
    await cp.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);
