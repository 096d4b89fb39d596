/**
 * Imports: connections created per second through POST /connections with 16 requests in flight
 * (autocannon in its own process, a unique connection ID per request), and the Kubernetes API calls
 * each import made, counted on Latchkey's KubeConfig by kind (the request path's writes, and the
 * operation log's calls that follow in the background). Peer row from the same run: GET /providers
 * on the same server (no API write), the cost of the HTTP path alone.
 *
 * Where an import's time goes: the CPU time of Latchkey's process and of the control plane's
 * processes (kube-apiserver, etcd, kube-controller-manager) per import, and a CPU profile of
 * Latchkey's process during the imports (V8's sampler, bench/profile.ts; BENCH_PROFILE=0 to skip),
 * summarised by package and by function; the raw profile goes to bench/profiles/imports.cpuprofile.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { mkdirSync } from 'node:fs';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import { loadConfig } from '../src/platform/config.js';
import { createContext } from '../src/app/context.js';
import { createLogger } from '../src/platform/log.js';
import { observeJsonCalls } from '../src/k8s/json-api.js';
import { startHttpServer } from '../src/http/server.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { REPO_ROOT } from '../dev/control-plane.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { writeFigures } from './figures.js';
import { PROFILE_DIR, saveProfile, startProfile, summarize as summarizeProfile, type ProfileSummary } from './profile.js';
import { apiKeyProvider, handNotes, machine, processCpuMs, writeSection, startBenchControlPlane } from './support.js';

const run = promisify(execFile);
const IN_FLIGHT = 16;
const SECONDS = Number(process.env.BENCH_IMPORTS_SECONDS ?? 20);
const MACHINE = machine();
const PROFILE = process.env.BENCH_PROFILE !== '0';

/**
 * Counts the Kubernetes API calls of this process by method and resource (every client call
 * authenticates through its KubeConfig; watches do not go through here). In the process instead of
 * a second store watching the same objects, which would double the watch traffic being measured.
 */
