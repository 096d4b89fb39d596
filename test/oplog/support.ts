/** A Latchkey HTTP server built with createContext (so it has the operation log) and a clock the test moves. */
import { LOOPBACK_PEERS } from '../../dev/egress.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { loadConfig } from '../../src/platform/config.js';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/context/app-context.js';
import { testLogger } from '../../dev/cluster.js';
import { bodyOf } from '../support/api-clients.js';

export interface MovableClock {
  now(): number;
  /** Moves time forward (never back: log entries and tokens age as they would). */
  advance(ms: number): void;
}

export function movableClock(): MovableClock {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => (offset += ms) };
}

export interface OplogServer {
  ctx: AppContext;
  server: RunningServer;
  url: string;
  clock: MovableClock;
  call(method: string, path: string, opts?: { key?: string; body?: unknown }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startOplogServer(
  kc: KubeConfig,
  namespace: string,
  key: string,
  env: Record<string, string> = {},
): Promise<OplogServer> {
  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: namespace,
    LATCHKEY_LEADER_ELECTION: 'false',
    POD_NAME: 'oplog-test',
    // The OAuth server the tests run is on loopback: allowed through the egress guard.
    LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS,
    ...env,
  });
  const clock = movableClock();
  const ctx = createContext({ config, logger: testLogger(), kc, clock });
  await ctx.caches.start();
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  config.publicBaseUrl = server.url;
  return {
    ctx,
    server,
    url: server.url,
    clock,
    async call(method, path, opts = {}) {
      const k = opts.key ?? key;
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          ...(k ? { authorization: `Bearer ${k}` } : {}),
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      return { status: res.status, body: await bodyOf(res) };
    },
    async close() {
      await ctx.oplog?.stop();
      await server.close();
      await ctx.caches.stop();
    },
  };
}
