/**
 * Shared pieces of the benchmarks: a bounded closed-loop load runner, percentiles, a keep-alive
 * HTTP client, the machine description, and the writer that replaces one benchmark's section of
 * docs/benchmarks.md while keeping the others.
 */
import { execSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, totalmem } from 'node:os';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { installCrds } from '../dev/apply.js';
import { REPO_ROOT, startControlPlane, type ControlPlane } from '../dev/control-plane.js';
import { startKinePostgres, type KinePostgres } from '../dev/kine-postgres.js';

// ---- control plane ----

/**
 * What the benchmark's API server stores its objects in: `BENCH_STORAGE=kine-postgres` puts kine on a
 * throwaway Postgres behind it (dev/kine-postgres.ts) instead of etcd.
 */
export const BENCH_STORAGE = process.env.BENCH_STORAGE === 'kine-postgres' ? 'kine-postgres' : 'etcd';

/**
 * A local control plane of the benchmark's own (its log lines on stderr), Latchkey's CRDs installed, `kc`
 * pointed at it; on kine and Postgres when BENCH_STORAGE says so (`kine` is then set; cp.stop() stops it too).
 */
export async function startBenchControlPlane<K extends KubeConfig>(kc: K): Promise<{ cp: ControlPlane; kc: K; kine?: KinePostgres }> {
  const log = (l: string) => process.stderr.write(`[controlplane] ${l}\n`);
  const kine = BENCH_STORAGE === 'kine-postgres' ? await startKinePostgres({ log }) : undefined;
  let cp: ControlPlane;
  try {
    cp = await startControlPlane({ log, etcdServers: kine?.etcdEndpoint });
  } catch (err) {
    await kine?.stop();
    throw err;
  }
  if (kine) {
    const stopControlPlane = cp.stop;
    cp.stop = async () => {
      await stopControlPlane();
      await kine.stop();
    };
  }
  kc.loadFromFile(cp.kubeconfigPath);
  await installCrds(kc, join(REPO_ROOT, 'crds'));
  return { cp, kc, kine };
}

/**
 * An API-key Provider as a user would write it (it says where the key goes), so the connections of a
 * benchmark become Ready and carry the status a controller writes for real ones.
 */
export const apiKeyProvider = (displayName: string) => ({
  displayName,
  authMode: 'API_KEY' as const,
  proxy: { baseUrl: 'https://api.example.com', headers: { 'x-api-key': '${apiKey}' } },
});

// ---- statistics ----

export interface Summary {
  count: number;
  errors: number;
  seconds: number;
  /** Completed requests per second (errors not counted). */
  rps: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU time of this Node.js process per completed request, in ms (load generator included). */
  cpuMsPerOp: number;
  /** CPU time of the control plane's processes (kube-apiserver, etcd, ...) per completed request, in ms. */
  controlPlaneCpuMsPerOp: number;
  /** Share of the whole machine's CPU time that was idle during the phase (all processes, /proc/stat). */
  machineIdle: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export function summarize(
  latencies: number[],
  errors: number,
  seconds: number,
  cpuMs: number,
  controlPlaneCpuMs = NaN,
  machineIdle = NaN,
): Summary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    errors,
    seconds,
    rps: sorted.length / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? NaN,
    cpuMsPerOp: sorted.length ? cpuMs / sorted.length : NaN,
    controlPlaneCpuMsPerOp: sorted.length ? controlPlaneCpuMs / sorted.length : NaN,
    machineIdle,
  };
}

// ---- load ----

export interface LoadOptions {
  /** Operations to run at most. */
  count: number;
  /** Operations in flight at once (closed loop: each worker starts the next when one ends). */
  concurrency: number;
  /** Stop issuing new operations after this many seconds. */
  maxSeconds: number;
  /** One operation; `i` counts from 0. Throws (or rejects) on failure. */
  op: (i: number) => Promise<void>;
  /** Called with the first failure, so a broken benchmark says why instead of just counting errors. */
  onFirstError?: (err: unknown) => void;
  /** Cumulative CPU ms of other processes to attribute per operation (see {@link processCpuMs}). */
  controlPlaneCpu?: () => number;
}

