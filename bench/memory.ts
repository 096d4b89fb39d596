/**
 * Memory and start-up at scale: a server replica and controller replicas, each in its own process
 * (bench/memory-replica.ts, `--expose-gc`), started against a local control plane that holds N
 * connections, for each N of BENCH_MEMORY_COUNTS (the same control plane grows from one N to the next).
 *
 * The connections are written straight to the API server in parallel (bench/memory-fill.ts), shaped as
 * an import writes them, with the shard label of the controller the rendezvous hashing gives them among
 * the 3 below (so those start without relabelling anything). etcd's in-use database size
 * (bench/etcd-metrics.ts, compacted first) is read before and after the fill and at the end of the point.
 *
 * Per N: 3 controllers start together; each one's time to /readyz 200, then, once they have reconciled
 * their shares (every connection carries a Ready condition and the work queues are empty) and compacted
 * once quiet, RSS and retained heap after a forced GC. Then (at the largest N, or every N with
 * BENCH_MEMORY_SIX_REPLICAS=all) the 3 stop and 6 controllers with new identities start: every
 * connection's shard labels are rewritten (the rebalance, timed until the 6 have settled), and their
 * memory is read the same way. Then the server with the bounded connection cache
 * (`LATCHKEY_CONNECTION_CACHE_ENTRIES`, BENCH_MEMORY_SERVER_CACHE_ENTRIES): time to /readyz 200, memory
 * after ready, `GET /connections/{id}` at a paced 1,000 requests/s (bench/paced-load.ts in its own
 * process) for connections fetched once before ("in cache") and for connections never fetched, a
 * different one per request and more of them than the cache holds ("not in cache"), each next to a
 * bare express route in its own process (bench/peer-servers.ts `express`) at the same rate; memory
 * again with the cache filled. Then, for comparison, the server caching every connection (the
 * variable at 0: as before the bounded cache) up to BENCH_MEMORY_WHOLE_CACHE_MAX connections, and the
 * one-in-flight latency of reading one Secret from the API server (what a cache miss costs at least).
 *
 *   npm run bench:memory                                   # 10,000 and 50,000
 *   BENCH_MEMORY_COUNTS=100000 BENCH_MEMORY_SETTLE_SECONDS=1800 npm run bench:memory   # one count on a fresh control plane
 *   BENCH_MEMORY_COUNTS=250000 BENCH_MEMORY_SETTLE_SECONDS=3600 npm run bench:memory   # (3 controllers took 500 s at 100,000)
 *   BENCH_MEMORY_COUNTS=2000 npm run bench:memory          # a quick run (figures still written)
 *   BENCH_MEMORY_COUNTS=5000 BENCH_MEMORY_FILL_ONLY=1 ...  # the fill alone: its rate and CPU, nothing written
 *   BENCH_MEMORY_RENDER_ONLY=1 node dist/bench/memory.js   # the Markdown section again from docs/benchmarks.json
 *   BENCH_MEMORY_HEAP_SNAPSHOT_DIR=/tmp/snaps ...          # each replica also writes a heap snapshot when measured
 */
import { randomInt } from 'node:crypto';
import { loadavg } from 'node:os';
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { RendezvousHash } from '../src/controller/rendezvous-hash.js';
import { RECONCILE_WAVE } from '../src/controller/controller.js';
import { createTestNamespace } from '../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { compactEtcd, etcdClientUrl, etcdSize, type EtcdSize } from './etcd-metrics.js';
import { mergeFigures, readFigures } from './figures.js';
import { cannon, paced, type PacedResult } from './load.js';
import { connectionName, fill, INTEGRATION, type FillClient, type FillTarget } from './memory-fill.js';
import { recordKinePostgresPoint } from './memory-kine-postgres.js';
import type { MemoryReport, ReplicaKind } from './memory-replica.js';
import { CHART_HEAP_LIMIT_MIB, CHART_SEMI_SPACE_MIB, metricSum, startReplica, type RunningReplica } from './replica-process.js';
import { apiKeyProvider, handNotes, machine, percentile, sourceCommit, writeSection, startBenchControlPlane } from './support.js';

const COUNTS = (process.env.BENCH_MEMORY_COUNTS ?? '10000,50000').split(',').map(Number);
/** Connections being written at once while filling the API server (each: the Connection, then its Secret). */
const CREATE_IN_FLIGHT = Number(process.env.BENCH_MEMORY_CREATE_IN_FLIGHT ?? 48);
/** `json` (src/k8s/json-api.ts, one pooled connection) or `typed` (@kubernetes/client-node): bench/memory-fill.ts. */
const FILL_CLIENT = (process.env.BENCH_MEMORY_FILL_CLIENT ?? 'json') as FillClient;
/** Fill the API server, log the fill's rate and CPU, stop: nothing measured or written. */
const FILL_ONLY = process.env.BENCH_MEMORY_FILL_ONLY === '1';
/** The server's bounded connection cache (LATCHKEY_CONNECTION_CACHE_ENTRIES), entries. */
const SERVER_CACHE_ENTRIES = Number(process.env.BENCH_MEMORY_SERVER_CACHE_ENTRIES ?? 10_000);
/**
 * The server caching every connection is measured up to this count: past it, its heap (the chart's
 * limit) would not hold them (about 3 KiB of heap per connection at 100,000).
 */
