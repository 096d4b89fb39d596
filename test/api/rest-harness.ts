/** An in-process Latchkey HTTP server (one "replica") for REST API tests, built like src/run.ts does. */
import type { KubeConfig } from '@kubernetes/client-node';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { loadConfig, type Config } from '../../src/app/config.js';
import { createContext, type AppContext } from '../../src/app/context.js';
import { KubeStore } from '../../src/k8s/store.js';
import { testLogger } from '../../dev/cluster.js';
import { LOOPBACK_PEERS } from '../../dev/egress.js';

export interface Replica {
  ctx: AppContext;
  server: RunningServer;
  url: string;
  /** JSON request with the given secret key. */
  call(
    method: string,
    path: string,
    opts?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export function testConfig(namespaces: string[], overrides: Record<string, string> = {}): Config {
  return loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: namespaces.join(','),
    LATCHKEY_PUBLIC_BASE_URL: 'https://latchkey.example.test',
    LATCHKEY_LEADER_ELECTION: 'false',
    POD_NAME: 'rest-test',
    LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS,
    ...overrides,
  });
}

export async function startReplica(kc: KubeConfig, namespaces: string[], defaultKey?: string): Promise<Replica> {
  const config = testConfig(namespaces);
  const logger = testLogger();
  const store = new KubeStore(kc, { namespaces, logger });
  await store.start();
  const ctx = createContext({ config, logger, kc, store });
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  return {
    ctx,
    server,
    url: server.url,
    async call(method, path, opts = {}) {
      const key = opts.key ?? defaultKey;
      const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(opts.headers ?? {}) };
      let body: string | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined) headers['content-type'] ??= 'application/json';
      const res = await fetch(`${server.url}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: the test will see the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await server.close();
      await store.stop();
    },
  };
}
