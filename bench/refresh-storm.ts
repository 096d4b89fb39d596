/**
 * Refresh storm: N OAuth 2 connections whose tokens all expire within 5 minutes, refreshed by 1, 2
 * and 3 controller replicas (each a separate `latchkey controller` process, sharded by their Leases),
 * against a token endpoint in its own process (bench/token-endpoint.ts: 150 ms per answer, rotating
 * refresh tokens, refusing a reused one). Then the failover: 3 replicas, one SIGKILLed mid-storm; the
 * other two must take its connections within the Lease duration, none expiring, none refreshed twice.
 *
 * Each phase has its own control plane (fresh etcd), namespace, N fresh connections (written straight
 * to the API server, 32 in parallel, with the controllers not yet running) and fresh processes. Every token expires at the same
 * moment, 300 s after the storm begins; with the refresh margin at 300 s every token is due at once at
 * the storm's start. The controllers start before it and settle first (cache sync, every connection
 * labelled with its shard, its conditions written): the storm hits a running cluster, and the start-up
 * is measured apart. Refreshes per second are measured at the token endpoint, from its first answer to
 * its last; API writes and CPU over the storm alone.
 *
 * Environment: BENCH_STORM_CONNECTIONS (N, default 500), BENCH_STORM_LEASE_SECONDS (default 15, the
 * chart's), BENCH_STORM_PHASES (default "1,2,3,failover"), BENCH_STORM_SETTLE_SECONDS (how long after
 * the first connection is written the storm begins; default 60 + N / 40), BENCH_STORM_LOG_DIR (keep each controller's
 * log lines there, at debug level, to see where the time goes), BENCH_STORM_NODE_OPTIONS (the
 * controllers' NODE_OPTIONS; default the chart's heap limit for its default memory limit).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../src/platform/log.js';
import { CONNECTIONS, GROUP, LABELS, VERSION, type ConnectionResource } from '../src/k8s/resources.js';
import { KubeStore } from '../src/k8s/store.js';
import { createTestNamespace } from '../dev/cluster.js';
import { freePort, REPO_ROOT } from '../dev/control-plane.js';
import { LOOPBACK_PEERS } from '../dev/egress.js';
import { applyProvider, createIntegration } from '../dev/fixtures.js';
import { apiServerRequests, getsBetween, meanMsBetween, writesBetween } from './api-server-requests.js';
import { spawnChild, startTokenEndpoint, stopChild, type Child, type EndpointStats } from './child-processes.js';
import { writeFigures } from './figures.js';
import { CHART_HEAP_LIMIT_MIB, CHART_SEMI_SPACE_MIB } from './replica-process.js';
import { handNotes, idleBetween, machine, machineCpu, processCpuMs, writeSection, startBenchControlPlane } from './support.js';
import { DEFERRED_STATUS_MAX_MS } from '../src/controller/deferred-status.js';

const N = Number(process.env.BENCH_STORM_CONNECTIONS ?? 500);
const LEASE_SECONDS = Number(process.env.BENCH_STORM_LEASE_SECONDS ?? 15);
const PHASES = (process.env.BENCH_STORM_PHASES ?? '1,2,3,failover').split(',');
const TOKEN_LATENCY_MS = 150;
/** Every token expires this long after the storm begins (the refresh margin: all are due at its start). */
const EXPIRES_IN_SECONDS = 300;
/** From the first connection written to the storm: writing them, starting the controllers, their settling. */
const SETTLE_SECONDS = Number(process.env.BENCH_STORM_SETTLE_SECONDS ?? Math.ceil(60 + N / 40));
const CREATE_IN_FLIGHT = 32;
const LOG_DIR = process.env.BENCH_STORM_LOG_DIR;
/** The chart's default for a controller: limits.memory 768Mi, heap limit 75 % of it, a small young generation. */
const NODE_OPTIONS =
  process.env.BENCH_STORM_NODE_OPTIONS ??
  `--max-old-space-size=${CHART_HEAP_LIMIT_MIB.controller} --max-semi-space-size=${CHART_SEMI_SPACE_MIB}`;
const log = (l: string) => process.stderr.write(`[refresh-storm] ${l}\n`);

/** Resident set size of a process (bytes), from /proc. */
function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

interface Controller extends Child {
  identity: string;
  pid: number;
  healthUrl: string;
}

