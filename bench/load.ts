/**
 * Load generators that run in their own processes, never in the event loop of the server being
 * measured: autocannon's CLI (`--json`) for throughput and tail latency, and bench/latency-probe.ts
 * for one-request-in-flight latency with microsecond resolution (autocannon's histogram counts
 * whole milliseconds).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const PROBE = join(dirname(fileURLToPath(import.meta.url)), 'latency-probe.js');
const PACED = join(dirname(fileURLToPath(import.meta.url)), 'paced-load.js');

export interface Target {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface CannonOptions {
  connections: number;
  seconds: number;
  /**
   * Overall request rate (autocannon `-R`): each connection sends its share of a second back to back,
   * then waits for the next second (bursts; see bench/paced-load.ts for requests spread over the second).
   */
  rate?: number;
}

export interface CannonResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
}

/** Runs autocannon in a child process against one target and returns its figures. */
export async function cannon(target: Target, opts: CannonOptions): Promise<CannonResult> {
  const args = [AUTOCANNON, '--json', '-c', String(opts.connections), '-d', String(opts.seconds)];
  if (opts.rate) args.push('-R', String(opts.rate));
  if (target.method) args.push('-m', target.method);
  for (const [k, v] of Object.entries(target.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (target.body !== undefined) args.push('-b', target.body);
  args.push(target.url);
  const out = await run(process.execPath, args);
  const r = JSON.parse(out) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    duration: number;
  };
  return {
    requestsPerSecond: r['2xx'] / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

export interface ProbeResult {
  count: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

/** One request at a time, `count` of them, from bench/latency-probe.ts in its own process. */
export async function probe(target: Target, count: number): Promise<ProbeResult> {
  const out = await run(process.execPath, [PROBE], JSON.stringify({ ...target, count }));
  return JSON.parse(out) as ProbeResult;
}

export interface PacedResult {
  count: number;
  errors: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/**
 * GET requests at a fixed rate spread over each second (open loop, latencies from each request's
 * scheduled start), from bench/paced-load.ts in its own process: what "p99 at N requests/s" means.
 * With `paths`, each request goes to the next of them on the target's host (wrapping).
 */
export async function paced(
  target: Target,
  opts: { rate: number; seconds: number; connections: number; warmupSeconds?: number; paths?: string[] },
): Promise<PacedResult> {
  const out = await run(process.execPath, [PACED], JSON.stringify({ url: target.url, headers: target.headers, ...opts }));
  return JSON.parse(out) as PacedResult;
}

function run(cmd: string, args: string[], stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}: ${err.slice(-500)}`))));
    child.stdin.end(stdin ?? '');
  });
}
