/**
 * The cost of an unpaged `GET /connections` (what Nango's SDK `listConnections()` sends): up to
 * 10,000 connections in one answer, served by a real Latchkey HTTP server from its informer caches
 * against a real control plane. Next to it, measured in the same run, a peer: a bare express route
 * answering the same JSON (serialized per request), so the difference is Latchkey's own work
 * (secret-key lookup, filtering, sorting, the connection views). Load comes from autocannon in its
 * own process, so the generator does not share the server's event loop.
 *
 *   npm run build && node dist/bench/list-connections.js        # prints a markdown section
 *   BENCH_LIST_CONNECTIONS=2000 BENCH_LIST_SECONDS=5 node dist/bench/list-connections.js
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import express from 'express';
import { startHttpServer } from '../src/http/server.js';
import { loadConfig } from '../src/app/config.js';
import { createContext, type AppContext } from '../src/app/context.js';
import { KubeStore } from '../src/k8s/store.js';
import { createLogger } from '../src/app/log.js';
import { installCrds } from '../dev/apply.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { startControlPlane } from '../dev/control-plane.js';
import { REPO_ROOT } from '../dev/repo-root.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import { machine } from './support.js';

const run = promisify(execFile);
const COUNT = Number(process.env.BENCH_LIST_CONNECTIONS ?? 10_000);
const SECONDS = Number(process.env.BENCH_LIST_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_LIST_CLIENTS ?? 4);
const FILL_CONCURRENCY = 32;

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  mbPerSec: number;
  errors: number;
}

/** autocannon in a child process (its CLI's JSON result). */
async function load(name: string, url: string, headers: Record<string, string>): Promise<Row> {
  const bin = join(REPO_ROOT, 'node_modules/.bin/autocannon');
  const args = ['--json', '-c', String(CONNECTIONS), '-d', String(SECONDS)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const { stdout } = await run(bin, [...args, url], { maxBuffer: 16 * 2 ** 20 });
  const r = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    throughput: { average: number };
    errors: number;
    non2xx: number;
  };
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mbPerSec: r.throughput.average / 2 ** 20,
    errors: r.errors + r.non2xx,
  };
}

async function main(): Promise<void> {
  const cp = await startControlPlane({ log: (l) => process.stderr.write(`[controlplane] ${l}\n`) });
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  await installCrds(kc, join(REPO_ROOT, 'crds'));
  const ns = await createTestNamespace(kc, 'bench-list');
  const provider = `bench-list-keys-${ns.name}`;
  await applyProvider(kc, provider, { displayName: 'Bench keys', authMode: 'API_KEY' });
  const env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'keys', { provider });

  const logger = createLogger('silent');
  const store = new KubeStore(kc, { namespaces: [ns.name], logger });
  await store.start();
  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: ns.name,
    LATCHKEY_LEADER_ELECTION: 'false',
    LATCHKEY_PUBLIC_BASE_URL: 'http://127.0.0.1',
    POD_NAME: 'bench-list',
  });
  const ctx: AppContext = createContext({ config, logger, kc, store });
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  const auth = { authorization: `Bearer ${env.secretKey}` };
  await eventually(async () => (await fetch(`${server.url}/providers`, { headers: auth })).status === 200);

  const fillStarted = Date.now();
  for (let i = 0; i < COUNT; i += FILL_CONCURRENCY) {
    await Promise.all(
      Array.from({ length: Math.min(FILL_CONCURRENCY, COUNT - i) }, (_, j) =>
        store.createConnection({
          namespace: ns.name,
          spec: {
            integration: 'keys',
            provider,
            connectionId: `c-${String(i + j).padStart(6, '0')}`,
            authMode: 'API_KEY',
            endUser: { id: `user-${i + j}`, email: `user-${i + j}@example.test` },
          },
          credentials: { type: 'API_KEY', apiKey: `key-${i + j}` },
        }),
      ),
    );
  }
  const fillSeconds = (Date.now() - fillStarted) / 1000;
  await eventually(() => store.listConnections(ns.name).length >= COUNT, 120_000);

  const sample = await fetch(`${server.url}/connections`, { headers: auth });
  const body = (await sample.json()) as { connections: unknown[] };
  if (body.connections.length !== Math.min(COUNT, 10_000)) throw new Error(`listed ${body.connections.length}, expected ${COUNT}`);
  const bytes = Buffer.byteLength(JSON.stringify(body));

  // The peer: the same answer from a bare express route (JSON serialized on every request).
  const peer = express();
  peer.get('/connections', (_req, res) => {
    res.json(body);
  });
  const peerServer = await new Promise<Server>((resolve) => {
    const s = peer.listen(0, '127.0.0.1', () => resolve(s));
  });
  const peerPort = (peerServer.address() as { port: number }).port;

  const rows = [
    await load('bare express, same JSON', `http://127.0.0.1:${peerPort}/connections`, {}),
    await load('Latchkey GET /connections (unpaged)', `${server.url}/connections`, auth),
    await load('Latchkey GET /connections?limit=100', `${server.url}/connections?limit=100`, auth),
  ];

  const table = [
    '| endpoint | req/s | p50 ms | p99 ms | MiB/s | errors |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.rps.toFixed(1)} | ${r.p50} | ${r.p99} | ${r.mbPerSec.toFixed(1)} | ${r.errors} |`),
  ].join('\n');
  process.stdout.write(`## Listing ${COUNT} connections in one answer (\`bench/list-connections.ts\`)

${machine().join('\n')}

${COUNT} connections (API_KEY, with end users) created through the store in ${fillSeconds.toFixed(0)} s; one unpaged
answer is ${(bytes / 2 ** 20).toFixed(2)} MiB of JSON. autocannon (own process), ${CONNECTIONS} connections, ${SECONDS} s per row,
rows measured one after the other in the same run.

${table}
`);

  await new Promise<void>((resolve) => peerServer.close(() => resolve()));
  await server.close();
  await store.stop();
  await deleteProvider(kc, provider);
  await ns.delete();
  await cp.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