async function startController(kubeconfigPath: string, namespace: string, identity: string): Promise<Controller> {
  const port = await freePort();
  const child = spawnChild(
    [join(REPO_ROOT, 'dist/src/app/cli.js'), 'controller'],
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      POD_NAME: identity,
      LATCHKEY_KUBECONFIG: kubeconfigPath,
      LATCHKEY_WATCH_NAMESPACES: namespace,
      LATCHKEY_LEASE_NAMESPACE: namespace,
      LATCHKEY_LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
      LATCHKEY_LOG_LEVEL: LOG_DIR ? 'debug' : 'warn',
      LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS,
      LATCHKEY_CONTROLLER_PORT: String(port),
      LATCHKEY_HTTP_PORT: String(await freePort()),
      LATCHKEY_PUBLIC_BASE_URL: 'http://127.0.0.1',
      // Every token expires 5 minutes after the storm begins: with a 300 s margin all are due at its start.
      LATCHKEY_REFRESH_MARGIN_SECONDS: String(EXPIRES_IN_SECONDS),
      // As the chart runs it (NODE_OPTIONS from the container's memory limit), or as BENCH_STORM_NODE_OPTIONS says.
      NODE_OPTIONS: NODE_OPTIONS,
    },
    LOG_DIR && join(LOG_DIR, `${identity}.log`),
  );
  return { ...child, identity, pid: child.proc.pid!, healthUrl: `http://127.0.0.1:${port}` };
}

