/**
 * The provider catalog through the REST API with 1,000 Providers in the informer cache: `GET /providers`
 * (every Provider's view in one answer) and `GET /providers/{name}` (one view), each next to a bare
 * express route answering the same JSON (serialized per request) in the same run, and `GET /connections/:id`
 * (a fresh API key, cache only: today's REST latency) as the reference. A real Latchkey HTTP server
 * (`startHttpServer` on an `AppContext`) against a real control plane; load from autocannon in its own
 * process, the rows one after the other. The Providers are the shipped catalog (config/providers) and,
 * while it has fewer than 1,000, copies of its manifests under other names (`<name>-copy-<n>`, aliases
 * left out) up to 1,000.
 *
 * Writes its section of docs/benchmarks.md and the key `catalog` of docs/benchmarks.json.
 *
 *   npm run bench:catalog
 *   BENCH_CATALOG_PROVIDERS=2000 BENCH_CATALOG_SECONDS=5 node dist/bench/catalog.js
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { KubeConfig, loadAllYaml } from '@kubernetes/client-node';
import express from 'express';
import { startHttpServer } from '../src/http/server.js';
import { loadConfig } from '../src/platform/config.js';
import { createContext } from '../src/app/context.js';
import type { AppContext } from '../src/context/app-context.js';
import { KubeStore } from '../src/k8s/store.js';
import type { ProviderSpec } from '../src/k8s/resources.js';
import { createLogger } from '../src/platform/log.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import { REPO_ROOT } from '../dev/repo-root.js';
import { cannon, type CannonResult } from './load.js';
import { writeFigures } from './figures.js';
import { apiKeyProvider, handNotes, machine, writeSection, startBenchControlPlane } from './support.js';

const PROVIDERS = Number(process.env.BENCH_CATALOG_PROVIDERS ?? 1000);
const SECONDS = Number(process.env.BENCH_CATALOG_SECONDS ?? 5);
/** Each Latchkey route and its bare peer run alternately this many times (a shared, busy machine). */
const ROUNDS = Number(process.env.BENCH_CATALOG_ROUNDS ?? 3);
const CLIENTS = Number(process.env.BENCH_CATALOG_CLIENTS ?? 4);
const APPLY_CONCURRENCY = 32;
/** The one provider fetched by name. */
const ONE = 'github';

interface Row {
  name: string;
  bytes: number;
  /** The round with the median requests per second. */
  result: CannonResult;
  rounds: CannonResult[];
}

async function once(name: string, url: string, headers: Record<string, string>): Promise<CannonResult> {
  const result = await cannon({ url, headers }, { connections: CLIENTS, seconds: SECONDS });
  if (result.errors || result.non2xx) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  return result;
}

/** Routes measured alternately (a Latchkey route and its peer), ROUNDS times each; each row keeps its median round. */
async function alternate(...targets: Array<{ name: string; url: string; headers: Record<string, string> }>): Promise<Row[]> {
  const rows: Row[] = [];
  for (const t of targets) {
    const res = await fetch(t.url, { headers: t.headers });
    if (res.status !== 200) throw new Error(`${t.name}: status ${res.status}`);
    rows.push({ name: t.name, bytes: Buffer.byteLength(await res.text()), result: undefined as never, rounds: [] });
  }
  for (let i = 0; i < ROUNDS; i++) for (const [j, t] of targets.entries()) rows[j]!.rounds.push(await once(t.name, t.url, t.headers));
  for (const r of rows) r.result = [...r.rounds].sort((x, y) => x.requestsPerSecond - y.requestsPerSecond)[Math.floor(ROUNDS / 2)]!;
  return rows;
}

