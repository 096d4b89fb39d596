/**
 * Soak: BENCH_SOAK_MINUTES (default 30) of mixed load against one server replica and one controller
 * replica, each in its own process with the chart's default heap limit (bench/replica-process.ts):
 * imports, fetches and deletes from a load generator in its own process (bench/soak-load.ts), keeping
 * BENCH_SOAK_CONNECTIONS live connections (default 3,000), half of them OAuth 2 with tokens that expire
 * soon, refreshed by the controller (and on fetch when due) against the token endpoint in its own
 * process (bench/token-endpoint.ts: 150 ms per answer, rotating refresh tokens). BENCH_SOAK_SEMI_SPACE_MIB:
 * the replicas' `--max-semi-space-size` (default the chart's; 0: V8's default, the "before").
 *
 * Memory of both replicas at the end of the fill and at the end of every window (BENCH_SOAK_WINDOW_MINUTES,
 * default 5): RSS as the process ran, then RSS and V8's used heap after forced collections. The peer:
 * after the load stops, both replicas are replaced by fresh ones holding the same data, measured the same
 * way. Goals (issue 12): flat after warm-up, and within 1.5x of a fresh replica.
 *
 *   npm run bench:soak
 *   BENCH_SOAK_MINUTES=6 BENCH_SOAK_WINDOW_MINUTES=2 BENCH_SOAK_CONNECTIONS=500 npm run bench:soak   # a short trial
 */
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../dev/cluster.js';
import { LOOPBACK_PEERS } from '../dev/egress.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { startTokenEndpoint, type EndpointStats } from './child-processes.js';
import { readFigures, writeFigures } from './figures.js';
import type { MemoryReport, ReplicaKind } from './memory-replica.js';
import { CHART_HEAP_LIMIT_MIB, CHART_SEMI_SPACE_MIB, metricSum, startReplica, type RunningReplica } from './replica-process.js';
import type { SoakLoadCommand, SoakLoadCounts, SoakLoadOptions } from './soak-load.js';
import { apiKeyProvider, handNotes, machine, writeSection, startBenchControlPlane } from './support.js';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const WINDOW_MINUTES = Number(process.env.BENCH_SOAK_WINDOW_MINUTES ?? 5);
const POPULATION = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 3000);
const IMPORTS_PER_SECOND = Number(process.env.BENCH_SOAK_IMPORTS_PER_SECOND ?? 5);
const FETCHES_PER_SECOND = Number(process.env.BENCH_SOAK_FETCHES_PER_SECOND ?? 100);
/** OAuth 2 imports expire 1 to 15 minutes after the import; the token endpoint's tokens live 10 minutes. */
const MAX_EXPIRES_IN_SECONDS = 900;
const TOKEN_EXPIRES_IN_SECONDS = 600;
const TOKEN_LATENCY_MS = 150;
/** The replicas' young generation (MiB; 0: V8's default), the chart's unless told. */
const SEMI_SPACE_MIB = Number(process.env.BENCH_SOAK_SEMI_SPACE_MIB ?? CHART_SEMI_SPACE_MIB);
const LOAD = join(dirname(fileURLToPath(import.meta.url)), 'soak-load.js');
const MiB = 2 ** 20;
const log = (l: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${l}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;

interface Memory {
  rssMiB: number;
  rssAfterGcMiB: number;
  heapMiB: number;
  /** V8 heap pages resident, used or not. */
  heapPhysicalMiB: number;
  /** Outside V8's heap: Buffers and other external memory, and V8's own malloc. */
  externalMiB: number;
  mallocedMiB: number;
  /** Per V8 heap space. */
  spaces: Record<string, { residentMiB: number; usedMiB: number }>;
}
interface Sample {
  label: string;
  minutes: number;
  server: Memory;
  controller: Memory;
  counts: SoakLoadCounts;
  tokenRefreshes: number;
  loadAverage: number[];
}

const memory = (m: MemoryReport): Memory => ({
  rssMiB: mb(m.rssBeforeGcBytes),
  rssAfterGcMiB: mb(m.rssBytes),
  heapMiB: mb(m.heapUsedBytes),
  heapPhysicalMiB: mb(m.heapPhysicalBytes),
  externalMiB: mb(m.externalBytes),
  mallocedMiB: mb(m.mallocedBytes),
  spaces: Object.fromEntries(Object.entries(m.spaces).map(([k, v]) => [k, { residentMiB: mb(v.physicalBytes), usedMiB: mb(v.usedBytes) }])),
});

const described = (x: Memory) =>
  `${x.rssMiB} MiB (after GC ${x.rssAfterGcMiB}; heap used ${x.heapMiB}, resident ${x.heapPhysicalMiB}; external ${x.externalMiB}; malloced ${x.mallocedMiB}; spaces ${Object.entries(
    x.spaces,
  )
    .filter(([, v]) => v.residentMiB >= 2)
    .map(([k, v]) => `${k} ${v.usedMiB}/${v.residentMiB}`)
    .join(', ')})`;

class LoadGenerator {
  private readonly child = fork(LOAD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

  private ask<T>(command: SoakLoadCommand, key: string, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`load generator: no answer to ${JSON.stringify(command)} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onMessage = (m: Record<string, unknown>) => {
        if (!(key in m)) return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(m[key] as T);
      };
      this.child.on('message', onMessage);
      this.child.send(command);
    });
  }

  fill(opts: SoakLoadOptions): Promise<number> {
    return this.ask({ start: opts }, 'filled', 60 * 60_000);
  }
  steady(): void {
    this.child.send('steady' satisfies SoakLoadCommand);
  }
  counts(): Promise<SoakLoadCounts> {
    return this.ask('counts', 'counts', 30_000);
  }
  stop(): Promise<SoakLoadCounts> {
    return this.ask('stop', 'stopped', 120_000);
  }
  kill(): void {
    this.child.kill();
  }
}

interface Bed {
  kubeconfigPath: string;
  namespace: string;
}

const replica = (bed: Bed, kind: ReplicaKind, identity: string) =>
  startReplica({
    kind,
    identity,
    kubeconfigPath: bed.kubeconfigPath,
    namespace: bed.namespace,
    semiSpaceMiB: SEMI_SPACE_MIB,
    waitSeconds: 600,
    env: { LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS },
  });

/** Until the controller's work queue has been empty for 10 s in a row (at most 10 minutes). */
async function waitIdle(controller: RunningReplica): Promise<void> {
  const deadline = Date.now() + 600_000;
  let emptySince: number | undefined;
  while (Date.now() < deadline) {
    const depth = metricSum(await controller.metrics(), 'latchkey_workqueue_depth');
    if (depth > 0) emptySince = undefined;
    else if ((emptySince ??= Date.now()) < Date.now() - 10_000) return;
    await sleep(1000);
  }
  log("the controller's queue did not empty in 10 minutes; measured as it is");
}

async function main(): Promise<void> {
  const machineLines = machine();
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const endpoint = await startTokenEndpoint({ latencyMs: TOKEN_LATENCY_MS, expiresInSeconds: TOKEN_EXPIRES_IN_SECONDS });
  const ns = await createTestNamespace(kc, 'bench-soak');
  await applyProvider(kc, `soak-keys-${ns.name}`, apiKeyProvider('Soak keys'));
  await applyProvider(kc, `soak-oauth-${ns.name}`, {
    displayName: 'Soak OAuth',
    authMode: 'OAUTH2',
    authorizationUrl: 'http://127.0.0.1:1/authorize',
    tokenUrl: endpoint.url,
  });
  const env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'keys', { provider: `soak-keys-${ns.name}` });
  await createIntegration(
    kc,
    ns.name,
    'oauth',
    { provider: `soak-oauth-${ns.name}` },
    { clientId: 'soak-client', clientSecret: 'soak-secret' },
  );
  const bed: Bed = { kubeconfigPath: cp.kubeconfigPath, namespace: ns.name };
  let controller = await replica(bed, 'controller', 'soak-controller');
  let server = await replica(bed, 'server', 'soak-server');
  const load = new LoadGenerator();
  const samples: Sample[] = [];
  /** When the steady load began (0 before). */
  let steadySince = 0;
  const sample = async (label: string): Promise<void> => {
    const [s, c, counts, stats] = await Promise.all([server.measure(), controller.measure(), load.counts(), endpoint.stats()]);
    const row: Sample = {
      label,
      minutes: steadySince ? Math.round((Date.now() - steadySince) / 600) / 100 : 0,
      server: memory(s),
      controller: memory(c),
      counts,
      tokenRefreshes: stats.refreshes,
      loadAverage: loadavg(),
    };
    samples.push(row);
    log(
      `${label}: server ${described(row.server)}, controller ${described(row.controller)}, ${counts.live} live, ${stats.refreshes} refreshes`,
    );
  };
  let fresh: { server: Memory; controller: Memory; serverReadySeconds: number; controllerReadySeconds: number };
  let stats: EndpointStats;
  let final: SoakLoadCounts;
  try {
    const baseUrl = `http://127.0.0.1:${server.port}`;
    log(`filling ${POPULATION} connections`);
    const fillStarted = Date.now();
    await load.fill({
      baseUrl,
      secretKey: env.secretKey,
      population: POPULATION,
      importsPerSecond: IMPORTS_PER_SECOND,
      fetchesPerSecond: FETCHES_PER_SECOND,
      maxExpiresInSeconds: MAX_EXPIRES_IN_SECONDS,
    });
    log(`filled in ${((Date.now() - fillStarted) / 1000).toFixed(0)} s`);
    await sample('filled');
    steadySince = Date.now();
    load.steady();
    for (let w = 1; w * WINDOW_MINUTES <= MINUTES; w++) {
      await sleep(steadySince + w * WINDOW_MINUTES * 60_000 - Date.now());
      await sample(`${w * WINDOW_MINUTES} min`);
    }
    final = await load.stop();
    await waitIdle(controller);
    await sample('load stopped, queue empty');
    stats = await endpoint.stats();
    await Promise.all([server.stop(), controller.stop()]);
    // The peer: fresh replicas holding the same data, measured the same way.
    controller = await replica(bed, 'controller', 'soak-controller');
    await waitIdle(controller);
    server = await replica(bed, 'server', 'soak-server');
    const [s, c] = await Promise.all([server.measure(), controller.measure()]);
    fresh = {
      server: memory(s),
      controller: memory(c),
      serverReadySeconds: server.readySeconds,
      controllerReadySeconds: controller.readySeconds,
    };
    log(`fresh: server ${described(fresh.server)}, controller ${described(fresh.controller)}`);
  } finally {
    load.kill();
    await Promise.all([server.stop(), controller.stop()]);
    await endpoint.stop();
    await ns.delete().catch(() => undefined);
    await cp.stop();
  }
  report(samples, fresh, stats, final, machineLines);
}

function report(
  samples: Sample[],
  fresh: { server: Memory; controller: Memory; serverReadySeconds: number; controllerReadySeconds: number },
  stats: EndpointStats,
  counts: SoakLoadCounts,
  machineLines: string[],
): void {
  const windows = samples.filter((s) => s.minutes > 0 && !s.label.startsWith('load stopped'));
  const warm = windows[0]!;
  const last = windows[windows.length - 1]!;
  const after = samples[samples.length - 1]!;
  const growth = (pick: (s: Sample) => number) => Math.round((pick(last) - pick(warm)) * 10) / 10;
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const figures = {
    minutes: MINUTES,
    semiSpaceMiB: SEMI_SPACE_MIB,
    windowMinutes: WINDOW_MINUTES,
    connections: POPULATION,
    importsPerSecond: IMPORTS_PER_SECOND,
    fetchesPerSecond: FETCHES_PER_SECOND,
    samples,
    fresh,
    serverGrowthAfterWarmUpMiB: growth((s) => s.server.rssMiB),
    controllerGrowthAfterWarmUpMiB: growth((s) => s.controller.rssMiB),
    serverHeapGrowthAfterWarmUpMiB: growth((s) => s.server.heapMiB),
    controllerHeapGrowthAfterWarmUpMiB: growth((s) => s.controller.heapMiB),
    serverRssToFresh: ratio(last.server.rssMiB, fresh.server.rssMiB),
    controllerRssToFresh: ratio(last.controller.rssMiB, fresh.controller.rssMiB),
    serverRssAfterGcToFresh: ratio(after.server.rssAfterGcMiB, fresh.server.rssAfterGcMiB),
    controllerRssAfterGcToFresh: ratio(after.controller.rssAfterGcMiB, fresh.controller.rssAfterGcMiB),
    requests: { ok: counts.ok, failed: counts.failed, skippedTicks: counts.skipped },
    tokenEndpoint: { calls: stats.calls, refreshes: stats.refreshes, reuseRefusals: stats.reuseRefusals },
  };
  writeFigures('soak', figures);
  writeSection('soak', render(figures as SoakFigures, machineLines));
}

type SoakFigures = {
  minutes: number;
  semiSpaceMiB: number;
  windowMinutes: number;
  connections: number;
  importsPerSecond: number;
  fetchesPerSecond: number;
  samples: Sample[];
  fresh: { server: Memory; controller: Memory };
  serverGrowthAfterWarmUpMiB: number;
  controllerGrowthAfterWarmUpMiB: number;
  serverHeapGrowthAfterWarmUpMiB: number;
  controllerHeapGrowthAfterWarmUpMiB: number;
  serverRssToFresh: number;
  controllerRssToFresh: number;
  serverRssAfterGcToFresh: number;
  controllerRssAfterGcToFresh: number;
  requests: { ok: SoakLoadCounts['ok']; failed: SoakLoadCounts['failed']; skippedTicks: number };
  tokenEndpoint: { calls: number; refreshes: number; reuseRefusals: number };
};

function render(f: SoakFigures, machineLines: string[]): string {
  const failed = (k: keyof SoakLoadCounts['failed']) => Object.values(f.requests.failed[k]).reduce((a, b) => a + b, 0);
  const f1 = (n: number) => n.toFixed(1);
  const row = (s: Sample) =>
    `| ${s.label} | ${s.counts.live} | ${s.counts.ok.import} / ${s.counts.ok.fetch} / ${s.counts.ok.delete} | ${s.tokenRefreshes} | ` +
    `${f1(s.server.rssMiB)} | ${f1(s.server.rssAfterGcMiB)} | ${f1(s.server.heapMiB)} | ` +
    `${f1(s.controller.rssMiB)} | ${f1(s.controller.rssAfterGcMiB)} | ${f1(s.controller.heapMiB)} | ${s.loadAverage.map((x) => x.toFixed(1)).join(' ')} |`;
  return `## Soak: ${f.minutes} minutes of mixed load (\`npm run bench:soak\`, \`bench/soak.ts\`)

${machineLines.join('\n')}

One server replica and one controller replica, each in its own process with the chart's default heap flags
(\`--max-old-space-size\` ${CHART_HEAP_LIMIT_MIB.server} / ${CHART_HEAP_LIMIT_MIB.controller}, \`--max-semi-space-size\` ${f.semiSpaceMiB || "V8's default"}), against a local control plane. A load generator in its own
process (\`bench/soak-load.ts\`) first imports ${f.connections.toLocaleString('en-US')} connections, then for ${f.minutes} minutes imports ${f.importsPerSecond}/s, deletes
the oldest at the same rate (the population stays at ${f.connections.toLocaleString('en-US')}) and fetches ${f.fetchesPerSecond}/s a random live one. Half the
connections are OAuth 2 with tokens expiring 1–15 minutes after their import, refreshed by the controller (or
on fetch when due) against a token endpoint in its own process (150 ms, rotating refresh tokens, tokens for
10 minutes); the other half API keys. Memory is read inside each replica at the end of every ${f.windowMinutes} minutes: RSS as
it ran, then RSS and used heap after forced collections. The peer: once the load stopped, both replicas are
replaced by fresh ones holding the same data, measured the same way.

| sample | live connections | imports / fetches / deletes (total, 2xx) | token refreshes (total) | server RSS, MiB | server RSS after GC | server heap | controller RSS, MiB | controller RSS after GC | controller heap | load average |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
${f.samples.map(row).join('\n')}
| **peer: fresh replicas, same data** | — | — | — | ${f1(f.fresh.server.rssMiB)} | ${f1(f.fresh.server.rssAfterGcMiB)} | ${f1(f.fresh.server.heapMiB)} | ${f1(f.fresh.controller.rssMiB)} | ${f1(f.fresh.controller.rssAfterGcMiB)} | ${f1(f.fresh.controller.heapMiB)} | — |

- **Growth after warm-up** (RSS as it ran, from the end of the first window to the end of the last): server
  ${f.serverGrowthAfterWarmUpMiB} MiB, controller ${f.controllerGrowthAfterWarmUpMiB} MiB; used heap after GC: server ${f.serverHeapGrowthAfterWarmUpMiB} MiB, controller
  ${f.controllerHeapGrowthAfterWarmUpMiB} MiB (goal: flat).
- **Against a fresh replica** (goal ≤ 1.5×): RSS at the end of the load ÷ the fresh replica's, server
  ${f.serverRssToFresh}×, controller ${f.controllerRssToFresh}×; after forced collections, server ${f.serverRssAfterGcToFresh}×, controller ${f.controllerRssAfterGcToFresh}×.
- Requests that failed: imports ${failed('import')}, fetches ${failed('fetch')}, deletes ${failed('delete')} (by status in docs/benchmarks.json); ticks
  that skipped requests with ${64} in flight: ${f.requests.skippedTicks}. Token endpoint: ${f.tokenEndpoint.calls} calls, ${f.tokenEndpoint.refreshes} refreshes,
  ${f.tokenEndpoint.reuseRefusals} reuse refusals.

${handNotes('soak')}`;
}

if (process.env.BENCH_SOAK_RENDER_ONLY === '1') {
  // The section again from docs/benchmarks.json (after a change of this text or of the notes), nothing measured.
  const f = readFigures().soak as SoakFigures;
  writeSection('soak', render(f, [...machine().filter((l) => !l.includes('Load average')), '- Load average: per sample, in the table']));
  process.exit(0);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);