const WHOLE_CACHE_MAX = Number(process.env.BENCH_MEMORY_WHOLE_CACHE_MAX ?? 100_000);
/** `last` (6 controllers at the largest count only), `all`, or `none`. */
const SIX_REPLICAS = process.env.BENCH_MEMORY_SIX_REPLICAS ?? 'last';
const FETCH_SECONDS = Number(process.env.BENCH_MEMORY_FETCH_SECONDS ?? 10);
const FETCH_IN_FLIGHT = 8;
/** The paced fetches: requests per second, measured seconds (after 2 s of warm-up at the rate), sockets. */
const FETCH_RATE = Number(process.env.BENCH_MEMORY_FETCH_RATE ?? 1000);
const PACED_SECONDS = Number(process.env.BENCH_MEMORY_PACED_SECONDS ?? 10);
const PACED_WARMUP_SECONDS = 2;
const PACED_SOCKETS = 64;
/** Connections fetched once before the "in cache" fetches, then fetched in turn by them (at most the cache's size). */
const WARM_CONNECTIONS = Math.min(Number(process.env.BENCH_MEMORY_WARM_CONNECTIONS ?? 1000), SERVER_CACHE_ENTRIES || Infinity);
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
/** The 6 that replace the 3: new identities, so the rendezvous hashing moves every connection. */
const CONTROLLERS_6 = Array.from({ length: 6 }, (_, k) => `bench-controller6-${k}`);
const MiB = 2 ** 20;
const HERE = dirname(fileURLToPath(import.meta.url));

const log = (l: string) => process.stderr.write(`[memory ${new Date().toISOString().slice(11, 19)}] ${l}\n`);

interface Bed extends FillTarget {
  kubeconfigPath: string;
  secretKey: string;
  etcdUrl: string | undefined;
}

// ---- replicas ----

const startBenchReplica = (bed: Bed, kind: ReplicaKind, identity: string, env: Record<string, string> = {}) =>
  startReplica({
    kind,
    identity,
    kubeconfigPath: bed.kubeconfigPath,
    namespace: bed.namespace,
    waitSeconds: WAIT_SECONDS,
    env: { LATCHKEY_LEASE_DURATION_SECONDS: String(LEASE_SECONDS), ...env },
  });

/** The bare express route of bench/peer-servers.ts in its own process, answering `body` behind the same bearer check. */
async function startExpressPeer(body: string, key: string): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(HERE, 'peer-servers.js'), 'express'], {
    env: { PATH: process.env.PATH, PEER_BODY: body, PEER_KEY: key },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`express peer exited ${code}`)));
    child.stdout!.once('data', (c: Buffer) => resolve((JSON.parse(c.toString('utf8')) as { port: number }).port));
  });
  return { port, child };
}

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
    const name = connectionName(randomInt(0, count));
    const t0 = performance.now();
    await bed.core.readNamespacedSecret({ namespace: bed.namespace, name });
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

// ---- one point ----

interface Point {
  /** The server with the bounded connection cache (the whole cache on points before it): RSS with its cache filled by the fetches. */
  serverRssMiB: number;
  serverPeakRssMiB: number;
  serverHeapMiB: number;
  /** RSS after one more, compacting, GC (absent on points from before it was recorded). */
  serverCompactedRssMiB?: number;
  /** The bounded server's RSS just after ready, before any fetch (absent before the bounded cache). */
  serverAtReadyRssMiB?: number;
  readySeconds: number;
  /** LATCHKEY_CONNECTION_CACHE_ENTRIES of the measured server (absent: every connection cached). */
  serverCacheEntries?: number;
  /** The server caching every connection (absent where not measured). */
  serverWholeCacheRssMiB?: number;
  serverWholeCacheHeapMiB?: number;
  serverWholeCacheReadySeconds?: number;
  /** Why the whole-cache server was not measured (above BENCH_MEMORY_WHOLE_CACHE_MAX, or it failed). */
  serverWholeCacheNote?: string;
  /** Points before the bounded cache: the server with no credentials Secret cached at all. */
  serverWithoutCredentialsRssMiB?: number;
  serverWithoutCredentialsHeapMiB?: number;
  serverWithoutCredentialsReadySeconds?: number;
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
  /** The 3 controllers started on connections labelled for the 6 of the point before (they rebalanced too). */
  controllersStartedRelabelling?: boolean;
  /** 6 controllers with new identities after the 3 (absent where not run): largest RSS, retained heap, after a compacting GC. */
  controllerRssMiB6?: number;
  controllerHeapMiB6?: number;
  controllerCompactedRssMiB6?: number;
  controllerReadySeconds6?: number;
  /** From the 6's start until every connection was reconciled by its new owner and the queues were empty: the rebalance. */
  controllerRebalanceSeconds6?: number;
  controllersReconciled6?: number;
  /** Closed loop (autocannon, FETCH_IN_FLIGHT in flight), one connection. */
  fetchPerSecond: number;
  fetchP50Ms: number;
  fetchP99Ms: number;
  fetchErrors: number;
  peerGetProvidersPerSecond: number;
  peerGetProvidersP99Ms: number;
  /** Paced (bench/paced-load.ts) at fetchRate: connections fetched once before, in turn. */
  fetchRate?: number;
  fetchP99MsCached?: number;
  fetchP50MsCached?: number;
  fetchErrorsCached?: number;
  /** Paced at fetchRate: a connection never fetched before on every request, as long as there are such (fetchUncachedDistinct). */
  fetchP99MsUncached?: number;
  fetchP50MsUncached?: number;
  fetchErrorsUncached?: number;
  fetchUncachedDistinct?: number;
  /** Distinct connections the bounded server had fetched when its memory was read (at least its cache's size, where the count allows). */
  serverFetchedDistinct?: number;
  /** The bounded server's own heap compactions during the two paced rows: how many, their pauses in all (ms). */
  serverCompactionsDuringFetches?: number;
  serverCompactionMsDuringFetches?: number;
  /** The bare express route (its own process) at the same rate. */
  peerExpressP99Ms?: number;
  peerExpressP50Ms?: number;
  apiServerSecretReadP50Ms: number;
  apiServerSecretReadP99Ms: number;
  /**
   * etcd's in-use size at the end of the point, compacted, grown since before the first fill, per connection:
   * the Connection and its Secret as they stay once the controllers wrote their status and shard labels.
   */
  etcdBytesPerConnection?: number;
  /** etcd's in-use size grown by this point's fill (compacted before and after), per connection added: as written, before any status. */
  etcdBytesPerConnectionAsFilled?: number;
  etcdDbTotalBytes?: number;
  etcdDbInUseBytes?: number;
  /** The fill of this point: connections written per second, and how many at once. */
  fillPerSecond?: number;
  fillInFlight?: number;
  loadAverageAtStart: number[];
  date: string;
  /** The compacted figures were read from the run's log (points measured before the benchmark stored them). */
  compactedFromLog?: boolean;
  /** The code measured (bench/support.ts sourceCommit); absent on points from before it was recorded. */
  commit?: string;
  loadAverage: number[];
}