/** The shipped manifests, then copies of them under other names until there are `count`. */
function providersToApply(count: number): { specs: Array<[string, ProviderSpec]>; shipped: number } {
  const dir = join(REPO_ROOT, 'config/providers');
  const shipped = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort()
    .map((f) => loadAllYaml(readFileSync(join(dir, f), 'utf8'))[0] as { metadata: { name: string }; spec: ProviderSpec })
    .map((m) => [m.metadata.name, m.spec] as [string, ProviderSpec]);
  const specs = shipped.slice(0, count);
  for (let n = 1; specs.length < count; n++) {
    for (const [name, spec] of shipped) {
      if (specs.length >= count) break;
      const { aliases: _aliases, ...copy } = spec;
      specs.push([`${name}-copy-${n}`, copy]);
    }
  }
  return { specs, shipped: shipped.length };
}

async function main(): Promise<void> {
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const ns = await createTestNamespace(kc, 'bench-catalog');
  const { specs, shipped } = providersToApply(PROVIDERS);
  const applyStarted = Date.now();
  for (let i = 0; i < specs.length; i += APPLY_CONCURRENCY)
    await Promise.all(specs.slice(i, i + APPLY_CONCURRENCY).map(([name, spec]) => applyProvider(kc, name, spec)));
  const applySeconds = (Date.now() - applyStarted) / 1000;
  const keysProvider = `bench-catalog-keys-${ns.name}`;
  await applyProvider(kc, keysProvider, apiKeyProvider('Bench catalog keys'));
  const env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'keys', { provider: keysProvider });

  const logger = createLogger('silent');
  const store = new KubeStore(kc, { namespaces: [ns.name], logger });
  await store.start();
  await eventually(() => store.catalog.listProviders().length >= specs.length + 1, 120_000);
  await store.connections.createConnection({
    namespace: ns.name,
    spec: { integration: 'keys', provider: keysProvider, connectionId: 'ref', authMode: 'API_KEY', endUser: { id: 'user-ref' } },
    credentials: { type: 'API_KEY', apiKey: 'bench-key' },
  });
  await eventually(() => store.connections.getConnection(ns.name, 'keys', 'ref'));
  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: ns.name,
    LATCHKEY_LEADER_ELECTION: 'false',
    LATCHKEY_PUBLIC_BASE_URL: 'http://127.0.0.1',
    POD_NAME: 'bench-catalog',
  });
  const ctx: AppContext = createContext({ config, logger, kc, store });
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  const auth = { authorization: `Bearer ${env.secretKey}` };
  await eventually(async () => (await fetch(`${server.url}/providers/${ONE}`, { headers: auth })).status === 200);

  // The peers: the same answers from bare express routes (JSON serialized on every request).
  const list = (await (await fetch(`${server.url}/providers`, { headers: auth })).json()) as { data: unknown[] };
  if (list.data.length !== specs.length + 1) throw new Error(`listed ${list.data.length} providers, expected ${specs.length + 1}`);
  const one = (await (await fetch(`${server.url}/providers/${ONE}`, { headers: auth })).json()) as unknown;
  const peer = express();
  peer.get('/providers', (_req, res) => {
    res.json(list);
  });
  peer.get('/providers/:provider', (_req, res) => {
    res.json(one);
  });
  const peerServer = await new Promise<Server>((resolve) => {
    const s = peer.listen(0, '127.0.0.1', () => resolve(s));
  });
  const peerUrl = `http://127.0.0.1:${(peerServer.address() as { port: number }).port}`;

  const [listRow, listPeer] = (await alternate(
    { name: `Latchkey \`GET /providers\` (${list.data.length} providers)`, url: `${server.url}/providers`, headers: auth },
    { name: 'bare express route, the same JSON', url: `${peerUrl}/providers`, headers: {} },
  )) as [Row, Row];
  const [oneRow, onePeer] = (await alternate(
    { name: `Latchkey \`GET /providers/${ONE}\``, url: `${server.url}/providers/${ONE}`, headers: auth },
    { name: 'bare express route, the same JSON', url: `${peerUrl}/providers/${ONE}`, headers: {} },
  )) as [Row, Row];
  const [reference] = (await alternate({
    name: 'Latchkey `GET /connections/:id` (fresh API key: the reference REST latency)',
    url: `${server.url}/connections/ref?provider_config_key=keys`,
    headers: auth,
  })) as [Row];
  const rows = [listRow, listPeer, oneRow, onePeer, reference];
  const ratios = (a: Row, b: Row) => a.rounds.map((r, i) => (r.requestsPerSecond / b.rounds[i]!.requestsPerSecond).toFixed(2)).join(', ');
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  const table = [
    '| request | response | req/s | p50 | p99 | requests |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${kib(r.bytes)} | ${r.result.requestsPerSecond.toFixed(0)} | ${r.result.p50Ms} ms | ${r.result.p99Ms} ms | ${r.result.requests} |`,
    ),
  ].join('\n');
  // The list's latency is its answer's size: compared with the bare route serving the same bytes.
  const within = listRow.result.p99Ms <= listPeer.result.p99Ms;
  const copies = specs.length - Math.min(shipped, specs.length);
  const markdown = `## The provider catalog with ${specs.length.toLocaleString('en')} Providers (\`npm run bench:catalog\`, \`bench/catalog.ts\`)

${machine().join('\n')}

${specs.length.toLocaleString('en')} Providers in the informer cache: the ${Math.min(shipped, specs.length)} shipped manifests of config/providers${
    copies ? ` and ${copies} copies of them under other names (\`<name>-copy-<n>\`; the catalog has fewer than 1,000 providers yet)` : ''
  }, applied ${APPLY_CONCURRENCY} at a time in ${applySeconds.toFixed(0)} s, plus the API key Provider of the reference connection. One Latchkey