class CountingKubeConfig extends KubeConfig {
  readonly calls = new Map<string, number>();
  constructor() {
    super();
    // Some calls go as plain JSON (src/k8s/json-api.ts), not through the typed clients.
    observeJsonCalls(this, (method, path) => this.record(method, path));
  }
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    this.record(context.getHttpMethod(), new URL(context.getUrl()).pathname);
    return super.applySecurityAuthentication(context);
  }
  private record(method: string, pathname: string): void {
    const resource = /\/(connections|secrets|configmaps|leases|events)(\/|\?|$)/.exec(pathname)?.[1] ?? 'other';
    const key = `${method} ${resource}`;
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
  }
  count(method: string, resource: string): number {
    return this.calls.get(`${method} ${resource}`) ?? 0;
  }
}

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
  const { cp, kc } = await startBenchControlPlane(new CountingKubeConfig());
  const ns = await createTestNamespace(kc, 'bench-imports');
  const provider = `bench-imports-keys-${ns.name}`;
  await applyProvider(kc, provider, apiKeyProvider('Bench keys'));
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
  await ctx.caches.start();
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  const headers = { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json' };
  try {
    await eventually(() => ctx.catalog.getIntegration(ns.name, 'keys') && ctx.catalog.getProvider(provider));
    const peer = await autocannon(`${server.url}/providers`, headers);
    log(`GET /providers x${IN_FLIGHT}: ${peer.rps.toFixed(0)}/s`);
    const body = JSON.stringify({
      provider_config_key: 'keys',
      connection_id: 'import-[<id>]',
      credentials: { type: 'API_KEY', apiKey: 'bench-key-0123456789' },
      metadata: { plan: 'pro' },
      end_user: { id: 'user-[<id>]' },
    });
    const calls0 = new Map(kc.calls);
    const since = (method: string, resource: string) => kc.count(method, resource) - (calls0.get(`${method} ${resource}`) ?? 0);
    const cpu0 = process.cpuUsage();
    const cp0 = processCpuMs(cp.workDir);
    const stopProfile = PROFILE ? await startProfile() : undefined;
    const imports = await autocannon(`${server.url}/connections`, headers, body);
    const profile = await stopProfile?.();
    const cpu = process.cpuUsage(cpu0);
    const controlPlaneMs = processCpuMs(cp.workDir) - cp0;
    // The operation log writes its entries in the background: let it finish before counting its calls.
    await ctx.oplog?.flush();
    const created = since('POST', 'connections');
    const requestPathWrites = since('POST', 'connections') + since('POST', 'secrets');
    const perImport = requestPathWrites / created;
    const oplogCalls = (since('GET', 'configmaps') + since('POST', 'configmaps') + since('PUT', 'configmaps')) / created;
    const otherCalls = [...kc.calls.keys()]
      .filter((k) => !/^(POST (connections|secrets)|(GET|POST|PUT) configmaps)$/.test(k))
      .reduce((n, k) => n + since(...(k.split(' ') as [string, string])), 0);
    const latchkeyCpuMs = (cpu.user + cpu.system) / 1000 / created;
    const controlPlaneCpuMs = controlPlaneMs / created;
    let summary: ProfileSummary | undefined;
    if (profile) {
      mkdirSync(PROFILE_DIR, { recursive: true });
      saveProfile(profile, join(PROFILE_DIR, 'imports.cpuprofile'));
      summary = summarizeProfile(profile, 12);
    }
    log(
      `POST /connections x${IN_FLIGHT}: ${imports.rps.toFixed(0)}/s, ${created} created, ${perImport.toFixed(2)} writes each, ` +
        `${oplogCalls.toFixed(2)} oplog calls each; CPU ms per import: Latchkey ${latchkeyCpuMs.toFixed(2)}, control plane ${controlPlaneCpuMs.toFixed(2)}`,
    );
    writeFigures('imports', {
      perSecond: imports.rps,
      apiWritesPerImport: perImport,
      oplogApiCallsPerImport: oplogCalls,
      otherApiCalls: otherCalls,
      inFlight: IN_FLIGHT,
      created,
      latchkeyCpuMsPerImport: latchkeyCpuMs,
      controlPlaneCpuMsPerImport: controlPlaneCpuMs,
      peerGetProvidersPerSecond: peer.rps,
    });
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    const profileTable = summary
      ? `
CPU profile of Latchkey's process during the imports (V8's sampler; raw profile in \`bench/profiles/imports.cpuprofile\`):
busy ${summary.busyMs.toFixed(0)} ms over ${SECONDS} s (${pct(1 - summary.idleShare)} of one core), of which garbage collection ${pct(summary.gcShare)}.

| self time by package | share of busy |
|---|---:|
${summary.byPackage.map((e) => `| ${e.what.replace(/\|/g, '\\|')} | ${pct(e.share)} |`).join('\n')}

| self time by function (top ${summary.top.length}) | share of busy |
|---|---:|
${summary.top.map((e) => `| \`${e.what.replace(/\|/g, '\\|').replace(/`/g, '')}\` | ${pct(e.share)} |`).join('\n')}
`
      : '';
    writeSection(
      'imports',
      `## Scale: imports

${MACHINE.join(' ')}

${IN_FLIGHT} requests in flight for ${SECONDS} s from autocannon (its own process); the API server, etcd and Latchkey
share the machine. API calls counted on Latchkey's KubeConfig, by method and resource: the request path's
writes (the Connection and its Secret), and the operation log's calls (its ConfigMap per connection, written in
batches in the background after the answer). The controller is not running (it writes each connection's status
later, in the background, outside the import's round trip).

| row | requests/s | p50 ms | p99 ms | errors | API writes per request | oplog API calls per request |
|---|---:|---:|---:|---:|---:|---:|
| POST /connections (import, new connection) | ${imports.rps.toFixed(0)} | ${imports.p50} | ${imports.p99} | ${imports.errors} | ${perImport.toFixed(2)} | ${oplogCalls.toFixed(2)} |
| peer: GET /providers (same server, no write) | ${peer.rps.toFixed(0)} | ${peer.p50} | ${peer.p99} | ${peer.errors} | 0 | 0 |

CPU time per import: Latchkey's process (server; load generator excluded) ${latchkeyCpuMs.toFixed(2)} ms, the control
plane's processes (kube-apiserver, etcd, kube-controller-manager) ${controlPlaneCpuMs.toFixed(2)} ms. Other API calls
during the imports: ${otherCalls}.
${profileTable}
${handNotes('imports')}`,
    );
  } finally {
    await server.close();
    await ctx.caches.stop();
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