const mb = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;
const r1 = (n: number) => Math.round(n * 10) / 10;

/** Where a replica's RSS is (for the notes: V8's heap against malloc's arenas and the binary). */
const anatomy = (m: MemoryReport) =>
  `RSS ${mb(m.rssBytes)} MiB: V8 heap used ${mb(m.heapUsedBytes)} / resident ${mb(m.heapPhysicalBytes)}, external ${mb(m.externalBytes)}, ` +
  Object.entries(m.mappings)
    .map(([k, v]) => `${k.replace(/Bytes$/, '')} ${mb(v)}`)
    .join(', ') +
  `; after a compacting GC: RSS ${mb(m.compacted.rssBytes)}, heap used ${mb(m.compacted.heapUsedBytes)} / resident ${mb(m.compacted.heapPhysicalBytes)}`;

interface ControllersRun {
  memory: MemoryReport[];
  readySeconds: number;
  settled: Awaited<ReturnType<typeof waitReconciled>>;
  idle: Awaited<ReturnType<typeof waitIdleCompacted>>;
  /** From the fork of the first until settled. */
  seconds: number;
}

/** Starts `identities` together, waits until they settled and compacted once quiet, measures them, stops them. */
async function runControllers(bed: Bed, identities: string[], count: number): Promise<ControllersRun> {
  const t0 = performance.now();
  const controllers = await Promise.all(identities.map((id) => startBenchReplica(bed, 'controller', id)));
  try {
    const settled = await waitReconciled(controllers, count);
    const seconds = (performance.now() - t0) / 1000;
    const idle = await waitIdleCompacted(controllers);
    log(
      `${count}: ${identities.length} controllers: ${idle.count} idle compactions within ${idle.seconds.toFixed(0)} s after settling (longest ${idle.longestMs.toFixed(0)} ms)`,
    );
    const memory = await Promise.all(controllers.map((c) => c.measure()));
    log(`${count}: ${identities.length} controllers ${memory.map((m) => `${mb(m.rssBytes)} MiB`).join(', ')}`);
    for (const m of memory) log(`${count}: controller ${anatomy(m)}`);
    return { memory, readySeconds: Math.max(...controllers.map((c) => c.readySeconds)), settled, idle, seconds };
  } finally {
    await Promise.all(controllers.map((c) => c.stop()));
  }
}