/** Runs `op` up to `count` times with `concurrency` workers, bounded in time; latencies in ms. */
export async function runLoad(opts: LoadOptions): Promise<Summary> {
  const latencies: number[] = [];
  let issued = 0;
  let errors = 0;
  const deadline = Date.now() + opts.maxSeconds * 1000;
  const cpu0 = process.cpuUsage();
  const cp0 = opts.controlPlaneCpu?.() ?? NaN;
  const machine0 = machineCpu();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: Math.min(opts.concurrency, opts.count) }, async () => {
      while (issued < opts.count && Date.now() < deadline) {
        const i = issued++;
        const t0 = process.hrtime.bigint();
        try {
          await opts.op(i);
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        } catch (err) {
          if (errors++ === 0) opts.onFirstError?.(err);
        }
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const cp = (opts.controlPlaneCpu?.() ?? NaN) - cp0;
  return summarize(latencies, errors, seconds, (cpu.user + cpu.system) / 1000, cp, idleBetween(machine0, machineCpu()));
}

/** Cumulative busy and idle jiffies of the whole machine (first line of /proc/stat). */
export function machineCpu(): { busy: number; idle: number } {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    const n = fields.slice(0, 8).map(Number); // user nice system idle iowait irq softirq steal
    const idle = n[3]! + n[4]!;
    return { busy: n.reduce((a, b) => a + b, 0) - idle, idle };
  } catch {
    return { busy: NaN, idle: NaN };
  }
}

export function idleBetween(a: { busy: number; idle: number }, b: { busy: number; idle: number }): number {
  const idle = b.idle - a.idle;
  const total = idle + b.busy - a.busy;
  return total > 0 ? idle / total : NaN;
}

// ---- CPU of other processes ----

let clockTicks: number | undefined;

/**
 * Cumulative CPU time (user + system, ms) of every process whose command line contains `marker`,
 * from /proc (Linux). The local control plane's processes all carry its work directory in their
 * arguments, so `processCpuMs(cp.workDir)` is the API server's, etcd's and the controller manager's CPU.
 */
export function processCpuMs(marker: string): number {
  clockTicks ??= Number(sh('getconf CLK_TCK')) || 100;
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // the process ended meanwhile
    }
  }
  return (total * 1000) / clockTicks;
}

// ---- HTTP ----

export interface HttpAnswer {
  status: number;
  body: string;
}