HTTP server built as in production; load from autocannon in its own process, ${CLIENTS} keep-alive connections, ${SECONDS} s per
run; each Latchkey route and a bare express route serving the same JSON (serialized per request) run alternately, ${ROUNDS} rounds
each, and each row shows its median round; \`GET /connections/:id\` of an API key connection (cache only) is the REST latency of today's routes.

${table}

\`GET /providers\` answers every Provider's view (sorted by name, logo URLs, snake_case) in ${kib(listRow.bytes)}; ${
    within
      ? `its p99 (${listRow.result.p99Ms} ms) is within the bare route's serving the same bytes (${listPeer.result.p99Ms} ms)`
      : `its p99 (${listRow.result.p99Ms} ms) is above the bare route's serving the same bytes (${listPeer.result.p99Ms} ms)`
  }. Latchkey's requests per second over the bare route's, round by round: \`GET /providers\` ${ratios(listRow, listPeer)};
\`GET /providers/{name}\` ${ratios(oneRow, onePeer)}.

${handNotes('catalog')}
`;
  process.stdout.write(markdown);
  writeSection('catalog', markdown);
  const figures = (r: Row) => ({ responseBytes: r.bytes, ...r.result, roundsRequestsPerSecond: r.rounds.map((x) => x.requestsPerSecond) });
  writeFigures('catalog', {
    providers: specs.length + 1,
    shippedManifests: Math.min(shipped, specs.length),
    copies,
    seconds: SECONDS,
    rounds: ROUNDS,
    clients: CLIENTS,
    applySeconds,
    list: figures(listRow),
    listBareExpress: figures(listPeer),
    one: { provider: ONE, ...figures(oneRow) },
    oneBareExpress: figures(onePeer),
    referenceConnectionFetch: figures(reference),
    listP99WithinBareRoute: within,
  });

  await new Promise<void>((resolve) => peerServer.close(() => resolve()));
  await server.close();
  await store.stop();
  for (let i = 0; i < specs.length; i += APPLY_CONCURRENCY)
    await Promise.all(specs.slice(i, i + APPLY_CONCURRENCY).map(([name]) => deleteProvider(kc, name)));
  await deleteProvider(kc, keysProvider);
  await ns.delete();
  await cp.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
