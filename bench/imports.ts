/**
 * Imports: connections created per second through POST /connections with 16 requests in flight
 * (autocannon in its own process, a unique connection ID per request), and the API writes each
 * import made, counted as watch events of an independent store (each write is one event). Peer row
 * from the same run: GET /providers on the same server (no API write), the cost of the HTTP path alone.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { loadConfig } from '../src/app/config.js';
import { createContext } from '../src/app/context.js';
import { createLogger } from '../src/app/log.js';
import { startHttpServer } from '../src/http/server.js';
import { KubeStore } from '../src/k8s/store.js';
import { installCrds } from '../dev/apply.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { REPO_ROOT, startControlPlane } from '../dev/control-plane.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { writeFigures } from './figures.js';
import { machine, writeSection } from './support.js';

const run = promisify(execFile);
const IN_FLIGHT = 16;
const SECONDS = Number(process.env.BENCH_IMPORTS_SECONDS ?? 20);
const MACHINE = machine();

interface Row {
  rps: number;
  p50: number;
  p99: number;
  count: number;
  errors: number;
}

async function autocannon(url: string, headers: Record<string, string>, post?: string): Promise<Row> {
  const args = ['--json', '-c', String(IN_FLIGHT), '-d', String(SECONDS)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  if (post) args.push('-m', 'POST', '-b', post, '-I');
  const { stdout } = await run(join(REPO_ROOT, 'node_modules/.bin/autocannon'), [...args, url], { maxBuffer: 16 * 2 ** 20 });
  const r = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    errors: number;
    non2xx: number;
  };
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, count: r.requests.total, errors: r.errors + r.non2xx };
}

async function main(): Promise<void> {
  const log = (l: string) => process.stderr.write(`[imports] ${l}\n`);
  const cp = await startControlPlane({ log: (l) => process.stderr.write(`[controlplane] ${l}\n`) });
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  await installCrds(kc, join(REPO_ROOT, 'crds'));
  const ns = await createTestNamespace(kc, 'bench-imports');
  const provider = `bench-imports-keys-${ns.name}`;
  await applyProvider(kc, provider, { displayName: 'Bench keys', authMode: 'API_KEY' });
  const env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'keys', { provider });

  const logger = createLogger('silent');
  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: ns.name,
    LATCHKEY_LEADER_ELECTION: 'false',
    POD_NAME: 'bench-imports',
    LATCHKEY_PUBLIC_BASE_URL: 'http://127.0.0.1',
  });
  const ctx = createContext({ config, logger, kc });
  await ctx.store.start();
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  const watcher = new KubeStore(kc, { namespaces: [ns.name], logger });
  await watcher.start();
  let writes = 0;
  for (const verb of ['add', 'update'] as const) {
    watcher.connections.on(verb, () => writes++);
    watcher.credentialSecrets.on(verb, () => writes++);
  }
  const headers = { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json' };
  try {
    await eventually(() => ctx.store.getIntegration(ns.name, 'keys') && ctx.store.getProvider(provider));
    const peer = await autocannon(`${server.url}/providers`, headers);
    log(`GET /providers x${IN_FLIGHT}: ${peer.rps.toFixed(0)}/s`);
    const body = JSON.stringify({
      provider_config_key: 'keys',
      connection_id: 'import-[<id>]',
      credentials: { type: 'API_KEY', apiKey: 'bench-key-0123456789' },
      metadata: { plan: 'pro' },
      end_user: { id: 'user-[<id>]' },
    });
    const imports = await autocannon(`${server.url}/connections`, headers, body);
    // Every 201 was answered after both writes: wait for their watch events, then count.
    await new Promise((r) => setTimeout(r, 3_000));
    const created = watcher.connections.list(ns.name).length;
    const perImport = writes / created;
    log(`POST /connections x${IN_FLIGHT}: ${imports.rps.toFixed(0)}/s, ${created} created, ${perImport.toFixed(2)} writes each`);
    writeFigures('imports', {
      perSecond: imports.rps,
      apiWritesPerImport: perImport,
      inFlight: IN_FLIGHT,
      created,
      peerGetProvidersPerSecond: peer.rps,
    });
    writeSection(
      'imports',
      `## Scale: imports

${MACHINE.join(' ')}

${IN_FLIGHT} requests in flight for ${SECONDS} s from autocannon (its own process); the API server, etcd and Latchkey
share the machine. Writes counted as watch events of an independent store. The controller is not running
(it writes each connection's status later, in the background, outside the import's round trip).

| row | requests/s | p50 ms | p99 ms | errors | API writes per request |
|---|---:|---:|---:|---:|---:|
| POST /connections (import, new connection) | ${imports.rps.toFixed(0)} | ${imports.p50} | ${imports.p99} | ${imports.errors} | ${perImport.toFixed(2)} |
| peer: GET /providers (same server, no write) | ${peer.rps.toFixed(0)} | ${peer.p50} | ${peer.p99} | ${peer.errors} | 0 |
`,
    );
  } finally {
    await watcher.stop();
    await server.close();
    await ctx.store.stop();
    await ns.delete();
    await cp.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);
