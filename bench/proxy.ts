/**
 * Proxy overhead: requests per second and p50/p99 latency of the same upstream called directly and
 * through Latchkey's proxy, in one run, on loopback. Starts a real control plane (the test
 * harness's), a Latchkey HTTP server and an upstream HTTP server; bounded in count and time.
 *
 *   npm run bench:proxy      # rewrites the proxy section of docs/benchmarks.md (npm run bench runs every benchmark)
 *   BENCH_REQUESTS=2000 BENCH_CONCURRENCY=8 npm run bench:proxy
 */
import { createServer, request, Agent } from 'node:http';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startHttpServer } from '../src/http/server.js';
import { loadConfig } from '../src/app/config.js';
import { createContext } from '../src/app/context.js';
import { installCrds } from '../dev/apply.js';
import { createLogger } from '../src/app/log.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { REPO_ROOT, startControlPlane } from '../dev/control-plane.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import { machine, writeSection } from './support.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 20);
const WARMUP = Math.min(500, Math.ceil(REQUESTS / 10));
const BODY = JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `record ${i}`, active: i % 2 === 0 })) });

interface Result {
  label: string;
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
}

async function load(label: string, port: number, path: string, headers: Record<string, string>): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`status ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
  const run = async (count: number, deadline: number, latencies: number[] | undefined) => {
    let issued = 0;
    let errors = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (issued < count && Date.now() < deadline) {
          issued++;
          try {
            const ms = await one();
            latencies?.push(ms);
          } catch {
            errors++;
          }
        }
      }),
    );
    return errors;
  };
  await run(WARMUP, Date.now() + MAX_SECONDS * 1000, undefined);
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const errors = await run(REQUESTS, Date.now() + MAX_SECONDS * 1000, latencies);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { label, requests: latencies.length, errors, seconds, rps: latencies.length / seconds, p50: q(0.5), p99: q(0.99) };
}

async function main(): Promise<void> {
  const logger = createLogger('silent');
  const cp = await startControlPlane({ log: (l) => process.stderr.write(`[controlplane] ${l}\n`) });
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  await installCrds(kc, join(REPO_ROOT, 'crds'));

  const upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) });
    res.end(BODY);
  });
  upstream.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upPort = (upstream.address() as { port: number }).port;

  const ns = await createTestNamespace(kc, 'bench');
  const ctx = createContext({ config: loadConfig({ LATCHKEY_WATCH_NAMESPACES: ns.name }), logger, kc });
  const { store } = ctx;
  await store.start();
  const env = await createEnvironment(kc, ns.name);
  const provider = `bench-${ns.name}`;
  await applyProvider(kc, provider, {
    displayName: 'Bench',
    authMode: 'API_KEY',
    proxy: { baseUrl: `http://127.0.0.1:${upPort}/api`, headers: { 'x-api-key': '${apiKey}' } },
  });
  await createIntegration(kc, ns.name, 'bench', { provider });
  await eventually(
    () => store.getProvider(provider) && store.getIntegration(ns.name, 'bench') && store.getReferencedSecret(ns.name, `${env.name}-keys`),
  );
  await store.createConnection({
    namespace: ns.name,
    spec: { integration: 'bench', provider, connectionId: 'c1', authMode: 'API_KEY' },
    credentials: { type: 'API_KEY', apiKey: 'bench-key' },
  });
  const server = await startHttpServer(ctx, 0, '127.0.0.1');

  try {
    const direct = await load('direct', upPort, '/api/records?limit=20', { 'x-api-key': 'bench-key' });
    const proxied = await load('through the proxy', server.port, '/proxy/records?limit=20', {
      authorization: `Bearer ${env.secretKey}`,
      'connection-id': 'c1',
      'provider-config-key': 'bench',
    });
    const rows = [direct, proxied];
    for (const r of rows)
      process.stdout.write(
        `${r.label}: ${r.requests} requests, ${r.errors} errors, ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms\n`,
      );
    writeReport(rows);
  } finally {
    await server.close();
    await store.stop();
    await deleteProvider(kc, provider);
    await ns.delete();
    await new Promise((r) => upstream.close(r));
    await cp.stop();
  }
}

const signed = (n: number) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(2)}`;

function writeReport(rows: Result[]): void {
  const [direct, proxied] = rows as [Result, Result];
  const text = `## Proxy overhead (\`npm run bench:proxy\`, \`bench/proxy.ts\`)

The same upstream HTTP server on 127.0.0.1 (a ${Buffer.byteLength(BODY)}-byte JSON answer) called directly and through
Latchkey's proxy (\`GET /proxy/records\` with \`Connection-Id\` / \`Provider-Config-Key\`, an API_KEY connection whose key
the proxy puts in a header). ${CONCURRENCY} concurrent keep-alive clients, ${WARMUP} warm-up requests, then up to ${REQUESTS}
measured requests (at most ${MAX_SECONDS} s) per target. The load generator, the proxy and the upstream share one
Node.js process (and its event loop), on a machine whose other processes were not stopped, so the figures are
for comparing the two rows, not absolute capacity. The proxy's work per request: secret-key lookup, connection
and provider from the informer caches, SSRF checks, credential templating, a pooled upstream request and a
streamed response.

| target | requests | errors | requests/s | p50 latency | p99 latency |
|---|---:|---:|---:|---:|---:|
${rows.map((r) => `| ${r.label} | ${r.requests} | ${r.errors} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} ms | ${r.p99.toFixed(2)} ms |`).join('\n')}

Overhead through the proxy: p50 ${signed(proxied.p50 - direct.p50)} ms, p99 ${signed(proxied.p99 - direct.p99)} ms,
throughput ${((proxied.rps / direct.rps) * 100).toFixed(0)} % of direct.

Machine:

${machine().join('\n')}
`;
  writeSection('proxy', text);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