/** `n` connection indexes in [0, count) in random order, none of `exclude`; fewer if there are not that many. */
function distinctIndexes(count: number, n: number, exclude: Set<number>): number[] {
  const free = count - exclude.size;
  if (n >= free) {
    const all = Array.from({ length: count }, (_, i) => i).filter((i) => !exclude.has(i));
    for (let i = all.length - 1; i > 0; i--) {
      const j = randomInt(0, i + 1);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return all;
  }
  const picked = new Set<number>();
  while (picked.size < n) {
    const i = randomInt(0, count);
    if (!exclude.has(i)) picked.add(i);
  }
  return [...picked];
}

const fetchPath = (i: number) => `/connections/mem-${i}?provider_config_key=${INTEGRATION}`;

interface ServerRun {
  readySeconds: number;
  atReady: MemoryReport;
  filled: MemoryReport;
  syncCompactionMs: number;
  closedLoop: Awaited<ReturnType<typeof cannon>>;
  providers: Awaited<ReturnType<typeof cannon>>;
  cached: PacedResult;
  uncached: PacedResult;
  uncachedDistinct: number;
  /** Distinct connections fetched before memory was read (the cache holds at most its size of them). */
  fetchedDistinct: number;
  /** The server's heap compactions during the paced rows (in and not in cache), and their pauses in all. */
  pacedCompactions: { count: number; ms: number };
  peer: PacedResult;
}

/** The server with the bounded cache: memory at ready, the fetches (closed loop, then paced in and not in cache, and the peer), memory again. */
async function runBoundedServer(bed: Bed, count: number): Promise<ServerRun> {
  const server = await startBenchReplica(bed, 'server', 'bench-server', {
    LATCHKEY_CONNECTION_CACHE_ENTRIES: String(SERVER_CACHE_ENTRIES),
  });
  const headers = { authorization: `Bearer ${bed.secretKey}` };
  const base = `http://127.0.0.1:${server.port}`;
  let peer: { port: number; child: ChildProcess } | undefined;
  try {
    const atReady = await server.measure();
    const syncCompactionMs = 1000 * metricSum(await server.metrics(), COMPACTION_SUM, 'reason="caches synced"');
    log(`${count}: server (cache ${SERVER_CACHE_ENTRIES}) ready in ${server.readySeconds.toFixed(1)} s, ${mb(atReady.rssBytes)} MiB`);
    const one = randomInt(0, count);

    // In cache: WARM_CONNECTIONS fetched once (at the rate), then fetched in turn at the rate.
    const warm = distinctIndexes(count, Math.min(WARM_CONNECTIONS, count), new Set([one]));
    const warmPaths = warm.map(fetchPath);
    const pacing = { rate: FETCH_RATE, seconds: PACED_SECONDS, connections: PACED_SOCKETS, warmupSeconds: PACED_WARMUP_SECONDS };
    const warming = await paced(
      { url: base, headers },
      { rate: FETCH_RATE, seconds: warm.length / FETCH_RATE, connections: PACED_SOCKETS, paths: warmPaths },
    );
    if (warming.errors > 0) log(`${count}: ${warming.errors} errors while warming the cache`);
    // The server's own heap compactions (src/app/compact-heap.ts) pause it: counted over the paced rows.
    const compactions = async () => {
      const page = await server.metrics();
      return { count: metricSum(page, COMPACTION_COUNT), ms: 1000 * metricSum(page, COMPACTION_SUM) };
    };
    const compactions0 = await compactions();
    const cached = await paced({ url: base, headers }, { ...pacing, paths: warmPaths });
    // Not in cache: a connection never fetched on every request (warm-up included), more than the cache holds.
    const needed = FETCH_RATE * (PACED_SECONDS + PACED_WARMUP_SECONDS);
    const cold = distinctIndexes(count, needed, new Set([one, ...warm]));
    if (cold.length < needed) log(`${count}: only ${cold.length} connections never fetched for ${needed} requests: they repeat`);
    const uncached = await paced({ url: base, headers }, { ...pacing, paths: cold.map(fetchPath) });
    const compactions1 = await compactions();
    // Memory is read with the cache full: as many more never-fetched connections as it still has room for.
    const fetched = new Set([one, ...warm, ...cold]);
    const room = Math.min(SERVER_CACHE_ENTRIES || count, count) - fetched.size;
    if (room > 0) {
      const more = distinctIndexes(count, room, fetched);
      log(`${count}: filling the cache with ${more.length} more connections`);
      const topUp = await paced(
        { url: base, headers },
        { rate: FETCH_RATE, seconds: more.length / FETCH_RATE, connections: PACED_SOCKETS, paths: more.map(fetchPath) },
      );
      if (topUp.errors > 0) log(`${count}: ${topUp.errors} errors while filling the cache`);
      for (const i of more) fetched.add(i);
    }
    const filled = await server.measure();
    // Closed loop last: its tens of thousands of requests a second leave garbage that would pause the paced rows.
    const closedLoop = await cannon({ url: `${base}${fetchPath(one)}`, headers }, { connections: FETCH_IN_FLIGHT, seconds: FETCH_SECONDS });
    const providers = await cannon({ url: `${base}/providers`, headers }, { connections: FETCH_IN_FLIGHT, seconds: FETCH_SECONDS });

    // The floor: a bare express route answering the same body behind the same bearer check, its own process.
    const body = await (await fetch(`${base}${fetchPath(one)}`, { headers })).text();
    peer = await startExpressPeer(body, bed.secretKey);
    const peerRun = await paced({ url: `http://127.0.0.1:${peer.port}${fetchPath(one)}`, headers }, pacing);
    return {
      readySeconds: server.readySeconds,
      atReady,
      filled,
      syncCompactionMs,
      closedLoop,
      providers,
      cached,
      uncached,
      uncachedDistinct: Math.min(cold.length, needed),
      fetchedDistinct: fetched.size,
      pacedCompactions: { count: compactions1.count - compactions0.count, ms: compactions1.ms - compactions0.ms },
      peer: peerRun,
    };
  } finally {
    peer?.child.kill('SIGTERM');
    await server.stop();
  }
}

/** The server caching every connection (the variable at 0): memory and ready, or why not. */
async function runWholeCacheServer(bed: Bed, count: number): Promise<{ memory: MemoryReport; readySeconds: number } | string> {
  if (count > WHOLE_CACHE_MAX) return `not run above ${WHOLE_CACHE_MAX} connections (BENCH_MEMORY_WHOLE_CACHE_MAX)`;
  let server: RunningReplica;
  try {
    server = await startBenchReplica(bed, 'server', 'bench-server-whole', { LATCHKEY_CONNECTION_CACHE_ENTRIES: '0' });
  } catch (err) {
    // Out of heap, most likely: recorded, the point goes on.
    return `failed to start: ${String((err as Error).message).slice(0, 200)}`;
  }
  try {
    return { memory: await server.measure(), readySeconds: server.readySeconds };
  } finally {
    await server.stop();
  }
}

async function measurePoint(
  bed: Bed,
  count: number,
  opts: { six: boolean; relabelling: boolean; etcdBefore: EtcdSize; etcdBaseline: EtcdSize; added: number },
): Promise<Point> {
  const loadAverageAtStart = loadavg();
  const etcdFilled = await compactedEtcdSize(bed.etcdUrl);
  const etcdAsFilled = Math.round((etcdFilled.inUseBytes - opts.etcdBefore.inUseBytes) / opts.added);
  log(
    `${count}: etcd ${mb(etcdFilled.totalBytes)} MiB, ${mb(etcdFilled.inUseBytes)} MiB in use: ${etcdAsFilled} bytes per connection added`,
  );

  log(`${count}: starting ${CONTROLLERS.length} controllers`);
  const three = await runControllers(bed, CONTROLLERS, count);
  let six: ControllersRun | undefined;
  if (opts.six) {
    log(`${count}: starting ${CONTROLLERS_6.length} controllers with new identities (every connection moves)`);
    six = await runControllers(bed, CONTROLLERS_6, count);
    log(`${count}: rebalanced to 6 in ${six.seconds.toFixed(0)} s (${six.settled.reconciled} reconciled)`);
  }

  log(`${count}: starting the server with a cache of ${SERVER_CACHE_ENTRIES} connections`);
  const server = await runBoundedServer(bed, count);
  log(
    `${count}: server ${mb(server.filled.rssBytes)} MiB with its cache filled; fetch p99 at ${FETCH_RATE}/s: in cache ${server.cached.p99Ms} ms, ` +
      `not in cache ${server.uncached.p99Ms} ms, bare express ${server.peer.p99Ms} ms`,
  );
  log(`${count}: server ${anatomy(server.filled)}`);

  const whole = await runWholeCacheServer(bed, count);
  if (typeof whole === 'string') log(`${count}: whole-cache server ${whole}`);
  else log(`${count}: whole-cache server ${mb(whole.memory.rssBytes)} MiB, ready in ${whole.readySeconds.toFixed(1)} s`);

  const secretRead = await secretReadP99(bed, count);
  log(`${count}: API server Secret read p99 ${secretRead.p99.toFixed(1)} ms`);
  const etcdEnd = await compactedEtcdSize(bed.etcdUrl);
  const etcdBytesPerConnection = Math.round((etcdEnd.inUseBytes - opts.etcdBaseline.inUseBytes) / count);
  log(`${count}: etcd after compaction ${mb(etcdEnd.inUseBytes)} MiB in use: ${etcdBytesPerConnection} bytes per connection`);

  const largest = (ms: MemoryReport[]) => ms.reduce((a, b) => (b.rssBytes > a.rssBytes ? b : a));
  const worst = largest(three.memory);
  return {
    serverRssMiB: mb(server.filled.rssBytes),
    serverPeakRssMiB: mb(server.filled.peakRssBytes),
    serverHeapMiB: mb(server.filled.heapUsedBytes),
    serverCompactedRssMiB: mb(server.filled.compacted.rssBytes),
    serverAtReadyRssMiB: mb(server.atReady.rssBytes),
    readySeconds: r1(server.readySeconds),
    serverCacheEntries: SERVER_CACHE_ENTRIES,
    ...(typeof whole === 'string'
      ? { serverWholeCacheNote: whole }
      : {
          serverWholeCacheRssMiB: mb(whole.memory.rssBytes),
          serverWholeCacheHeapMiB: mb(whole.memory.heapUsedBytes),
          serverWholeCacheReadySeconds: r1(whole.readySeconds),
        }),
    controllerRssMiB: mb(worst.rssBytes),
    controllerPeakRssMiB: mb(Math.max(...three.memory.map((m) => m.peakRssBytes))),
    controllerHeapMiB: mb(Math.max(...three.memory.map((m) => m.heapUsedBytes))),
    controllerCompactedRssMiB: mb(Math.max(...three.memory.map((m) => m.compacted.rssBytes))),
    controllerReadySeconds: r1(three.readySeconds),
    controllersReconciledSeconds: r1(three.settled.seconds),
    controllerWaveCompactionMs: Math.round(three.settled.waveCompactionMs),
    controllerIdleCompactions: three.idle.count,
    controllerIdleCompactionMs: Math.round(three.idle.longestMs),
    controllerIdleWaitSeconds: Math.round(three.idle.seconds),
    serverSyncCompactionMs: Math.round(server.syncCompactionMs),
    controllersReconciled: three.settled.reconciled,
    ...(opts.relabelling ? { controllersStartedRelabelling: true } : {}),
    ...(six
      ? {
          controllerRssMiB6: mb(largest(six.memory).rssBytes),
          controllerHeapMiB6: mb(Math.max(...six.memory.map((m) => m.heapUsedBytes))),
          controllerCompactedRssMiB6: mb(Math.max(...six.memory.map((m) => m.compacted.rssBytes))),
          controllerReadySeconds6: r1(six.readySeconds),
          controllerRebalanceSeconds6: r1(six.seconds),
          controllersReconciled6: six.settled.reconciled,
        }
      : {}),
    fetchPerSecond: Math.round(server.closedLoop.requestsPerSecond),
    fetchP50Ms: server.closedLoop.p50Ms,
    fetchP99Ms: server.closedLoop.p99Ms,
    fetchErrors: server.closedLoop.errors + server.closedLoop.non2xx,
    peerGetProvidersPerSecond: Math.round(server.providers.requestsPerSecond),
    peerGetProvidersP99Ms: server.providers.p99Ms,
    fetchRate: FETCH_RATE,
    fetchP99MsCached: server.cached.p99Ms,
    fetchP50MsCached: server.cached.p50Ms,
    fetchErrorsCached: server.cached.errors,
    fetchP99MsUncached: server.uncached.p99Ms,
    fetchP50MsUncached: server.uncached.p50Ms,
    fetchErrorsUncached: server.uncached.errors,
    fetchUncachedDistinct: server.uncachedDistinct,
    serverFetchedDistinct: server.fetchedDistinct,
    serverCompactionsDuringFetches: server.pacedCompactions.count,
    serverCompactionMsDuringFetches: Math.round(server.pacedCompactions.ms),
    peerExpressP99Ms: server.peer.p99Ms,
    peerExpressP50Ms: server.peer.p50Ms,
    apiServerSecretReadP50Ms: Math.round(secretRead.p50 * 100) / 100,
    apiServerSecretReadP99Ms: Math.round(secretRead.p99 * 100) / 100,
    etcdBytesPerConnection,
    etcdBytesPerConnectionAsFilled: etcdAsFilled,
    etcdDbTotalBytes: etcdEnd.totalBytes,
    etcdDbInUseBytes: etcdEnd.inUseBytes,
    loadAverageAtStart,
    date: new Date().toISOString(),
    commit: sourceCommit(),
    loadAverage: loadavg(),
  };
}

// ---- report ----

const f1 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(1));
const f2 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(2));
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
  const missing = [100_000, 250_000, 1_000_000].filter((n) => !counts.includes(n) && n > counts[counts.length - 1]!);
  const any = (pick: (p: Point) => unknown) => counts.some((n) => pick(points[String(n)]!) !== undefined);
  const wholeCache = (p: Point) =>
    p.serverWholeCacheRssMiB !== undefined
      ? `${f1(p.serverWholeCacheRssMiB)} / ${f1(p.serverWholeCacheHeapMiB)} / ${f1(p.serverWholeCacheReadySeconds)}`
      : (p.serverWholeCacheNote ?? (p.serverCacheEntries === undefined ? 'the server above' : '—'));
  const cache = (p: Point) => (p.serverCacheEntries === undefined ? 'every connection' : `${fmtCount(p.serverCacheEntries)} (bounded)`);
  const paced = (p50: number | undefined, p99: number | undefined, errors?: number) =>
    p99 === undefined ? '—' : `${f2(p99)} / ${f2(p50)}${errors === undefined ? '' : ` / ${errors}`}`;
  return `## Scale: memory and start-up

${machineLines.join('\n')}

\`npm run bench:memory\` (\`BENCH_MEMORY_COUNTS\`, default \`10000,50000\`; at 100,000: \`BENCH_MEMORY_COUNTS=100000 BENCH_MEMORY_SETTLE_SECONDS=1800 npm run bench:memory\`,
at 250,000 the same with \`BENCH_MEMORY_COUNTS=250000 BENCH_MEMORY_SETTLE_SECONDS=3600\`: one count per run, each on a fresh control plane). One local control plane per run, grown from one count to the next; the connections
(a Connection and its credentials Secret each, shaped as an import writes them, with the shard label of their
controller among 3) are written straight to the API server (\`bench/memory-fill.ts\`, ${CREATE_IN_FLIGHT} connections at once, ${FILL_CLIENT} client), and etcd's
in-use database size (\`etcd_mvcc_db_total_size_in_use_in_bytes\`, read after compacting etcd to its latest revision, so old
revisions do not count) is read before and after the fill and at the end of the point, once the controllers wrote statuses and labels.
Then for each count 3 controller replicas start (leader election and sharding on; Lease duration ${LEASE_SECONDS} s, since with the
default 15 s the shard members of this overloaded machine kept losing their Leases and dropping their shares); at the largest count
they stop and 6 with new identities start, which moves every connection (its shard labels rewritten: "rebalance" is from their
start until every connection is reconciled by its new owner). Then one server replica with a bounded connection cache
(\`LATCHKEY_CONNECTION_CACHE_ENTRIES\`, \`BENCH_MEMORY_SERVER_CACHE_ENTRIES\`, default 10,000), and for comparison one caching
every connection (the variable at 0; up to \`BENCH_MEMORY_WHOLE_CACHE_MAX\`, default 100,000). Each replica is its own Node.js process
(\`bench/memory-replica.ts\`, \`--expose-gc\`, started as \`latchkey controller\` / \`latchkey server\` start) with the heap flags the chart
gives it by default (\`--max-old-space-size\` ${CHART_HEAP_LIMIT_MIB.controller} for a controller, ${CHART_HEAP_LIMIT_MIB.server} for the server: 75 % of the
default memory limits; \`--max-semi-space-size=${CHART_SEMI_SPACE_MIB}\`). Memory is read inside the replica after two forced GCs (RSS and
V8's used heap): for controllers once they have reconciled their shares (or after ${SETTLE_SECONDS} s) and compacted once quiet; for the
bounded server after the fetches below and as many more never-fetched connections as its cache had room for (at ${FETCH_RATE}/s), so with its cache full. Ready is the time from the fork to the first \`/readyz\` 200.
The paced fetch rows are \`GET /connections/{id}\` at ${FETCH_RATE} requests/s spread over each second (\`bench/paced-load.ts\`, its own
process, ${PACED_SOCKETS} keep-alive sockets, ${PACED_WARMUP_SECONDS} s of warm-up then ${PACED_SECONDS} s measured; latency from each request's scheduled start):
"in cache" cycles through ${WARM_CONNECTIONS} connections fetched once before, "not in cache" asks for a connection never fetched on every request
(more of them than the cache holds); next to them a bare express route (\`bench/peer-servers.ts\` \`express\`, its own process, same
body and bearer check) at the same rate. The closed-loop row is autocannon (${FETCH_IN_FLIGHT} in flight, ${FETCH_SECONDS} s) on one connection, with its peer
\`GET /providers\` on the same server, run after the paced rows and the memory reading. "API server Secret read" is ${SECRET_READS} one-in-flight reads of a random credentials Secret from the
bench process: the least a miss of the cache costs.

| | ${counts.map((n) => `${fmtCount(n)} connections`).join(' | ')} | per 1,000 (slope between the columns of the same commit) |
|---|${counts.map(() => '---:|').join('')}---:|
${row('measured (UTC)', (p) => p.date.slice(0, 16).replace('T', ' '))} |
${row('commit measured', (p) => (p.commit === undefined ? 'not recorded' : `\`${p.commit}\``))} |
${row('load average at the start of the point', (p) => la(p.loadAverageAtStart))} |
${row('fill: connections written per second / at once', (p) => (p.fillPerSecond === undefined ? '—' : `${f1(p.fillPerSecond)} / ${p.fillInFlight}`))} — |
${row('**etcd bytes per connection** (in use after compaction, statuses and labels written; goal: halved)', (p) => (p.etcdBytesPerConnection === undefined ? '—' : String(p.etcdBytesPerConnection)))} — |
${row('etcd bytes per connection as filled (the Connection and its Secret as written, no status)', (p) => (p.etcdBytesPerConnectionAsFilled === undefined ? '—' : String(p.etcdBytesPerConnectionAsFilled)))} — |
${row('etcd database: file / in use, MiB', (p) => (p.etcdDbTotalBytes === undefined ? '—' : `${f1(mb(p.etcdDbTotalBytes))} / ${f1(mb(p.etcdDbInUseBytes!))}`))} ${slope((p) => mb(p.etcdDbInUseBytes ?? NaN))} |
${row('server: connections cached', cache)} — |
${row('server: distinct connections fetched when its memory was read', (p) => (p.serverFetchedDistinct === undefined ? '—' : fmtCount(p.serverFetchedDistinct)))} — |
${row('**server RSS, MiB** (cache filled; goal ≤ 512 at any count)', (p) => f1(p.serverRssMiB))} ${slope((p) => p.serverRssMiB)} |
${row('server retained heap, MiB', (p) => f1(p.serverHeapMiB))} ${slope((p) => p.serverHeapMiB)} |
${row('server RSS after a compacting GC, MiB', (p) => f1(p.serverCompactedRssMiB))} ${slope((p) => p.serverCompactedRssMiB ?? NaN)} |
${row('server RSS just after ready (cache empty), MiB', (p) => f1(p.serverAtReadyRssMiB))} ${slope((p) => p.serverAtReadyRssMiB ?? NaN)} |
${row('server peak RSS, MiB', (p) => f1(p.serverPeakRssMiB))} ${slope((p) => p.serverPeakRssMiB)} |
${row('**server ready, s** (goal ≤ 60 at any count)', (p) => f1(p.readySeconds))} ${slope((p) => p.readySeconds)} |
${row('whole-cache server (every connection cached): RSS, MiB / retained heap, MiB / ready, s', wholeCache)} — |
${
  any((p) => p.serverWithoutCredentialsRssMiB)
    ? `${row('server without credentials (older points): RSS / retained heap, MiB', (p) => (p.serverWithoutCredentialsRssMiB === undefined ? '—' : `${f1(p.serverWithoutCredentialsRssMiB)} / ${f1(p.serverWithoutCredentialsHeapMiB)}`))} — |\n`
    : ''
}${row('**fetch p99 / p50 ms / errors, in cache**, paced (goal p99 ≤ 10)', (p) => paced(p.fetchP50MsCached, p.fetchP99MsCached, p.fetchErrorsCached))} — |
${row('**fetch p99 / p50 ms / errors, not in cache**, paced (goal p99 ≤ 25)', (p) => paced(p.fetchP50MsUncached, p.fetchP99MsUncached, p.fetchErrorsUncached))} — |
${row('not in cache: distinct connections asked for (requests: rate × 12 s)', (p) => (p.fetchUncachedDistinct === undefined ? '—' : fmtCount(p.fetchUncachedDistinct)))} — |
${row('peer: bare express route, paced at the same rate, p99 / p50 ms', (p) => paced(p.peerExpressP50Ms, p.peerExpressP99Ms))} — |
${row('server heap compactions during the two paced rows: count / pauses in all, ms', (p) => (p.serverCompactionsDuringFetches === undefined ? '—' : `${p.serverCompactionsDuringFetches} / ${p.serverCompactionMsDuringFetches}`))} — |
${row('fetch, closed loop on one connection: p99 / p50 ms / requests/s / errors', (p) => `${f1(p.fetchP99Ms)} / ${f1(p.fetchP50Ms)} / ${p.fetchPerSecond} / ${p.fetchErrors}`)} — |
${row('peer: `GET /providers` closed loop, p99 ms / requests/s', (p) => `${f1(p.peerGetProvidersP99Ms)} / ${p.peerGetProvidersPerSecond}`)} — |
${row('API server Secret read, one in flight, p50 / p99 ms', (p) => `${f1(p.apiServerSecretReadP50Ms)} / ${f1(p.apiServerSecretReadP99Ms)}`)} — |
${row('**controller RSS, MiB**, largest of 3', (p) => f1(p.controllerRssMiB))} ${slope((p) => p.controllerRssMiB)} |
${row('controller retained heap, MiB, largest of 3', (p) => f1(p.controllerHeapMiB))} ${slope((p) => p.controllerHeapMiB)} |
${row('controller RSS after a compacting GC, MiB, largest of 3', (p) => f1(p.controllerCompactedRssMiB))} ${slope((p) => p.controllerCompactedRssMiB ?? NaN)} |
${row('controller peak RSS (start-up), MiB, largest of 3', (p) => f1(p.controllerPeakRssMiB))} ${slope((p) => p.controllerPeakRssMiB)} |
${row('controller ready, s, slowest of 3', (p) => f1(p.controllerReadySeconds))} ${slope((p) => p.controllerReadySeconds)} |
${row('controllers: shares reconciled (of all) when measured, s after ready', (p) => `${p.controllersReconciled} in ${f1(p.controllersReconciledSeconds)}${p.controllersStartedRelabelling ? ' (started on the 6 before: relabelled)' : ''}`)} — |
${row('compaction pauses, ms: server after sync / controller at the end of its first wave, longest of 3', (p) => `${f1(p.serverSyncCompactionMs)} / ${f1(p.controllerWaveCompactionMs)}`)} — |
${row('controller compactions once quiet after settling: count / longest pause, ms / measured s after settling', (p) => (p.controllerIdleCompactions === undefined ? 'not built yet' : `${p.controllerIdleCompactions} / ${f1(p.controllerIdleCompactionMs)} / ${p.controllerIdleWaitSeconds}`))} — |
${row('**controller RSS, MiB, largest of 6** (goal ≤ 512)', (p) => f1(p.controllerRssMiB6))} — |
${row('controller with 6: retained heap / RSS after a compacting GC, MiB, largest', (p) => (p.controllerRssMiB6 === undefined ? '—' : `${f1(p.controllerHeapMiB6)} / ${f1(p.controllerCompactedRssMiB6)}`))} — |
${row('rebalance 3 → 6 (new identities: every connection moves), s from their start / reconciled / ready, s', (p) => (p.controllerRebalanceSeconds6 === undefined ? '—' : `${f1(p.controllerRebalanceSeconds6)} / ${p.controllersReconciled6} / ${f1(p.controllerReadySeconds6)}`))} — |
${row('load average at the end of the point', (p) => la(p.loadAverage))} |
${
  missing.length === 0 || counts.length < 2 || sameRun.length < 2
    ? ''
    : `
Not run: ${missing.map(fmtCount).join(', ')} connections. Extrapolated linearly from the slope above, **not measured**:

| extrapolated | ${missing.map((n) => `${fmtCount(n)} connections`).join(' | ')} |
|---|${missing.map(() => '---:|').join('')}
| server RSS, MiB | ${missing.map((n) => f1(extrapolate((p) => p.serverRssMiB, n))).join(' | ')} |
| controller RSS, MiB, largest of 3 | ${missing.map((n) => f1(extrapolate((p) => p.controllerRssMiB, n))).join(' | ')} |
| server ready, s | ${missing.map((n) => f1(extrapolate((p) => p.readySeconds, n))).join(' | ')} |
`
}
${handNotes('memory')}`;
}

/** etcd's size after a compaction to its latest revision; zeros on kine (no etcd). */
async function compactedEtcdSize(url: string | undefined): Promise<EtcdSize> {
  if (!url) return { totalBytes: 0, inUseBytes: 0 };
  await compactEtcd(url);
  return etcdSize(url);
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
    controlPlaneMarker: cp.workDir,
    // No etcd on kine: Postgres's size is recorded instead (bench/memory-kine-postgres.ts).
    etcdUrl: kine ? undefined : etcdClientUrl(cp.workDir),
  };
  // On kine (BENCH_STORAGE=kine-postgres): what Postgres holds before the fill, and the points go to their own key.
  const baselineBytes = await kine?.databaseBytes();
  try {
    let created = 0;
    const etcdBaseline = await compactedEtcdSize(bed.etcdUrl);
    const counts = [...COUNTS].sort((a, b) => a - b);
    let sixBefore = false;
    for (const count of counts) {
      const etcdBefore = await compactedEtcdSize(bed.etcdUrl);
      const filled = await fill(bed, created, count, { inFlight: CREATE_IN_FLIGHT, client: FILL_CLIENT, log });
      log(`${count} connections in the API server: ${JSON.stringify(filled)}`);
      const added = count - created;
      created = count;
      if (FILL_ONLY) continue;
      const six = SIX_REPLICAS === 'all' || (SIX_REPLICAS === 'last' && count === counts[counts.length - 1]);
      const point = await measurePoint(bed, count, { six, relabelling: sixBefore, etcdBefore, etcdBaseline, added });
      sixBefore = six;
      point.fillPerSecond = filled.perSecond;
      point.fillInFlight = filled.inFlight;
      if (kine) {
        await recordKinePostgresPoint(kine, count, point, {
          perSecond: filled.perSecond,
          baselineBytes: baselineBytes!,
          namespace: bed.namespace,
        });
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