/** A keep-alive HTTP/1.1 client for one loopback server (node:http, so the client stays cheap). */
export function httpClient(port: number, maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  return {
    call(method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
      return new Promise((resolve, reject) => {
        const h: Record<string, string | number> = { ...headers };
        if (body !== undefined) {
          h['content-type'] = 'application/json';
          h['content-length'] = Buffer.byteLength(body);
        }
        const req = request({ host: '127.0.0.1', port, method, path, headers: h, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    close(): void {
      agent.destroy();
    },
  };
}

/** Throws unless the answer has the expected status (the body's error code, never its secrets, in the message). */
export function expectStatus(answer: HttpAnswer, expected: number, what: string): void {
  if (answer.status === expected) return;
  let code = '';
  try {
    code = (JSON.parse(answer.body) as { error?: { code?: string; message?: string } }).error?.code ?? '';
  } catch {
    // not JSON
  }
  throw new Error(`${what}: expected ${expected}, got ${answer.status} ${code}`);
}

// ---- report ----

function sh(cmd: string): string {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

/** The machine, as Markdown list items. */
/**
 * The commit the measured code is at (short hash), with `+changes` when src/ or bench/ differ from it:
 * figures of different code must not be compared as one run.
 */
export function sourceCommit(): string {
  const head = sh('git rev-parse --short HEAD');
  return sh('git status --porcelain -- src bench dev') === '' ? head : `${head}+changes`;
}

export function machine(): string[] {
  return [
    `- CPU: ${cpus()[0]?.model ?? 'unknown'} (\`nproc\` = ${sh('nproc')})`,
    `- Memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node.js ${process.version}, ${process.platform}/${process.arch}`,
    `- Load average when the run started: ${sh("cut -d' ' -f1-3 /proc/loadavg")} (other developers' processes were not stopped)`,
    `- Date: ${new Date().toISOString().slice(0, 10)}`,
  ];
}

export const ms = (n: number) => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms` : '—');
export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** Section ids in the order they appear in docs/benchmarks.md. */
const SECTIONS = [
  'hot-paths',
  'provider-webhooks',
  'store',
  'api',
  'oplog',
  'list-connections',
  'catalog',
  'imports',
  'memory',
  'memory-kine-postgres',
  'refresh-storm',
  'soak',
  'connect-ui',
  'etcd-bytes',
  'workload-auth',
  'mcp-stream',
] as const;
export type SectionId = (typeof SECTIONS)[number];

const REPORT = join(REPO_ROOT, 'docs/benchmarks.md');
const HEADER = `# Benchmarks

\`npm run bench\` builds and runs every benchmark below, one after the other, each against its own real local
control plane (etcd, kube-apiserver, kube-controller-manager from \`dev/control-plane.ts\`) on 127.0.0.1, and
rewrites its own section of this file (and its key of \`docs/benchmarks.json\`, where it writes one). One benchmark alone: \`npm run bench:hot-paths\` (\`npm run bench:proxy\`: its proxy part only, figures printed), \`npm run bench:store\`, \`npm run bench:oplog\`,
\`npm run bench:api\`, \`npm run bench:provider-webhooks\`, \`npm run bench:list-connections\`, \`npm run bench:catalog\`, \`npm run bench:imports\`, \`npm run bench:memory\` (not part of \`npm run bench\`: it fills the API server with tens of thousands of connections), \`npm run bench:refresh-storm\` and \`npm run bench:soak\` (30 minutes; neither part of \`npm run bench\` either), \`npm run bench:connect-ui\` (the Connect UI's page weight), \`npm run bench:etcd-bytes\` (what one connection costs in etcd; not part of \`npm run bench\`), \`npm run bench:workload-auth\` (ServiceAccount tokens vs the secret key, token exchange), \`npm run bench:mcp-stream\` (a streamed MCP tool answer through the proxy). Every benchmark is bounded in count and time (environment variables at the top of each
file) and deletes what it created. Speed and memory are measured here, never asserted in tests.

The machine is small (2 cores) and shared: the API server, etcd and the Node.js process (Latchkey, the load
generator and, where used, the OAuth server) compete for the same cores, so absolute figures are a floor
for a real deployment rather than its capacity. Each section shows how busy the machine was: the load
average when it started and, per phase where measured, the CPU used by Latchkey's process, by the control
plane and left idle. Memory per connection does not depend on the load and carries over.
`;

const start = (id: SectionId) => `<!-- bench:${id}:start -->`;
const end = (id: SectionId) => `<!-- bench:${id}:end -->`;

/**
 * Replaces the section `id` of docs/benchmarks.md (between its markers) and keeps the other
 * sections as they were; the header is rewritten. `markdown` starts with its own "## " heading.
 */
export function writeSection(id: SectionId, markdown: string): void {
  const current = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : '';
  const sections = new Map<SectionId, string>();
  for (const s of SECTIONS) {
    const a = current.indexOf(start(s));
    const b = current.indexOf(end(s));
    if (a >= 0 && b > a) sections.set(s, current.slice(a + start(s).length, b).trim());
  }
  sections.set(id, markdown.trim());
  // Text after the last section (written by hand, e.g. the e2e suite's figures) stays after them.
  const lastEnd = Math.max(...SECTIONS.map((s) => (current.includes(end(s)) ? current.indexOf(end(s)) + end(s).length : -1)));
  const tail = lastEnd > 0 ? current.slice(lastEnd).trim() : '';
  const body = SECTIONS.filter((s) => sections.has(s))
    .map((s) => `${start(s)}\n${sections.get(s)}\n${end(s)}`)
    .join('\n\n');
  writeFileSync(REPORT, `${HEADER}\n${body}\n${tail ? `\n${tail}\n` : ''}`);
}

/**
 * What a benchmark's runs found and what was changed for it, written by hand in bench/<name>-notes.md
 * and put into every rendering of its section, so a re-run keeps it.
 */
export function handNotes(name: string): string {
  const file = join(REPO_ROOT, `bench/${name}-notes.md`);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
}
