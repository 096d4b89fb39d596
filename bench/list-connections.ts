/**
 * The cost of an unpaged `GET /connections` (what Nango's SDK `listConnections()` sends): up to
 * 10,000 connections in one answer, served by a real Latchkey HTTP server from its informer caches
 * against a real control plane. Its peers, measured in the same run one after the other: a paged
 * request (`?limit=100`, what Latchkey answered before) on the same server, and a bare express route
 * answering the same JSON (serialized per request), so the difference is Latchkey's own work
 * (secret-key lookup, filtering, sorting, the connection views). Load comes from autocannon in its
 * own process, so the generator does not share the server's event loop. Connections are created
 * straight through the API server (the store), in parallel, not through HTTP.
 *
 * Writes its section of docs/benchmarks.md and the key `listConnections` of docs/benchmarks.json.
 *
 *   npm run bench:list-connections
 *   BENCH_LIST_CONNECTIONS=2000 BENCH_LIST_SECONDS=5 node dist/bench/list-connections.js
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { Nango } from '@nangohq/node';
import express from 'express';
import { startHttpServer } from '../src/http/server.js';
import { loadConfig } from '../src/platform/config.js';
import { createContext } from '../src/app/context.js';
import type { AppContext } from '../src/context/app-context.js';
import { KubeStore } from '../src/k8s/store.js';
import { createLogger } from '../src/platform/log.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { REPO_ROOT } from '../dev/repo-root.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import { writeFigures } from './figures.js';
import { apiKeyProvider, machine, mib, writeSection, startBenchControlPlane } from './support.js';

const run = promisify(execFile);
const COUNT = Number(process.env.BENCH_LIST_CONNECTIONS ?? 10_000);
const SECONDS = Number(process.env.BENCH_LIST_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.BENCH_LIST_CLIENTS ?? 4);
const FILL_CONCURRENCY = 64;
/** autocannon's per-request timeout (s): an unpaged answer on a loaded machine takes seconds. */
const TIMEOUT_SECONDS = 120;

interface Row {
  name: string;
  /** Bytes of one response body. */
  bytes: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  mbPerSec: number;
  errors: number;
}

/** autocannon in a child process (its CLI's JSON result). */
async function load(name: string, url: string, headers: Record<string, string>): Promise<Row> {
  const bytes = Buffer.byteLength(await (await fetch(url, { headers })).text());
  const bin = join(REPO_ROOT, 'node_modules/.bin/autocannon');
  const args = ['--json', '-c', String(CONNECTIONS), '-d', String(SECONDS), '-t', String(TIMEOUT_SECONDS)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const { stdout } = await run(bin, [...args, url], { maxBuffer: 16 * 2 ** 20 });
  const r = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    throughput: { average: number };
    errors: number;
    non2xx: number;
  };
  return {
    name,
    bytes,
    requests: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mbPerSec: r.throughput.average / 2 ** 20,
    errors: r.errors + r.non2xx,
  };
}

async function main(): Promise<void> {
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const ns = await createTestNamespace(kc, 'bench-list');
  const provider = `bench-list-keys-${ns.name}`;
  await applyProvider(kc, provider, apiKeyProvider('Bench keys'));
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
  // The server runs in this process (the load generator does not): its RSS is this process's.
  const rssEmpty = process.memoryUsage().rss;

  const fillStarted = Date.now();
  for (let i = 0; i < COUNT; i += FILL_CONCURRENCY) {
    await Promise.all(
      Array.from({ length: Math.min(FILL_CONCURRENCY, COUNT - i) }, (_, j) =>
        store.connections.createConnection({
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
  await eventually(() => store.connectionScans.listConnections(ns.name).length >= COUNT, 120_000);

  // What is measured is what the SDK gets: every connection in one answer.
  const body = await new Nango({ host: server.url, secretKey: env.secretKey }).listConnections();
  if (body.connections.length !== Math.min(COUNT, 10_000)) throw new Error(`listed ${body.connections.length}, expected ${COUNT}`);
  const rssFilled = process.memoryUsage().rss;

  // The peer: the same answer from a bare express route (JSON serialized on every request).
  const peer = express();
  peer.get('/connections', (_req, res) => {
    res.json(body);
  });
  const peerServer = await new Promise<Server>((resolve) => {
    const s = peer.listen(0, '127.0.0.1', () => resolve(s));
  });
  const peerPort = (peerServer.address() as { port: number }).port;

  const unpaged = await load('Latchkey `GET /connections` (unpaged, `listConnections()`)', `${server.url}/connections`, auth);
  const rssAfterUnpaged = process.memoryUsage().rss;
  const paged = await load('Latchkey `GET /connections?limit=100` (one page)', `${server.url}/connections?limit=100`, auth);
  const bare = await load('bare express route, the same unpaged JSON', `http://127.0.0.1:${peerPort}/connections`, {});
  const rows = [unpaged, paged, bare];

  const table = [
    '| request | response | req/s | p50 | p99 | MiB/s | requests | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.bytes < 2 ** 20 ? `${(r.bytes / 1024).toFixed(1)} KiB` : mib(r.bytes)} | ${r.rps.toFixed(1)} | ${r.p50} ms | ${r.p99} ms | ${r.mbPerSec.toFixed(1)} | ${r.requests} | ${r.errors} |`,
    ),
  ].join('\n');
  const markdown = `## Listing ${COUNT.toLocaleString('en')} connections (\`npm run bench:list-connections\`, \`bench/list-connections.ts\`)

${machine().join('\n')}

Nango's SDK \`listConnections()\` sends \`GET /connections\` without paging parameters, and Latchkey answers it with
every connection (up to 10,000) in one response. ${COUNT.toLocaleString('en')} API_KEY connections with end users were created straight
through the API server, ${FILL_CONCURRENCY} at a time, in ${fillSeconds.toFixed(0)} s; the SDK's own \`listConnections()\` then returned all of
them. Load: autocannon in its own process, ${CONNECTIONS} keep-alive connections, ${SECONDS} s per row, the rows one after the other
in the same run; the paged request (100 connections, what Latchkey answered before) and a bare express route
serving the same unpaged JSON are the peers.

${table}

Server RSS (the Latchkey server's process, which also holds the SDK's parsed copy of one answer for the bare peer; the load generator runs in its own): ${mib(rssEmpty)} with no
connections, ${mib(rssFilled)} with ${COUNT.toLocaleString('en')} connections in the informer caches, ${mib(rssAfterUnpaged)} after the unpaged load.
Each unpaged answer builds ${COUNT.toLocaleString('en')} connection views and serializes them, so its cost grows with the number of
connections; an application that lists often should page (\`limit\`/\`cursor\`) or filter (\`endUserId\`, \`integrationId\`).
`;
  process.stdout.write(markdown);
  writeSection('list-connections', markdown);
  const figures = (r: Row) => ({
    responseBytes: r.bytes,
    requestsPerSecond: r.rps,
    p50Ms: r.p50,
    p99Ms: r.p99,
    mibPerSecond: r.mbPerSec,
    requests: r.requests,
    errors: r.errors,
  });
  writeFigures('listConnections', {
    connections: COUNT,
    seconds: SECONDS,
    clients: CONNECTIONS,
    fillSeconds,
    unpaged: figures(unpaged),
    paged: { limit: 100, ...figures(paged) },
    bareExpress: figures(bare),
    serverRssBytes: { noConnections: rssEmpty, filled: rssFilled, afterUnpagedLoad: rssAfterUnpaged },
  });

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
