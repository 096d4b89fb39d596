/** Child processes of the benchmarks that are not Latchkey replicas: the token endpoint, `latchkey` CLI processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../dev/control-plane.js';

export interface FamilyStats {
  generation: number;
  refreshes: number;
  firstAt?: number;
}
export interface EndpointStats {
  calls: number;
  refreshes: number;
  reuseRefusals: number;
  malformed: number;
  unauthenticated: number;
  families: Record<string, FamilyStats>;
}

/** A child process whose first stdout line is JSON (the token endpoint) or whose output is kept for errors. */
export interface Child {
  proc: ChildProcess;
  tail: string[];
  exited: Promise<number | null>;
}

export function spawnChild(args: string[], env: NodeJS.ProcessEnv, logFile?: string): Child {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const file = logFile ? createWriteStream(logFile) : undefined;
  for (const stream of [proc.stdout!, proc.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      file?.write(`${line}\n`);
      tail.push(line);
      if (tail.length > 40) tail.shift();
    });
  }
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, tail, exited };
}

export async function stopChild(c: Child, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  c.proc.kill(signal);
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), 15_000);
  await c.exited;
  clearTimeout(timer);
}

/** The OAuth 2 token endpoint of bench/token-endpoint.ts in its own process. */
export async function startTokenEndpoint(opts: {
  latencyMs: number;
  /** expires_in of the tokens it issues (its default: 3600). */
  expiresInSeconds?: number;
}): Promise<{ url: string; stats(familyPrefix?: string): Promise<EndpointStats>; stop(): Promise<void> }> {
  const child = spawnChild([join(REPO_ROOT, 'dist/bench/token-endpoint.js')], {
    PATH: process.env.PATH,
    TOKEN_LATENCY_MS: String(opts.latencyMs),
    ...(opts.expiresInSeconds ? { TOKEN_EXPIRES_IN: String(opts.expiresInSeconds) } : {}),
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`token endpoint did not start: ${child.tail.join('\n')}`)), 20_000);
    createInterface({ input: child.proc.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/token`,
    stats: async (familyPrefix = '') =>
      (await (await fetch(`${base}/stats?prefix=${encodeURIComponent(familyPrefix)}`)).json()) as EndpointStats,
    stop: () => stopChild(child),
  };
}
