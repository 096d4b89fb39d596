/**
 * A Latchkey replica in its own Node.js process (bench/memory-replica.ts, forked with `--expose-gc`
 * and a heap limit), its time to the first `/readyz` 200, and its memory read inside it on request.
 * Used by the memory and soak benchmarks.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadYaml } from '@kubernetes/client-node';
import { freePort, REPO_ROOT } from '../dev/control-plane.js';
import type { MemoryReport, ReplicaCommand, ReplicaKind } from './memory-replica.js';

interface ChartValues {
  nodeSemiSpaceSizeMiB: number;
  controller: { resources: { limits: { memory: string } } };
  server: { resources: { limits: { memory: string } } };
}
const chartValues = loadYaml<ChartValues>(readFileSync(join(REPO_ROOT, 'charts/latchkey/values.yaml'), 'utf8'));
const mebibytes = (quantity: string) => Number(quantity.slice(0, -2)) * (quantity.endsWith('Gi') ? 1024 : 1);

/**
 * What the chart passes to Node.js by default, read from its values.yaml: the heap limit at 75 % of each
 * container's default memory limit (as templates/deployment.yaml computes it) and `nodeSemiSpaceSizeMiB`.
 */
export const CHART_HEAP_LIMIT_MIB = {
  controller: (mebibytes(chartValues.controller.resources.limits.memory) * 3) / 4,
  server: (mebibytes(chartValues.server.resources.limits.memory) * 3) / 4,
} as const;
export const CHART_SEMI_SPACE_MIB = chartValues.nodeSemiSpaceSizeMiB;

const REPLICA = join(dirname(fileURLToPath(import.meta.url)), 'memory-replica.js');

export interface ReplicaOptions {
  kind: ReplicaKind;
  /** POD_NAME: the shard member's identity for a controller. */
  identity: string;
  kubeconfigPath: string;
  namespace: string;
  /** `--max-old-space-size`, MiB; default the chart's for the kind. */
  heapLimitMiB?: number;
  /** `--max-semi-space-size`, MiB (0: V8's default); default the chart's. */
  semiSpaceMiB?: number;
  /** Bound on fork to /readyz 200, seconds. */
  waitSeconds: number;
  /** Extra environment (configuration) on top of the defaults below. */
  env?: Record<string, string>;
}

export interface RunningReplica {
  child: ChildProcess;
  port: number;
  /** Seconds from fork to the first /readyz 200. */
  readySeconds: number;
  measure(): Promise<MemoryReport>;
  /** The Prometheus page of the replica. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startReplica(opts: ReplicaOptions): Promise<RunningReplica> {
  const port = await freePort();
  const controller = opts.kind === 'controller';
  const env = {
    PATH: process.env.PATH,
    LATCHKEY_LOG_LEVEL: process.env.BENCH_REPLICA_LOG_LEVEL ?? 'warn',
    LATCHKEY_KUBECONFIG: opts.kubeconfigPath,
    LATCHKEY_WATCH_NAMESPACES: opts.namespace,
    LATCHKEY_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    POD_NAME: opts.identity,
    LATCHKEY_LEASE_NAMESPACE: opts.namespace,
    LATCHKEY_LEADER_ELECTION: String(controller),
    [controller ? 'LATCHKEY_CONTROLLER_PORT' : 'LATCHKEY_HTTP_PORT']: String(port),
    // Heap snapshots on measure, for finding what a replica retains (bench/memory-replica.ts).
    ...(process.env.BENCH_MEMORY_HEAP_SNAPSHOT_DIR ? { BENCH_MEMORY_HEAP_SNAPSHOT_DIR: process.env.BENCH_MEMORY_HEAP_SNAPSHOT_DIR } : {}),
    ...opts.env,
  };
  const heapLimitMiB = opts.heapLimitMiB ?? (controller ? CHART_HEAP_LIMIT_MIB.controller : CHART_HEAP_LIMIT_MIB.server);
  const semiSpaceMiB = opts.semiSpaceMiB ?? CHART_SEMI_SPACE_MIB;
  // BENCH_REPLICA_LOG_DIR keeps each replica's whole log (BENCH_REPLICA_LOG_LEVEL, default warn) in <dir>/<identity>.log.
  const logDir = process.env.BENCH_REPLICA_LOG_DIR;
  const t0 = performance.now();
  const child = fork(REPLICA, [opts.kind], {
    env,
    execArgv: [
      '--expose-gc',
      `--max-old-space-size=${heapLimitMiB}`,
      ...(semiSpaceMiB > 0 ? [`--max-semi-space-size=${semiSpaceMiB}`] : []),
      // BENCH_REPLICA_NODE_OPTIONS adds flags, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p` for a profile of the replica itself.
      ...(process.env.BENCH_REPLICA_NODE_OPTIONS?.split(/\s+/).filter(Boolean) ?? []),
    ],
    stdio: ['ignore', logDir ? 'pipe' : 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  if (logDir) {
    const keep = (c: Buffer) => appendFileSync(join(logDir, `${opts.identity}.log`), c);
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
  }
  let exited = false;
  child.on('exit', () => (exited = true));
  const deadline = Date.now() + opts.waitSeconds * 1000;
  for (;;) {
    if (exited) throw new Error(`${opts.identity} exited before it was ready: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`${opts.identity} not ready after ${opts.waitSeconds} s`);
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const readySeconds = (performance.now() - t0) / 1000;
  return {
    child,
    port,
    readySeconds,
    measure: () =>
      new Promise((resolve, reject) => {
        if (exited) return reject(new Error(`${opts.identity} exited: ${stderr}`));
        child.once('message', (m: { memory: MemoryReport }) => resolve(m.memory));
        child.send('measure' satisfies ReplicaCommand);
      }),
    metrics: async () => {
      const page = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
      try {
        return await page();
      } catch (first) {
        // Once more on a new connection: a kept-alive one can be closed by the replica just as a
        // request goes out (its keep-alive timer fires late after a long pause, such as a controller's
        // compacting GC at 100,000 connections: "read ECONNRESET" from a replica that was running).
        if (!exited) {
          await new Promise((r) => setTimeout(r, 500));
          const again = await page().catch(() => undefined);
          if (again !== undefined) return again;
        }
        // Say whether the replica died (and how) or stopped answering.
        const cause = first instanceof Error && first.cause instanceof Error ? first.cause.message : String(first);
        const state = exited ? `exited (code ${child.exitCode}, signal ${child.signalCode})` : 'running';
        throw new Error(`${opts.identity}: /metrics failed (${cause}); the replica is ${state}; stderr: ${stderr.slice(-2000)}`);
      }
    },
    stop: () =>
      new Promise((resolve) => {
        if (exited) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.send('stop' satisfies ReplicaCommand);
      }),
  };
}

/** Sum of one metric's samples (any labels matching `labels`) in a Prometheus text page. */
export function metricSum(page: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of page.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels && !line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
