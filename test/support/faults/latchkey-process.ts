/**
 * A Latchkey replica as a separate process: the real entry point (`node dist/src/app/cli.js server|controller`)
 * with its configuration in environment variables, its pino JSON lines captured from stdout. A test can
 * SIGKILL it at any moment, pause it (SIGSTOP) and resume it (SIGCONT), or give it a kubeconfig that
 * reaches the API server through a cuttable TCP proxy (see {@link kubeconfigFile}).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { REPO_ROOT, freePort } from '../../../dev/control-plane.js';
import { LOOPBACK_PEERS } from '../../../dev/egress.js';

export type LatchkeyCommand = 'server' | 'controller';

/** One pino line, parsed (`time` is an ISO timestamp; `msg` the message). */
export interface LogLine {
  level: number;
  time: string;
  msg: string;
  [field: string]: unknown;
}

export interface LatchkeyProcessOptions {
  command: LatchkeyCommand;
  /** POD_NAME: the identity that holds Leases and claims webhook deliveries. */
  identity: string;
  namespaces: string[];
  /** Path of the kubeconfig the process uses (direct, or through a proxy). */
  kubeconfigPath: string;
  /** Extra LATCHKEY_* variables (override the defaults below). */
  env?: Record<string, string>;
  logLevel?: 'trace' | 'debug' | 'info';
}

export interface LatchkeyProcess {
  identity: string;
  command: LatchkeyCommand;
  pid: number;
  /** The REST API's URL (server) or the health server's (controller). */
  url: string;
  /** Every stdout line, parsed when it is JSON (pino), in order. */
  lines: LogLine[];
  /** Every raw stdout and stderr line (for the secrets scan: nothing escapes it). */
  raw: string[];
  /** Lines with this message. */
  logged(msg: string): LogLine[];
  /** Waits until the process answers /readyz with 200. */
  ready(timeoutMs?: number): Promise<void>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
  /** SIGTERM (graceful: releases Leases and claims), SIGKILL after 15 s. */
  stop(): Promise<void>;
  exited: Promise<number | null>;
  alive(): boolean;
}

/** Writes a kubeconfig for `kc`'s user pointing at `server` (e.g. a TCP proxy in front of the API server). */
export function kubeconfigFile(kc: KubeConfig, server = kc.getCurrentCluster()!.server): string {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-faults-'));
  const path = join(dir, 'kubeconfig');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: kc.getCurrentUser()!.token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  };
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
  return path;
}

export async function startLatchkeyProcess(opts: LatchkeyProcessOptions): Promise<LatchkeyProcess> {
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    POD_NAME: opts.identity,
    LATCHKEY_KUBECONFIG: opts.kubeconfigPath,
    LATCHKEY_WATCH_NAMESPACES: opts.namespaces.join(','),
    LATCHKEY_LEASE_NAMESPACE: opts.namespaces[0] ?? 'default',
    LATCHKEY_LOG_LEVEL: opts.logLevel ?? 'debug',
    LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS,
    LATCHKEY_HTTP_PORT: String(opts.command === 'server' ? port : await freePort()),
    LATCHKEY_CONTROLLER_PORT: String(opts.command === 'controller' ? port : await freePort()),
    LATCHKEY_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    // As testConfig: the fault tests' 8- and 10-second tokens live longer than this floor.
    LATCHKEY_REFRESH_FLOOR_SECONDS: '3',
    ...opts.env,
  };
  const child: ChildProcess = spawn(process.execPath, [join(REPO_ROOT, 'dist/src/app/cli.js'), opts.command], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const collect = (stream: NodeJS.ReadableStream, parse: boolean) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      rest += chunk;
      const parts = rest.split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        if (!line) continue;
        raw.push(line);
        if (!parse) continue;
        try {
          lines.push(JSON.parse(line) as LogLine);
        } catch {
          // not pino: kept in raw
        }
      }
    });
  };
  collect(child.stdout!, true);
  collect(child.stderr!, false);
  let exitCode: number | null | undefined;
  // 'close', not 'exit': stdout and stderr are read to the end first, so no line of a stopped process is missed.
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const signal = (s: NodeJS.Signals) => {
    if (exitCode === undefined) child.kill(s);
  };
  const p: LatchkeyProcess = {
    identity: opts.identity,
    command: opts.command,
    pid: child.pid!,
    url,
    lines,
    raw,
    logged: (msg) => lines.filter((l) => l.msg === msg),
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (exitCode !== undefined) throw new Error(`${opts.identity} exited (${exitCode}): ${raw.slice(-5).join('\n')}`);
        const status = await fetch(`${url}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) return;
        if (Date.now() > deadline) throw new Error(`${opts.identity} not ready within ${timeoutMs} ms: ${raw.slice(-5).join('\n')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async kill() {
      signal('SIGKILL');
      await exited;
    },
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async stop() {
      if (exitCode !== undefined) return;
      signal('SIGCONT');
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    exited,
    alive: () => exitCode === undefined,
  };
  return p;
}

/** Stops every process of a test, whatever state each is in (killed ones are skipped). */
export async function stopAll(processes: LatchkeyProcess[]): Promise<void> {
  await Promise.all(processes.map((p) => p.stop()));
}

/** Milliseconds since the epoch of a log line. */
export const lineTime = (l: LogLine): number => Date.parse(l.time);

/**
 * Keeps each process's output under test-results/fault-logs/<scenario>/ (to read after a failure), and
 * `extra` lines (a replica in the test process, by file name) beside them.
 */
export function dumpLogs(scenario: string, processes: LatchkeyProcess[], extra: Record<string, string[]> = {}): void {
  const dir = join(REPO_ROOT, 'test-results', 'fault-logs', scenario);
  mkdirSync(dir, { recursive: true });
  // A restarted replica keeps its identity: its earlier lives are <identity>.log, <identity>-1.log, ...
  const lives = new Map<string, number>();
  for (const p of processes) {
    const n = lives.get(p.identity) ?? 0;
    lives.set(p.identity, n + 1);
    writeFileSync(join(dir, `${p.identity}${n ? `-${n}` : ''}.log`), p.raw.join('\n') + '\n');
  }
  for (const [name, lines] of Object.entries(extra))
    writeFileSync(join(dir, `${name}.log`), lines.map((l) => l.trimEnd()).join('\n') + '\n');
}