async function waitReady(c: Controller, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    (await fetch(`${c.healthUrl}/readyz`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (c.proc.exitCode !== null) throw new Error(`${c.identity} exited: ${c.tail.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${c.identity} not ready in ${timeoutMs} ms: ${c.tail.join('\n')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Bed {
  kc: KubeConfig;
  kubeconfigPath: string;
  workDir: string;
  endpoint: Awaited<ReturnType<typeof startTokenEndpoint>>;
  provider: string;
}

/** A namespace with an Integration and N connections whose tokens all expire at `expiry` (ms since epoch). */
async function seed(
  bed: Bed,
  phase: string,
  expiry: number,
): Promise<{ namespace: string; expiresAt: Map<string, number>; seconds: number }> {
  const ns = await createTestNamespace(bed.kc, `storm-${phase}`);
  await createIntegration(bed.kc, ns.name, 'storm', { provider: bed.provider }, { clientId: 'storm-client', clientSecret: 'storm-secret' });
  const store = new KubeStore(bed.kc, { namespaces: [ns.name], logger: createLogger('silent') });
  const expiresAt = new Map<string, number>();
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < N; i = next++) {
      const family = `${phase}-${i}`;
      expiresAt.set(family, expiry);
      await store.connections.createConnection({
        namespace: ns.name,
        spec: { integration: 'storm', provider: bed.provider, connectionId: `c-${i}`, authMode: 'OAUTH2', endUser: { id: `u-${i}` } },
        // No raw.expires_in: the margin is then the 300 s alone, so every token is due at once.
        credentials: {
          type: 'OAUTH2',
          access_token: `at.${family}.0`,
          refresh_token: `rt.${family}.0`,
          expires_at: new Date(expiry).toISOString(),
        },
      });
    }
  };
  await Promise.all(Array.from({ length: CREATE_IN_FLIGHT }, worker));
  return { namespace: ns.name, expiresAt, seconds: (Date.now() - started) / 1000 };
}

/** The shard label (owning replica) of every Connection of the namespace, by family. */
async function owners(bed: Bed, namespace: string, phase: string): Promise<Map<string, string | undefined>> {
  const list = (await bed.kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: CONNECTIONS.plural,
  })) as { items: ConnectionResource[] };
  return new Map(list.items.map((c) => [`${phase}-${c.spec.connectionId.slice(2)}`, c.metadata.labels?.[LABELS.shard]]));
}

/** Connections whose Secret holds the endpoint's latest refresh token (the rotation was stored). */
async function storedLatest(bed: Bed, namespace: string, stats: EndpointStats, phase: string): Promise<number> {
  const secrets = await bed.kc.makeApiClient(CoreV1Api).listNamespacedSecret({
    namespace,
    labelSelector: `${LABELS.managedBy}=${LABELS.managedByValue}`,
  });
  let n = 0;
  for (const s of secrets.items) {
    const creds = JSON.parse(Buffer.from(s.data?.['credentials.json'] ?? '', 'base64').toString('utf8')) as { refresh_token?: string };
    const family = /^rt\.([\w-]+)\.(\d+)$/.exec(creds.refresh_token ?? '');
    if (family && family[1]!.startsWith(`${phase}-`) && Number(family[2]) === stats.families[family[1]!]?.generation) n++;
  }
  return n;
}

interface PhaseResult {
  connections: number;
  refreshes: number;
  tokenCalls: number;
  reuseRefusals: number;
  duplicates: number;
  expiredBeforeRefresh: number;
  notRefreshed: number;
  storedLatest: number;
  refreshesPerSecond: number;
  stormSeconds: number;
  seedSeconds: number;
  /** From the controllers' start: all ready (caches synced), and settled (see {@link settle}; NaN: not before the storm). */
  readySeconds: number;
  settleSeconds: number;
  /** API writes from the controllers' start to the storm, per connection (labels, first conditions, Leases). */
  startupWritesPerConnection: number;
  /**
   * From the storm's last token answer until the live controllers had written every status write they
   * held back while refreshes waited (src/controller/deferred-status.ts); NaN: not within the wait.
   */
  statusCatchUpSeconds: number;
  controllerRssMiB: number[];
  /** Each live controller's V8 heap at the end (MiB): used, reserved (total), and external (buffers). */
  controllerHeap: Array<{ usedMiB: number; totalMiB: number; externalMiB: number }>;
  controllerCpuCores: number;
  controlPlaneCpuCores: number;
  machineIdle: number;
  /** Writes the API server served during the storm (its start to the controllers' stop) per refresh, by call. */
  apiWritesPerRefresh: number;
  apiWrites: Array<{ call: string; perRefresh: number }>;
  /** Single-object reads (GET) the API server served during the storm, per refresh, by call. */
  apiGets: Array<{ call: string; perRefresh: number }>;
  /** The API server's own mean time (ms) per request during the storm, for calls served at least once per 10 refreshes. */
  apiServerMeanMs: Array<{ call: string; meanMs: number }>;
  /** Mean refresh as the live controllers' schedulers timed it during the storm (ms; lock, reads, token call, write). */
  refreshMeanMs: number;
  failover?: {
    killed: string;
    killedAtRefreshes: number;
    orphaned: number;
    orphanedRefreshedByOthers: number;
    /** Of the killed replica's unrefreshed connections, those whose token call it had sent before it died. */
    answeredToKilledInFlight: number;
    takeoverSecondsMax: number;
    /** The first of the killed replica's connections refreshed by another: when its share had moved. */
    takeoverSecondsFirst: number;
    leaseDurationSeconds: number;
  };
}

/** A controller's own /metrics (prom-client's text format). */
async function metricsOf(healthUrl: string): Promise<string> {
  return (await fetch(`${healthUrl}/metrics`)).text();
}

/** A controller's V8 heap from its metrics (prom-client's default process metrics). */
function heapIn(text: string): { usedMiB: number; totalMiB: number; externalMiB: number } {
  const value = (name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2] ?? NaN);
  return {
    usedMiB: value('latchkey_process_nodejs_heap_size_used_bytes') / 2 ** 20,
    totalMiB: value('latchkey_process_nodejs_heap_size_total_bytes') / 2 ** 20,
    externalMiB: value('latchkey_process_nodejs_external_memory_bytes') / 2 ** 20,
  };
}

/**
 * Waits (at most the bound of a held status write, plus a minute) until no live controller holds a
 * status write back or has a reconcile waiting; seconds from `lastRefreshAt` (ms), NaN if not.
 */
async function statusCaughtUp(controllers: Array<{ healthUrl: string }>, lastRefreshAt: number): Promise<number> {
  const waiting = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('latchkey_workqueue_depth{') && /queue="(deferred-status|reconcile)"/.test(l))
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  const until = Date.now() + DEFERRED_STATUS_MAX_MS + 60_000;
  while (Date.now() < until) {
    const held = (await Promise.all(controllers.map(async (c) => waiting(await metricsOf(c.healthUrl))))).reduce((a, b) => a + b, 0);
    if (held === 0) return (Date.now() - lastRefreshAt) / 1000;
    await new Promise((r) => setTimeout(r, 500));
  }
  return NaN;
}

/** A controller's refresh duration histogram from its metrics: seconds summed and refreshes counted. */
function refreshSecondsIn(text: string): { sum: number; count: number } {
  const total = (suffix: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`latchkey_refresh_duration_seconds_${suffix}{`))
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return { sum: total('sum'), count: total('count') };
}

/** Sums one phase's endpoint counts (families of other phases are ignored). */
function phaseCounts(stats: EndpointStats, expiresAt: Map<string, number>) {
  let refreshes = 0;
  let duplicates = 0;
  let expired = 0;
  let notRefreshed = 0;
  let first = Infinity;
  let last = 0;
  for (const [family, expiry] of expiresAt) {
    const f = stats.families[family];
    if (!f?.firstAt) {
      notRefreshed++;
      if (Date.now() > expiry) expired++;
      continue;
    }
    refreshes += f.refreshes;
    if (f.refreshes > 1) duplicates += f.refreshes - 1;
    if (f.firstAt > expiry) expired++;
    first = Math.min(first, f.firstAt);
    last = Math.max(last, f.firstAt);
  }
  return { refreshes, duplicates, expired, notRefreshed, first, last };
}

/**
 * Waits until the controllers have settled (every Connection labelled with one of them, and the API
 * server's writes down to the Leases' renewals), then until the storm begins. Returns how long the
 * settling took from `startedAt`, or NaN when the storm began first (start-up and storm overlapped).
 */
async function settle(
  bed: Bed,
  namespace: string,
  phase: string,
  identities: string[],
  startedAt: number,
  stormAt: number,
): Promise<number> {
  let settled = NaN;
  let writes = await apiServerRequests(bed.kc);
  const quietWrites = 2 * identities.length + 5; // per poll: member and leader Leases renewed every 5 s
  while (Number.isNaN(settled) && Date.now() < stormAt - 5_000) {
    await new Promise((r) => setTimeout(r, 5_000));
    const now = await apiServerRequests(bed.kc);
    const recent = writesBetween(writes, now).reduce((n, w) => n + w.count, 0);
    writes = now;
    if (recent > quietWrites) continue;
    const labels = [...(await owners(bed, namespace, phase)).values()];
    if (labels.length === N && labels.every((l) => l && identities.includes(l))) settled = (Date.now() - startedAt) / 1000;
  }
  await new Promise((r) => setTimeout(r, Math.max(0, stormAt - Date.now())));
  return settled;
}

async function runPhase(bed: Bed, phase: string, replicas: number, kill: boolean): Promise<PhaseResult> {
  log(`phase ${phase}: writing ${N} connections`);
  const stormAt = Date.now() + SETTLE_SECONDS * 1000;
  const { namespace, expiresAt, seconds: seedSeconds } = await seed(bed, phase, stormAt + EXPIRES_IN_SECONDS * 1000);
  const before = await bed.endpoint.stats(`${phase}-`);
  log(`phase ${phase}: ${N} connections in ${seedSeconds.toFixed(1)} s; starting ${replicas} controller(s)`);
  const startedAt = Date.now();
  const requests0 = await apiServerRequests(bed.kc);
  const controllers = await Promise.all(
    Array.from({ length: replicas }, (_, i) =>
      startController(bed.kubeconfigPath, namespace, `${phase}-ctrl-${String.fromCharCode(97 + i)}`),
    ),
  );
  // CPU time of each controller (user + system, ms; /proc/<pid>/stat counts in 1/100 s).
  const cpuOf = new Map<number, number>();
  const sampleCpu = () => {
    for (const c of controllers) {
      try {
        const stat = readFileSync(`/proc/${c.pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        cpuOf.set(c.pid, ((Number(f[11]) + Number(f[12])) * 1000) / 100);
      } catch {
        // exited (the killed replica keeps its last sample)
      }
    }
  };
  await Promise.all(controllers.map((c) => waitReady(c)));
  const readySeconds = (Date.now() - startedAt) / 1000;
  const settleSeconds = await settle(
    bed,
    namespace,
    phase,
    controllers.map((c) => c.identity),
    startedAt,
    stormAt,
  );
  log(`phase ${phase}: ready in ${readySeconds.toFixed(1)} s, settled in ${settleSeconds.toFixed(1)} s; the storm begins`);
  // From here on, the storm alone: API writes, CPU.
  const requestsStorm = await apiServerRequests(bed.kc);
  const startupWrites = writesBetween(requests0, requestsStorm);
  sampleCpu();
  const cpuAtStorm = new Map(cpuOf);
  const cpu0 = { machine: machineCpu(), cp: processCpuMs(bed.workDir), wall: Date.now() };
  const refreshSecondsAtStorm = new Map(
    await Promise.all(controllers.map(async (c) => [c.healthUrl, refreshSecondsIn(await metricsOf(c.healthUrl))] as const)),
  );
  let failover: PhaseResult['failover'];
  const deadline = Math.max(...expiresAt.values()) + 30_000;
  let killAt = 0;
  let orphans: string[] = [];
  let killedAtRefreshes = 0;
  let firstRefreshSeen = 0;
  for (;;) {
    sampleCpu();
    const stats = await bed.endpoint.stats(`${phase}-`);
    const c = phaseCounts(stats, expiresAt);
    // Mid-storm: a third refreshed, or (on a slow machine) a minute after the first refresh.
    if (c.refreshes > 0) firstRefreshSeen ||= Date.now();
    if (kill && !killAt && (c.refreshes - c.duplicates >= N / 3 || (firstRefreshSeen && Date.now() - firstRefreshSeen > 60_000))) {
      const victim = controllers[controllers.length - 1]!;
      const ownedBy = await owners(bed, namespace, phase);
      const now = await bed.endpoint.stats(`${phase}-`);
      victim.proc.kill('SIGKILL');
      killAt = Date.now();
      killedAtRefreshes = phaseCounts(now, expiresAt).refreshes;
      orphans = [...ownedBy].filter(([family, owner]) => owner === victim.identity && !now.families[family]?.firstAt).map(([f]) => f);
      log(
        `phase ${phase}: killed ${victim.identity} at ${killedAtRefreshes} refreshes; ${orphans.length} of its connections not yet refreshed`,
      );
    }
    if (c.notRefreshed === 0 || Date.now() > deadline) break;
    // Once a second: each poll has the endpoint serialize its 10,000 families, on the loop that answers the token calls.
    await new Promise((r) => setTimeout(r, 1000));
  }
  // A few seconds more: a duplicate refresh or a reused token would show up now.
  await new Promise((r) => setTimeout(r, 5_000));
  // The status writes held back while refreshes waited: the phase ends once the live controllers have
  // written them (they count in its API writes and CPU).
  const alive = controllers.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);
  const statusCatchUpSeconds = await statusCaughtUp(alive, phaseCounts(await bed.endpoint.stats(`${phase}-`), expiresAt).last);
  sampleCpu();
  const wall = Date.now() - cpu0.wall;
  const controllerRssMiB = alive.map((c) => rssBytes(c.pid) / 2 ** 20);
  // Where the RSS is: V8's heap (used and reserved) and memory outside it, from each process's own /metrics.
  const metricsAtEnd = await Promise.all(alive.map((c) => metricsOf(c.healthUrl)));
  const controllerHeap = metricsAtEnd.map(heapIn);
  // The storm's refreshes as the live controllers timed them (the killed one's are lost with it).
  const refreshTotal = { sum: 0, count: 0 };
  for (const [i, c] of alive.entries()) {
    const [start, end] = [refreshSecondsAtStorm.get(c.healthUrl) ?? { sum: 0, count: 0 }, refreshSecondsIn(metricsAtEnd[i]!)];
    refreshTotal.sum += end.sum - start.sum;
    refreshTotal.count += end.count - start.count;
  }
  const cpu1 = { machine: machineCpu(), cp: processCpuMs(bed.workDir) };
  const stats = await bed.endpoint.stats(`${phase}-`);
  const c = phaseCounts(stats, expiresAt);
  const stored = await storedLatest(bed, namespace, stats, phase);
  if (kill) {
    const answered = orphans.map((f) => stats.families[f]?.firstAt).filter((t): t is number => t !== undefined);
    // Answered within a second of the kill: the killed replica's own token calls, in flight when it died
    // (the endpoint answers after 150 ms); not a take-over. Its grant is lost if the replica died before
    // writing it (a reuse refusal follows).
    const takeovers = answered.filter((t) => t - killAt >= 1000);
    failover = {
      killed: controllers[controllers.length - 1]!.identity,
      killedAtRefreshes,
      orphaned: orphans.length,
      orphanedRefreshedByOthers: takeovers.length,
      answeredToKilledInFlight: answered.length - takeovers.length,
      takeoverSecondsMax: takeovers.length ? (Math.max(...takeovers) - killAt) / 1000 : NaN,
      takeoverSecondsFirst: takeovers.length ? (Math.min(...takeovers) - killAt) / 1000 : NaN,
      leaseDurationSeconds: LEASE_SECONDS,
    };
  }
  await Promise.all(controllers.map((ctl) => stopChild(ctl)));
  const requestsEnd = await apiServerRequests(bed.kc);
  const writes = writesBetween(requestsStorm, requestsEnd);
  const gets = getsBetween(requestsStorm, requestsEnd);
  const stormSeconds = (c.last - c.first) / 1000;
  const perRefresh = (calls: Array<{ call: string; count: number }>) =>
    calls.map((w) => ({ call: w.call, perRefresh: w.count / Math.max(1, c.refreshes) }));
  return {
    connections: N,
    refreshes: c.refreshes,
    tokenCalls: stats.calls - before.calls,
    reuseRefusals: stats.reuseRefusals - before.reuseRefusals,
    duplicates: c.duplicates,
    expiredBeforeRefresh: c.expired,
    notRefreshed: c.notRefreshed,
    storedLatest: stored,
    refreshesPerSecond: stormSeconds > 0 ? c.refreshes / stormSeconds : NaN,
    stormSeconds,
    seedSeconds,
    readySeconds,
    settleSeconds,
    startupWritesPerConnection: startupWrites.reduce((n, w) => n + w.count, 0) / N,
    statusCatchUpSeconds,
    controllerRssMiB,
    controllerHeap,
    controllerCpuCores: [...cpuOf].reduce((a, [pid, ms]) => a + ms - (cpuAtStorm.get(pid) ?? 0), 0) / wall,
    controlPlaneCpuCores: (cpu1.cp - cpu0.cp) / wall,
    machineIdle: idleBetween(cpu0.machine, cpu1.machine),
    apiWritesPerRefresh: writes.reduce((n, w) => n + w.count, 0) / Math.max(1, c.refreshes),
    apiWrites: perRefresh(writes),
    apiGets: perRefresh(gets),
    apiServerMeanMs: meanMsBetween(requestsStorm, requestsEnd, c.refreshes / 10).map(({ call, meanMs }) => ({ call, meanMs })),
    refreshMeanMs: (refreshTotal.sum / Math.max(1, refreshTotal.count)) * 1000,
    failover,
  };
}

async function main(): Promise<void> {
  const machineLines = machine();
  const endpoint = await startTokenEndpoint({ latencyMs: TOKEN_LATENCY_MS });
  const results: Record<string, PhaseResult> = {};
  try {
    for (const phase of PHASES) {
      // Each row on a control plane of its own: a later row must not carry the earlier rows' 10,000s of
      // Connections and Secrets in etcd and the API server's watch cache (it ran slower for that).
      const { cp, kc } = await startBenchControlPlane(new KubeConfig());
      try {
        const provider = 'storm-oauth';
        await applyProvider(kc, provider, {
          displayName: 'Refresh storm',
          authMode: 'OAUTH2',
          authorizationUrl: 'http://127.0.0.1:1/authorize',
          tokenUrl: endpoint.url,
        });
        const bed: Bed = { kc, kubeconfigPath: cp.kubeconfigPath, workDir: cp.workDir, endpoint, provider };
        const kill = phase === 'failover';
        results[phase] = await runPhase(bed, kill ? 'failover' : `r${phase}`, kill ? 3 : Number(phase), kill);
      } finally {
        await cp.stop();
      }
      log(`phase ${phase}: ${JSON.stringify(results[phase])}`);
    }
  } finally {
    await endpoint.stop();
  }
  report(results, machineLines);
}

function report(results: Record<string, PhaseResult>, machineLines: string[]): void {
  const one = results['1']?.refreshesPerSecond ?? NaN;
  const replicas: Record<string, unknown> = {};
  for (const r of ['1', '2', '3']) {
    const p = results[r];
    if (!p) continue;
    replicas[r] = {
      refreshesPerSecond: round(p.refreshesPerSecond),
      ratioToOne: round(p.refreshesPerSecond / one),
      tokenCalls: p.tokenCalls,
      refreshes: p.refreshes,
      expiredBeforeRefresh: p.expiredBeforeRefresh,
      duplicates: p.duplicates,
      reuseRefusals: p.reuseRefusals,
      notRefreshed: p.notRefreshed,
      storedLatest: p.storedLatest,
      stormSeconds: round(p.stormSeconds),
      readySeconds: round(p.readySeconds),
      settleSeconds: round(p.settleSeconds),
      startupWritesPerConnection: round(p.startupWritesPerConnection),
      statusCatchUpSeconds: round(p.statusCatchUpSeconds),
      controllerRssMiB: p.controllerRssMiB.map(round),
      controllerHeap: p.controllerHeap.map((h) => ({
        usedMiB: round(h.usedMiB),
        totalMiB: round(h.totalMiB),
        externalMiB: round(h.externalMiB),
      })),
      controllerCpuCores: round(p.controllerCpuCores),
      controlPlaneCpuCores: round(p.controlPlaneCpuCores),
      machineIdle: round(p.machineIdle),
      apiWritesPerRefresh: round(p.apiWritesPerRefresh),
      apiWrites: p.apiWrites.map((w) => ({ call: w.call, perRefresh: round(w.perRefresh) })),
      apiGets: p.apiGets.map((w) => ({ call: w.call, perRefresh: round(w.perRefresh) })),
      apiServerMeanMs: p.apiServerMeanMs.map((w) => ({ call: w.call, meanMs: round(w.meanMs) })),
      refreshMeanMs: round(p.refreshMeanMs),
    };
  }
  const f = results.failover;
  writeFigures('refreshStorm', {
    connections: N,
    tokenLatencyMs: TOKEN_LATENCY_MS,
    expiresInSeconds: EXPIRES_IN_SECONDS,
    settleAllowanceSeconds: SETTLE_SECONDS,
    leaseDurationSeconds: LEASE_SECONDS,
    replicas,
    ...(f
      ? {
          failover: {
            ...f.failover,
            takeoverSecondsMax: round(f.failover!.takeoverSecondsMax),
            takeoverSecondsFirst: round(f.failover!.takeoverSecondsFirst),
            tokenCalls: f.tokenCalls,
            refreshes: f.refreshes,
            expiredBeforeRefresh: f.expiredBeforeRefresh,
            duplicates: f.duplicates,
            reuseRefusals: f.reuseRefusals,
            notRefreshed: f.notRefreshed,
            storedLatest: f.storedLatest,
            refreshesPerSecond: round(f.refreshesPerSecond),
          },
        }
      : {}),
  });
  writeSection('refresh-storm', markdown(results, machineLines));
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

function markdown(results: Record<string, PhaseResult>, machineLines: string[]): string {
  const one = results['1']?.refreshesPerSecond ?? NaN;
  const fixed = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '—');
  const row = (label: string, p: PhaseResult) =>
    `| ${label} | ${fixed(p.refreshesPerSecond)} | ${fixed(p.refreshesPerSecond / one, 2)}× | ${p.tokenCalls} | ${p.refreshes} | ${p.duplicates} | ${p.reuseRefusals} | ${p.expiredBeforeRefresh} | ${p.notRefreshed} | ${p.storedLatest} | ${fixed(p.stormSeconds)} s | ${p.controllerRssMiB.map((m, i) => `${fixed(m, 0)}${p.controllerHeap[i] ? ` (${fixed(p.controllerHeap[i].usedMiB, 0)}/${fixed(p.controllerHeap[i].totalMiB, 0)})` : ''}`).join(', ')} | ${fixed(p.controllerCpuCores, 2)} | ${fixed(p.controlPlaneCpuCores, 2)} | ${fixed(p.machineIdle * 100, 0)} % |`;
  const rows = ['1', '2', '3'].filter((r) => results[r]).map((r) => row(`${r}`, results[r]!));
  const f = results.failover;
  const failover = f?.failover
    ? [
        '',
        `### Failover: one of 3 replicas SIGKILLed mid-storm (Lease duration ${f.failover.leaseDurationSeconds} s)`,
        '',
        `${f.failover.killed} was killed after ${f.failover.killedAtRefreshes} of ${N} refreshes; ${f.failover.orphaned} of its connections were not refreshed yet.`,
        '',
        "| replicas | refreshes/s | vs 1 | token calls | refreshes | duplicates | reuse refusals | expired before refresh | not refreshed | rotation stored | storm | controller RSS MiB (each survivor; V8 heap used/reserved) | controllers' CPU (cores) | control plane CPU (cores) | machine idle |",
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
        row('3, one killed', f),
        '',
        `- The killed replica's unrefreshed connections refreshed by the others: ${f.failover.orphanedRefreshedByOthers} of ${f.failover.orphaned} (${f.failover.answeredToKilledInFlight} more were answered to the killed replica itself, its token calls in flight when it died), the first ${fixed(f.failover.takeoverSecondsFirst)} s after the kill (its share had moved: the Lease expires at most ${f.failover.leaseDurationSeconds} s after the kill), the last ${fixed(f.failover.takeoverSecondsMax)} s after it (the survivors were working through their own due refreshes too: a connection taken over goes ahead of their overdue ones, then earliest due first).`,
      ]
    : [];
  const phases = Object.values(results);
  const saturated = phases.some((p) => p.machineIdle < 0.05);
  const three = results['3'];
  const reading = [
    '**Reading it:**',
    '',
    (() => {
      const duplicates = phases.reduce((n, p) => n + p.duplicates, 0);
      const reuse = phases.reduce((n, p) => n + p.reuseRefusals, 0);
      const clean = duplicates === 0 && reuse === 0;
      return `- Duplicates ${duplicates} and reuse refusals ${reuse} over every row${f?.failover ? ', the failover included' : ''}: ${
        clean
          ? 'no connection was refreshed twice and no rotated refresh token was sent again.'
          : 'a reuse refusal is a refresh token sent again after the provider rotated it (the grant is then lost; see docs/reliability.md, "a cut between the token call and the Secret write").'
      }`;
    })(),
    `- 3 replicas against 1: ${three ? `${fixed(three.refreshesPerSecond / one, 2)}×` : 'not run'} (goal ≥ 2.5×).` +
      (saturated || (three && three.machineIdle < 0.2)
        ? ' The machine had little or no idle CPU during the run (the control plane on the same 2 cores took about one of them), so the controllers got a small share of it and more replicas could not go faster: these rows show correctness, not capacity; docs/operations.md sizes from the per-refresh costs instead.'
        : ''),
    '- "rotation stored" below "refreshes" at the end of a row: refreshes answered by the endpoint whose Secret write was still in flight when the row ended.',
    ...(() => {
      const p = results['1'] ?? phases[0];
      if (!p) return [];
      const byCall = (calls: PhaseResult['apiWrites']) =>
        calls
          .filter((w) => w.perRefresh >= 0.05)
          .map((w) => `${w.call} ${fixed(w.perRefresh, 2)}`)
          .join(', ') || 'none';
      return [
        `- API writes per refresh (served by the API server from the storm's start to the controllers' stop; ${p === results['1'] ? 'one replica' : 'first row'}): ${fixed(p.apiWritesPerRefresh, 2)}, by call: ${byCall(p.apiWrites)}; reads of one object: ${byCall(p.apiGets)}.`,
      ];
    })(),
    ...(() => {
      const rows = ['1', '2', '3'].filter((r) => results[r]);
      if (!rows.length) return [];
      const served = (p: PhaseResult) => p.apiServerMeanMs.map((w) => `${w.call} ${fixed(w.meanMs, 1)}`).join(', ');
      return [
        `- Time per refresh during the storm, as the controllers' schedulers timed it (lock, read, token call, write): ${rows.map((r) => `${fixed(results[r]!.refreshMeanMs, 0)} ms (${r})`).join(', ')}. The API server's own mean time per request (ms, not the client's round trip): ${rows.map((r) => `${r} replica${r === '1' ? '' : 's'}: ${served(results[r]!)}`).join('; ')}.`,
      ];
    })(),
    ...(() => {
      const all = ['1', '2', '3', 'failover'].filter((r) => results[r]);
      const at = (r: string) => (r === 'failover' ? 'failover' : `${r} replica${r === '1' ? '' : 's'}`);
      return [
        `- Status writes held back while refreshes waited for a slot (src/controller/deferred-status.ts), all written by ${all.map((r) => `${Number.isFinite(results[r]!.statusCatchUpSeconds) ? `${fixed(results[r]!.statusCatchUpSeconds)} s` : '**not within the wait**'} (${at(r)})`).join(', ')} after the storm's last token answer (counted in the API writes and CPU above).`,
        `- Start-up before the storm (from the controllers' start): ready (caches synced) in ${all.map((r) => `${fixed(results[r]!.readySeconds)} s (${at(r)})`).join(', ')}; settled (every connection labelled, writes quiet) in ${all.map((r) => `${Number.isFinite(results[r]!.settleSeconds) ? `${fixed(results[r]!.settleSeconds)} s` : '**not before the storm**'} (${at(r)})`).join(', ')}; API writes per connection meanwhile ${all.map((r) => `${fixed(results[r]!.startupWritesPerConnection, 2)} (${at(r)})`).join(', ')}.`,
      ];
    })(),
  ];
  return [
    '## Refresh storm: sharded controllers (`npm run bench:refresh-storm`, `bench/refresh-storm.ts`)',
    '',
    `**What:** ${N} OAuth 2 connections${N < 10_000 ? ' (fewer than the 10,000 of the issue: what fits this 2-core shared machine in about 10 minutes; `BENCH_STORM_CONNECTIONS` sets it)' : ''} whose`,
    `tokens all expire at one moment, ${EXPIRES_IN_SECONDS / 60} minutes after the storm begins, refreshed by 1, 2 and 3 \`latchkey controller\` processes`,
    `(sharded by their Leases), against a token endpoint in its own process that answers after ${TOKEN_LATENCY_MS} ms, rotates`,
    'the refresh token and refuses a reused one (`bench/token-endpoint.ts`). Each row has a control plane of its own (a fresh',
    "etcd: no row carries the earlier rows' objects), fresh connections (written straight to the API server before the",
    'controllers start) and fresh processes.',
    `The controllers start first and settle (caches synced, every connection labelled with its shard and its conditions`,
    `written); the storm begins ${SETTLE_SECONDS} s after the first connection was written, when with a 300 s refresh margin`,
    'every token is due at once: a storm in a running cluster. The start-up is measured apart (the last lines).',
    '',
    '**How it is counted:** at the token endpoint. "refreshes/s" is refreshes over the time from its first to its last',
    'answer; "duplicates" are second refreshes of a connection; "reuse refusals"',
    'are calls with an already-rotated refresh token; "expired before refresh" compares the first answer with the',
    'token\'s expiry; "rotation stored" counts Secrets holding the endpoint\'s latest refresh token at the end. RSS and',
    "CPU are from /proc for the controllers' processes, the control plane and the whole machine over the storm (its start to the row's end).",
    '',
    "| replicas | refreshes/s | vs 1 | token calls | refreshes | duplicates | reuse refusals | expired before refresh | not refreshed | rotation stored | storm | controller RSS MiB (each; V8 heap used/reserved) | controllers' CPU (cores) | control plane CPU (cores) | machine idle |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    ...failover,
    '',
    ...reading,
    '',
    handNotes('refresh-storm'),
    '',
    'Machine:',
    '',
    ...machineLines,
  ].join('\n');
}

const round = (n: number) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : n);

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
