/**
 * Hot paths of the server, each against its peer in the same run, with the load generator in its
 * own process (autocannon's CLI, bench/load.ts) and every peer in its own process
 * (bench/peer-servers.ts):
 *
 * 1. fetch: `GET /connections/:id` of an API-key connection (nothing to refresh) vs a bare express 5
 *    route answering the same JSON behind a bearer check; and p99 at a fixed 1,000 requests/s;
 * 2. proxy: `GET /proxy/records` vs a minimal `node:http` forwarder with a keep-alive agent to the same
 *    upstream; and the p50 each adds over calling the upstream directly, one request in flight;
 * 3. refresh on fetch: an expired OAuth 2 token refreshed by the fetch vs the token endpoint alone,
 *    with the Kubernetes API calls made while the request was in flight (counted on the KubeConfig).
 *
 * Latchkey runs as production wires it (createContext: egress guard on, loopback peers allowed by
 * LATCHKEY_EGRESS_ALLOW; the refresh's Lease and fencing; logging at info to /dev/null; `npm run
 * bench:hot-paths` passes the chart's `--max-semi-space-size`) against a real
 * control plane. With BENCH_PROFILE=1 (default), the fetch and proxy loads are run once more under V8's
 * CPU profiler and the top self-time entries are reported; raw profiles go to bench/profiles/.
 *
 *   npm run bench:hot-paths                          # rewrites the hot-paths section of docs/benchmarks.md
 *   BENCH_HOT_PATHS_BASELINE=1 npm run bench:hot-paths   # also keeps these figures as the "before" row
 *   BENCH_SECONDS=5 BENCH_ONLY=proxy npm run bench:hot-paths
 *   BENCH_ONLY=fetch,proxy npm run bench:hot-paths     # phases named: figures printed, docs untouched
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, openSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import type { RequestContext } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startHttpServer } from '../src/http/server.js';
import { loadConfig } from '../src/platform/config.js';
import { createContext } from '../src/app/context.js';
import { createLogger } from '../src/platform/log.js';
import { observeJsonCalls } from '../src/k8s/json-api.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { LOOPBACK_PEERS } from '../dev/egress.js';
import { CHART_HEAP_LIMIT_MIB, CHART_SEMI_SPACE_MIB, metricSum, startReplica } from './replica-process.js';
import { REPO_ROOT } from '../dev/control-plane.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import { startOidcServer } from '../dev/peers/oidc-server.js';
import { writeFigures } from './figures.js';
import { cannon, paced, probe, type CannonResult, type ProbeResult, type Target } from './load.js';
import { PROFILE_DIR, saveProfile, startProfile, summarize, type ProfileSummary } from './profile.js';
import { expectStatus, handNotes, httpClient, machine, median, ms, writeSection, startBenchControlPlane } from './support.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SECONDS = num('BENCH_SECONDS', 10);
/** This process's --max-semi-space-size (the chart's when run by npm run bench:hot-paths), or V8's default. */
const youngGenerationMiB = () => /--max-semi-space-size=(\d+)/.exec(process.execArgv.join(' '))?.[1] ?? "V8's default";
const CONNECTIONS = num('BENCH_CONNECTIONS', 16);
const ROUNDS = num('BENCH_ROUNDS', 3);
const FETCH_RATE = num('BENCH_FETCH_RATE', 1000);
const PROBE_COUNT = num('BENCH_PROBE_COUNT', 3000);
const REFRESHES = num('BENCH_REFRESHES', 40);
const PROFILE = process.env.BENCH_PROFILE !== '0';
const ONLY = process.env.BENCH_ONLY;
/** BENCH_ONLY names one phase, or several separated by commas (fetch,proxy). */
const runs = (phase: string) => !ONLY || ONLY.split(',').includes(phase);
const BASELINE_FILE = join(REPO_ROOT, 'bench/hot-paths-before.json');
const HERE = dirname(fileURLToPath(import.meta.url));

/** Counts the API calls this process makes (every client call authenticates through its KubeConfig). */
class CountingKubeConfig extends KubeConfig {
  calls = 0;
  /** When each call started (hrtime ns) and what it was, e.g. `POST /apis/coordination.k8s.io/.../leases`. */
  readonly started: Array<{ at: bigint; what: string }> = [];
  constructor() {
    super();
    // The calls of a refresh go as plain JSON (src/k8s/json-api.ts), not through the typed clients.
    observeJsonCalls(this, (method, path) => this.count(method, path));
  }
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    this.count(context.getHttpMethod(), new URL(context.getUrl()).pathname);
    return super.applySecurityAuthentication(context);
  }
  private count(method: string, pathname: string): void {
    this.calls++;
    this.started.push({ at: process.hrtime.bigint(), what: `${method} ${pathname.split('?')[0]}` });
  }
}

/**
 * When the server wrote each answer (hrtime ns of `res.end`), by request URL: API calls started
 * before it are on the request's path; those started after (the refresh's status write and Lease
 * release) are not, whatever the client sees first. Subscribed for the refresh phase only: the
 * wrapper costs every request, which the fetch and proxy loads (and their peers) must not pay.
 */
function answersWritten(): { at: Map<string, bigint>; stop(): void } {
  const at = new Map<string, bigint>();
  const onRequest = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
    response.end = ((...args: unknown[]) => {
      at.set(request.url ?? '', process.hrtime.bigint());
      return end(...args);
    }) as ServerResponse['end'];
  };
  subscribe('http.server.request.start', onRequest);
  return { at, stop: () => unsubscribe('http.server.request.start', onRequest) };
}

interface Figures {
  fetch?: {
    requestsPerSecond: number;
    peerRequestsPerSecond: number;
    ratio: number;
    roundRatios?: number[];
    cpuMicrosPerRequest?: number;
    peerCpuMicrosPerRequest?: number;
    /** p99 at `rate` requests/s spread over each second (bench/paced-load.ts): the goal's figure. */
    p99Ms: number;
    peerP99Ms?: number;
    p999Ms?: number;
    peerP999Ms?: number;
    /** p99 under autocannon's `-R rate`: each connection's share of a second sent back to back. */
    burstP99Ms?: number;
    peerBurstP99Ms?: number;
    rate: number;
  };
  proxy?: {
    requestsPerSecond: number;
    peerRequestsPerSecond: number;
    ratio: number;
    roundRatios?: number[];
    cpuMicrosPerRequest?: number;
    peerCpuMicrosPerRequest?: number;
    p50OverheadMsAtOne: number;
    peerP50OverheadMsAtOne: number;
    directP50MsAtOne: number;
  };
  refreshOnFetch?: {
    p50Ms: number;
    tokenEndpointP50Ms: number;
    /** API calls started before the answer was written (median). */
    apiRoundTrips: number;
    /** API calls the refresh made after writing the answer (median). */
    apiCallsAfterAnswer?: number;
    p99Ms: number;
    loadAverage?: number[];
    /** How long the profiled refreshes took, in all (s). */
    phaseSeconds?: number;
  };
  profiles?: { fetch?: ProfileSummary; proxy?: ProfileSummary; refresh?: ProfileSummary };
  /** The 1-minute load average at the start and after the fetch and proxy phases, and the cores: how shared the machine was. */
  machineLoad?: { cores: number; atStart: number; afterFetch?: number; afterProxy?: number };
  /** Said when the machine was busier than its cores (BENCH_NOTES adds to it). */
  notes?: string;
}

async function peer(kind: string, env: Record<string, string> = {}): Promise<{ port: number; child: ChildProcess }> {
  // BENCH_PEER_NODE_OPTIONS adds flags (as BENCH_REPLICA_NODE_OPTIONS does for the measured server), e.g. `--perf-basic-prof`.
  const flags = process.env.BENCH_PEER_NODE_OPTIONS?.split(/\s+/).filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...flags, join(HERE, 'peer-servers.js'), kind], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`peer ${kind} exited ${code}`)));
    child.stdout!.once('data', (c: Buffer) => resolve((JSON.parse(c.toString('utf8')) as { port: number }).port));
  });
  return { port, child };
}

const log = (line: string) => process.stderr.write(`[hot-paths] ${line}\n`);

/** utime + stime of a process, in microseconds (/proc/PID/stat, clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** One measured run; an error or a non-2xx answer fails the benchmark. */
async function measured(target: Target): Promise<CannonResult> {
  const r = await cannon(target, { connections: CONNECTIONS, seconds: SECONDS });
  if (r.errors || r.non2xx) throw new Error(`${target.url}: ${r.errors} errors, ${r.non2xx} non-2xx answers`);
  return r;
}

interface Versus {
  requestsPerSecond: number;
  peerRequestsPerSecond: number;
  /** Median of the rounds' ratios. */
  ratio: number;
  roundRatios: number[];
  /** CPU time per request of each server process over all rounds (µs, /proc): what a shared machine disturbs least. */
  cpuMicrosPerRequest?: number;
  peerCpuMicrosPerRequest?: number;
}

/** The server's collection counts so far, from prom-client's default metrics on its /metrics page. */
function gcCounts(page: string): { major: number; minor: number } {
  const count = (kind: string) => metricSum(page, 'latchkey_process_nodejs_gc_duration_seconds_count', `kind="${kind}"`);
  return { major: count('major'), minor: count('minor') };
}

/**
 * Latchkey against its peer: a short unmeasured run of each first (sockets, JIT, caches), then
 * BENCH_ROUNDS rounds of one run each, the order alternating. The machine is shared: a burst of
 * someone else's load then falls on both sides of a round's ratio, not on one side of the figure.
 */
async function versus(latchkey: Target, peer: Target, peerPid?: number, latchkeyPid?: number): Promise<Versus> {
  await cannon(latchkey, { connections: CONNECTIONS, seconds: Math.min(3, SECONDS) });
  await cannon(peer, { connections: CONNECTIONS, seconds: Math.min(3, SECONDS) });
  const ours: number[] = [];
  const theirs: number[] = [];
  // CPU time per request of the server process (Latchkey: its own, or this one; the peer: its own), which a
  // shared machine disturbs less than throughput.
  const cpu = { ours: [0, 0], theirs: [0, 0] };
  const oursMicros = () => {
    if (latchkeyPid) return cpuMicros(latchkeyPid);
    const used = process.cpuUsage();
    return used.user + used.system;
  };
  const runOurs = async () => {
    const before = oursMicros();
    const r = await measured(latchkey);
    cpu.ours[0]! += oursMicros() - before;
    cpu.ours[1]! += r.requests;
    ours.push(r.requestsPerSecond);
  };
  const runTheirs = async () => {
    const before = peerPid ? cpuMicros(peerPid) : 0;
    const r = await measured(peer);
    cpu.theirs[0]! += peerPid ? cpuMicros(peerPid) - before : 0;
    cpu.theirs[1]! += r.requests;
    theirs.push(r.requestsPerSecond);
  };
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      await runOurs();
      await runTheirs();
    } else {
      await runTheirs();
      await runOurs();
    }
  }
  if (peerPid)
    log(`CPU per request: ours ${(cpu.ours[0]! / cpu.ours[1]!).toFixed(1)} µs, peer ${(cpu.theirs[0]! / cpu.theirs[1]!).toFixed(1)} µs`);
  const roundRatios = ours.map((o, i) => round(o / theirs[i]!));
  return {
    requestsPerSecond: Math.round(median(ours)),
    peerRequestsPerSecond: Math.round(median(theirs)),
    ratio: round(median(ours.map((o, i) => o / theirs[i]!))),
    roundRatios,
    ...(peerPid
      ? { cpuMicrosPerRequest: round(cpu.ours[0]! / cpu.ours[1]!, 1), peerCpuMicrosPerRequest: round(cpu.theirs[0]! / cpu.theirs[1]!, 1) }
      : {}),
  };
}

async function profiled(name: string, target: Target): Promise<ProfileSummary> {
  const stop = await startProfile();
  await cannon(target, { connections: CONNECTIONS, seconds: SECONDS });
  const profile = await stop();
  mkdirSync(PROFILE_DIR, { recursive: true });
  saveProfile(profile, join(PROFILE_DIR, `${name}-${Date.now()}.cpuprofile`));
  return summarize(profile);
}

async function main(): Promise<void> {
  const { cp, kc } = await startBenchControlPlane(new CountingKubeConfig());
  const ns = await createTestNamespace(kc, 'bench-hot');
  const suffix = randomBytes(3).toString('hex');
  const children: ChildProcess[] = [];
  const up = await peer('upstream');
  children.push(up.child);
  const client = { clientId: 'latchkey-bench', clientSecret: `bench-${randomBytes(16).toString('hex')}` };
  const oidc = await startOidcServer({ clients: [client], accessTokenTtl: 3600 });
  const keyProvider = `bench-key-${suffix}`;
  const oauthProvider = `bench-oauth-${suffix}`;
  await applyProvider(kc, keyProvider, {
    displayName: 'Bench API key',
    authMode: 'API_KEY',
    proxy: { baseUrl: `http://127.0.0.1:${up.port}/api`, headers: { 'x-api-key': '${apiKey}' } },
  });
  await applyProvider(kc, oauthProvider, {
    displayName: 'Bench OAuth',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    tokenRequestAuthMethod: 'body',
  });
  const env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'bench-key', { provider: keyProvider });
  await createIntegration(kc, ns.name, 'bench-oauth', { provider: oauthProvider }, client);

  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'info',
    LATCHKEY_WATCH_NAMESPACES: ns.name,
    LATCHKEY_LEADER_ELECTION: 'false',
    POD_NAME: 'bench-hot-paths',
    LATCHKEY_PUBLIC_BASE_URL: 'http://127.0.0.1',
    LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS,
  });
  // Production logs at info to stdout; here to /dev/null, so the cost of logging is still paid.
  const logger = createLogger('info', {}, pino.destination({ dest: openSync('/dev/null', 'w'), sync: false }));
  const ctx = createContext({ config, logger, kc });
  const store = ctx;
  await store.caches.start();
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  const auth = { authorization: `Bearer ${env.secretKey}` };
  const figures: Figures = { profiles: {}, machineLoad: { cores: availableParallelism(), atStart: round(loadavg()[0]!) } };
  const stops: Array<() => Promise<void>> = [];

  try {
    await eventually(
      () =>
        store.catalog.getIntegration(ns.name, 'bench-key') &&
        store.catalog.getIntegration(ns.name, 'bench-oauth') &&
        store.catalog.getProvider(keyProvider) &&
        store.catalog.getProvider(oauthProvider) &&
        store.catalog.getReferencedSecret(ns.name, 'bench-oauth-client') &&
        store.catalog.getReferencedSecret(ns.name, `${env.name}-keys`),
      60_000,
    );
    const http = httpClient(server.port, 4);
    await eventually(async () => (await http.call('GET', '/providers', auth)).status === 200, 60_000);
    // The fetch and proxy loads go to a server in its own process, started as `latchkey server` starts
    // (the chart's heap flags), as each peer runs in its own: the benchmark's process also runs the
    // control plane's client, the OAuth server and the refresh phase's counters, which cost every
    // request of a server sharing it (an in-process copy of the forwarder peer measured 1.3x the
    // forwarder's own CPU per request there). The refresh phase, which counts API calls on this
    // process's client, and the CPU profiles use the in-process server (the same code).
    const own =
      runs('fetch') || runs('proxy')
        ? await startReplica({
            kind: 'server',
            identity: 'bench-hot-paths-server',
            kubeconfigPath: cp.kubeconfigPath,
            namespace: ns.name,
            waitSeconds: 120,
            ...(process.env.BENCH_SEMI_SPACE_MIB ? { semiSpaceMiB: Number(process.env.BENCH_SEMI_SPACE_MIB) } : {}),
            env: { LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS, LATCHKEY_LOG_LEVEL: 'info' },
          })
        : undefined;
    if (own) stops.push(() => own.stop());
    const served = own ? `http://127.0.0.1:${own.port}` : server.url;
    /** Until the measured server's informers have what the in-process server just wrote. */
    const servedAnswers = (path: string, headers: Record<string, string>) =>
      eventually(async () => (await fetch(`${served}${path}`, { headers })).status === 200, 60_000);

    // ---- 1. fetch ----
    if (runs('fetch')) {
      const imported = await http.call(
        'POST',
        '/connections',
        auth,
        JSON.stringify({
          provider_config_key: 'bench-key',
          connection_id: 'fetch-1',
          credentials: { type: 'API_KEY', apiKey: randomBytes(24).toString('base64url') },
          metadata: { plan: 'pro', region: 'eu' },
          end_user: { id: 'user-1', email: 'user-1@example.test', display_name: 'User One', tags: { organizationId: 'org-1' } },
        }),
      );
      expectStatus(imported, 201, 'import');
      const path = '/connections/fetch-1?provider_config_key=bench-key';
      const answer = await http.call('GET', path, auth);
      expectStatus(answer, 200, 'fetch');
      log(`fetch answer: ${Buffer.byteLength(answer.body)} bytes`);
      const express = await peer('express', { PEER_BODY: answer.body, PEER_KEY: env.secretKey });
      children.push(express.child);
      await servedAnswers(path, auth);
      const ours: Target = { url: `${served}${path}`, headers: auth };
      const bare: Target = { url: `http://127.0.0.1:${express.port}${path}`, headers: auth };
      const vs = await versus(ours, bare, express.child.pid, own?.child.pid);
      const pacing = { rate: FETCH_RATE, seconds: SECONDS, connections: CONNECTIONS, warmupSeconds: 2 };
      const atRate = await paced(ours, pacing);
      const peerAtRate = await paced(bare, pacing);
      for (const [who, r] of Object.entries({ latchkey: atRate, peer: peerAtRate }))
        if (r.errors || r.count < FETCH_RATE * SECONDS * 0.99)
          throw new Error(`paced fetch (${who}): ${r.errors} errors, ${r.count} answers`);
      const burst = await cannon(ours, { connections: CONNECTIONS, seconds: SECONDS, rate: FETCH_RATE });
      const peerBurst = await cannon(bare, { connections: CONNECTIONS, seconds: SECONDS, rate: FETCH_RATE });
      log(
        `fetch: ${vs.requestsPerSecond}/s vs bare express ${vs.peerRequestsPerSecond}/s (ratios ${vs.roundRatios.join(', ')}); p99 at ${FETCH_RATE}/s paced ${atRate.p99Ms} ms (bare express ${peerAtRate.p99Ms} ms), autocannon -R ${burst.p99Ms} ms (bare express ${peerBurst.p99Ms} ms)`,
      );
      figures.fetch = {
        ...vs,
        p99Ms: atRate.p99Ms,
        peerP99Ms: peerAtRate.p99Ms,
        p999Ms: atRate.p999Ms,
        peerP999Ms: peerAtRate.p999Ms,
        burstP99Ms: burst.p99Ms,
        peerBurstP99Ms: peerBurst.p99Ms,
        rate: FETCH_RATE,
      };
      figures.machineLoad!.afterFetch = round(loadavg()[0]!);
      if (PROFILE) figures.profiles!.fetch = await profiled('fetch', { url: `${server.url}${path}`, headers: auth });
    }

    // ---- 2. proxy ----
    if (runs('proxy')) {
      const created = await http.call(
        'POST',
        '/connections',
        auth,
        JSON.stringify({
          provider_config_key: 'bench-key',
          connection_id: 'proxy-1',
          credentials: { type: 'API_KEY', apiKey: 'bench-key' },
        }),
      );
      expectStatus(created, 201, 'import');
      const fwd = await peer('forwarder', { PEER_UPSTREAM: String(up.port) });
      children.push(fwd.child);
      const proxyHeaders = { ...auth, 'connection-id': 'proxy-1', 'provider-config-key': 'bench-key' };
      await servedAnswers('/proxy/records?limit=20', proxyHeaders);
      const viaLatchkey: Target = { url: `${served}/proxy/records?limit=20`, headers: proxyHeaders };
      const viaPeer: Target = { url: `http://127.0.0.1:${fwd.port}/proxy/records?limit=20`, headers: proxyHeaders };
      const direct: Target = { url: `http://127.0.0.1:${up.port}/api/records?limit=20`, headers: { 'x-api-key': 'bench-key' } };
      const hold = num('BENCH_HOLD_SECONDS', 0);
      if (hold > 0) {
        // For experiments by hand (strace, perf) on both servers under the same load: the targets, then a pause.
        log(`holding ${hold} s: ${JSON.stringify({ ours: viaLatchkey, oursPid: own?.child.pid, peer: viaPeer, peerPid: fwd.child.pid })}`);
        await new Promise((r) => setTimeout(r, hold * 1000));
      }
      const gcBefore = own ? gcCounts(await own.metrics()) : undefined;
      const vs = await versus(viaLatchkey, viaPeer, fwd.child.pid, own?.child.pid);
      if (own && gcBefore) {
        const gcAfter = gcCounts(await own.metrics());
        log(`server's GCs during the proxy loads: ${gcAfter.major - gcBefore.major} major, ${gcAfter.minor - gcBefore.minor} minor`);
      }
      const one: Record<'direct' | 'forwarder' | 'latchkey', ProbeResult> = {
        direct: await probe(direct, PROBE_COUNT),
        forwarder: await probe(viaPeer, PROBE_COUNT),
        latchkey: await probe(viaLatchkey, PROBE_COUNT),
      };
      for (const [k, v] of Object.entries(one)) if (v.errors) throw new Error(`probe ${k}: ${v.errors} errors`);
      log(
        `proxy: ${vs.requestsPerSecond}/s vs forwarder ${vs.peerRequestsPerSecond}/s (ratios ${vs.roundRatios.join(', ')}); at one: direct ${ms(one.direct.p50Ms)}, forwarder ${ms(one.forwarder.p50Ms)}, latchkey ${ms(one.latchkey.p50Ms)}`,
      );
      figures.proxy = {
        ...vs,
        p50OverheadMsAtOne: round(one.latchkey.p50Ms - one.direct.p50Ms, 3),
        peerP50OverheadMsAtOne: round(one.forwarder.p50Ms - one.direct.p50Ms, 3),
        directP50MsAtOne: round(one.direct.p50Ms, 3),
      };
      figures.machineLoad!.afterProxy = round(loadavg()[0]!);
      if (PROFILE) figures.profiles!.proxy = await profiled('proxy', { ...viaLatchkey, url: `${server.url}/proxy/records?limit=20` });
    }

    // ---- 3. refresh on fetch ----
    if (!ONLY || ONLY === 'refresh') {
      // The token endpoint alone: the same refresh_token grant, one at a time (the minting before it not timed).
      const tokenMs: number[] = [];
      for (let i = 0; i < REFRESHES; i++) {
        const { refreshToken } = await oidc.mintTokens({ clientId: client.clientId });
        const t0 = process.hrtime.bigint();
        const res = await fetch(oidc.tokenUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: refreshToken,
            ...{ client_id: client.clientId, client_secret: client.clientSecret },
          }),
        });
        await res.text();
        if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}`);
        tokenMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      const old = new Map<string, string>();
      /** Connections with an expired access token, imported through the API (the imports' watch events settled). */
      const importExpired = async (prefix: string) => {
        const ids = Array.from({ length: REFRESHES }, (_, i) => `${prefix}-${i}`);
        for (const id of ids) {
          const t = await oidc.mintTokens({ clientId: client.clientId });
          old.set(id, t.accessToken);
          const res = await http.call(
            'POST',
            '/connections',
            auth,
            JSON.stringify({
              provider_config_key: 'bench-oauth',
              connection_id: id,
              credentials: {
                type: 'OAUTH2',
                access_token: t.accessToken,
                refresh_token: t.refreshToken,
                expires_at: new Date(Date.now() - 60_000).toISOString(),
              },
            }),
          );
          expectStatus(res, 201, `import ${id}`);
          await eventually(() => store.connections.getConnection(ns.name, 'bench-oauth', id));
        }
        // Let the imports' own watch events settle, so the calls counted are the fetch's.
        await new Promise((r) => setTimeout(r, 1000));
        return ids;
      };
      const refreshMs: number[] = [];
      const apiCalls: number[] = [];
      const afterAnswer: number[] = [];
      const paths = new Map<string, number>();
      /** Per step of a refreshing fetch (an API call started, the token call, the answer), its offsets from the request's start, ms. */
      const timeline = new Map<string, number[]>();
      // The refreshing fetches come from a client in its own process (the server's work after its
      // answer must not delay the client's reading of it, as it would on a shared event loop).
      const caller = fork(join(HERE, 'timed-client.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      children.push(caller);
      const timed = (url: string, headers: Record<string, string>) =>
        new Promise<{ status: number; body: string; ms: number }>((resolve) => {
          caller.once('message', (m) => resolve(m as { status: number; body: string; ms: number }));
          caller.send({ url, headers });
        });
      /** Refreshes each by its first fetch, one after the other; records the figures when `record`. */
      const refreshEach = async (ids: string[], record: boolean) => {
        for (const id of ids) {
          const path = `/connections/${id}?provider_config_key=bench-oauth`;
          const from = kc.started.length;
          const t0 = process.hrtime.bigint();
          const res = await timed(`${server.url}${path}`, auth);
          const tookMs = res.ms;
          expectStatus(res, 200, `refreshing fetch ${id}`);
          if ((JSON.parse(res.body) as { credentials: { access_token: string } }).credentials.access_token === old.get(id))
            throw new Error(`${id}: the expired token came back`);
          // What the refresh does after the answer (status write, Lease release) follows within moments;
          // its operation log entry is written in a batch (250 ms later): written now, so that it does
          // not land in the next request's count.
          const answered = written.at.get(path)!;
          const after = () => kc.started.slice(from).filter((c) => c.at >= answered);
          await eventually(() => after().length >= 2, 10_000, 5);
          await ctx.oplog?.flush();
          if (!record) continue;
          refreshMs.push(tookMs);
          const onPath = kc.started.slice(from).filter((c) => c.at >= t0 && c.at < answered);
          apiCalls.push(onPath.length);
          // Where the request's time went: when each call on its path started, from the request's start.
          const token = oidc.tokenCalls.at(-1)!;
          const at = (ns: bigint | undefined) => (ns === undefined ? NaN : Number(ns - t0) / 1e6);
          const steps = [
            ...onPath.map((c) => [c.what.replace(/^(\w+) .*\/(leases|secrets|connections)(\/.*)?$/, '$1 $2'), at(c.at)] as const),
            ['token arrived', at(token.arrivedNs)] as const,
            ['token answered', at(token.answeredNs)] as const,
            ['answer written', at(answered)] as const,
          ].sort((a, b) => a[1] - b[1]);
          for (const [step, offset] of steps) (timeline.get(step) ?? timeline.set(step, []).get(step)!).push(offset);
          afterAnswer.push(after().length);
          for (const [label, calls] of [
            ['before the answer', onPath],
            ['after', after()],
          ] as const) {
            const shape = `${label}: ${calls.map((c) => c.what.replace(/^(\w+) .*\/(leases|secrets|connections|configmaps)(\/.*)?$/, '$1 $2$3').replace(/\/[^/]*(\/status)?$/, '$1')).join(' → ')}`;
            paths.set(shape, (paths.get(shape) ?? 0) + 1);
          }
        }
      };
      const written = answersWritten();
      const ids = await importExpired('expired');
      const before = oidc.refreshCalls();
      const phaseStart = Date.now();
      await refreshEach(ids, true);
      const phaseSeconds = round((Date.now() - phaseStart) / 1000, 1);
      const load = loadavg();
      // The profile comes from a second batch: the sampler's own cost stays out of the timed one.
      if (PROFILE) {
        const profiledIds = await importExpired('profiled');
        const stopProfile = await startProfile();
        await refreshEach(profiledIds, false);
        const profile = await stopProfile();
        mkdirSync(PROFILE_DIR, { recursive: true });
        saveProfile(profile, join(PROFILE_DIR, `refresh-${Date.now()}.cpuprofile`));
        figures.profiles!.refresh = summarize(profile);
        ids.push(...profiledIds);
      }
      written.stop();
      if (oidc.refreshCalls() - before !== ids.length)
        throw new Error(`${oidc.refreshCalls() - before} token calls for ${ids.length} refreshes`);
      const sorted = [...refreshMs].sort((a, b) => a - b);
      figures.refreshOnFetch = {
        p50Ms: round(median(refreshMs)),
        tokenEndpointP50Ms: round(median(tokenMs)),
        apiRoundTrips: median(apiCalls),
        apiCallsAfterAnswer: median(afterAnswer),
        p99Ms: round(sorted[Math.ceil(sorted.length * 0.99) - 1]!),
        loadAverage: load.map((l) => round(l)),
        phaseSeconds,
      };
      log(
        `refresh on fetch: p50 ${ms(median(refreshMs))} (token endpoint ${ms(median(tokenMs))}), API calls before the answer ${apiCalls.join(',')}, after ${afterAnswer.join(',')}; load ${load
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
      for (const [shape, n] of paths) log(`  ${n}× ${shape}`);
      log(
        `  timeline (median ms from the request's start): ${[...timeline]
          .map(([step, offsets]) => [step, median(offsets)] as const)
          .sort((a, b) => a[1] - b[1])
          .map(([step, offset]) => `${step} +${offset.toFixed(2)}`)
          .join(', ')}`,
      );
    }
    http.close();
  } finally {
    for (const stop of stops) await stop();
    await server.close();
    await ctx.oplog?.stop();
    await store.caches.stop();
    for (const c of children) c.kill('SIGTERM');
    await oidc.close();
    await deleteProvider(kc, keyProvider);
    await deleteProvider(kc, oauthProvider);
    await ns.delete();
    await cp.stop();
  }

  if (process.env.BENCH_HOT_PATHS_BASELINE === '1') writeFileSync(BASELINE_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  const baseline = existsSync(BASELINE_FILE) ? (JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as Figures) : undefined;
  const load = figures.machineLoad!;
  const busiest = Math.max(load.atStart, load.afterFetch ?? 0, load.afterProxy ?? 0);
  const notes = [
    ...(busiest > load.cores
      ? [
          `Measured on a shared machine: 1-minute load average up to ${busiest} on ${load.cores} cores. Requests/s are distorted (other processes took CPU from both sides); the ratios come from rounds alternating with the peer in the same run, and CPU per request (read from /proc) is disturbed least.`,
        ]
      : []),
    ...(process.env.BENCH_NOTES ? [process.env.BENCH_NOTES] : []),
  ];
  if (notes.length) figures.notes = notes.join(' ');
  if (!ONLY) {
    const { profiles, ...rest } = figures;
    void profiles;
    writeFigures('hotPaths', { ...rest });
    writeSection('hot-paths', report(figures, baseline));
  } else {
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  }
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function profileTable(p: ProfileSummary | undefined, seconds = SECONDS): string {
  if (!p) return '(not profiled)';
  const rows = p.top.map((e) => `| ${e.what.replace(/\|/g, '\\|')} | ${e.selfMs.toFixed(0)} ms | ${(e.share * 100).toFixed(1)} % |`);
  const pkgs = p.byPackage.map((e) => `${e.what} ${(e.share * 100).toFixed(0)} %`).join(', ');
  return `Busy ${p.busyMs.toFixed(0)} ms of CPU in ${seconds} s (idle ${(p.idleShare * 100).toFixed(0)} % of samples, GC ${(p.gcShare * 100).toFixed(1)} % of busy). By package: ${pkgs}.

| function (where) | self time | share of busy |
|---|---:|---:|
${rows.join('\n')}`;
}

function report(now: Figures, before: Figures | undefined): string {
  const b = before ?? {};
  const cell = (v: number | undefined, unit = '') => (v === undefined || !Number.isFinite(v) ? '—' : `${v}${unit}`);
  const f = now.fetch;
  const p = now.proxy;
  const r = now.refreshOnFetch;
  return `## Hot paths: fetch, proxy, refresh on fetch (\`npm run bench:hot-paths\`, \`bench/hot-paths.ts\`)

${now.notes ? `**Notes:** ${now.notes}\n\n` : ''}**Set-up:** Latchkey against a real control plane on 127.0.0.1, egress guard on with the loopback peers
allowed, the refresh Lease and its fencing, logging at \`info\` to /dev/null. The fetch and proxy loads go
to a server in its own process, started as \`latchkey server\` starts (\`bench/memory-replica.ts\`, the
chart's heap flags: \`--max-old-space-size\` ${CHART_HEAP_LIMIT_MIB.server}, \`--max-semi-space-size\` ${CHART_SEMI_SPACE_MIB}), as each peer runs in its own;
its CPU per request is read from /proc. The refresh phase (which counts the API calls of its client) and the
CPU profiles use a server built the same way (\`createContext\`) inside the benchmark's process (young
generation \`--max-semi-space-size\` ${youngGenerationMiB()}). The load generator is autocannon's CLI in its own process (\`--json\`,
${CONNECTIONS} keep-alive connections, a ${Math.min(3, SECONDS)} s warm-up of each side, then ${ROUNDS} rounds of ${SECONDS} s per side in alternating
order; the figures are medians, the ratio the median of the rounds' ratios); every peer runs in its own
process too (\`bench/peer-servers.ts\`). One-in-flight latencies come from \`bench/latency-probe.ts\` (its own
process, ${PROBE_COUNT} sequential requests on one keep-alive connection, µs resolution). Peers and Latchkey
were measured minutes apart in the same run on a shared 2-core machine: compare rows of one table, not
absolute figures. "Before" is the same benchmark on the code before issue #13 (\`bench/hot-paths-before.json\`).

### Fetch: \`GET /connections/:id\`, API-key connection (nothing to refresh)

| what | requests/s | ratio to peer | p99 at ${f?.rate ?? FETCH_RATE} requests/s (p99.9) | p99, autocannon \`-R ${f?.rate ?? FETCH_RATE}\` (bursts) |
|---|---:|---:|---:|---:|
| peer: bare express 5 route, same JSON, bearer check | ${cell(f?.peerRequestsPerSecond)} | 1 | ${cell(f?.peerP99Ms, ' ms')} (${cell(f?.peerP999Ms, ' ms')}) | ${cell(f?.peerBurstP99Ms, ' ms')} |
| Latchkey before | ${cell(b.fetch?.requestsPerSecond)} (peer ${cell(b.fetch?.peerRequestsPerSecond)}) | ${cell(b.fetch?.ratio)} | — | ${cell(b.fetch?.p99Ms, ' ms')} |
| Latchkey after | ${cell(f?.requestsPerSecond)} | **${cell(f?.ratio)}** (rounds ${f?.roundRatios?.join(', ') ?? '—'}) | **${cell(f?.p99Ms, ' ms')}** (${cell(f?.p999Ms, ' ms')}) | ${cell(f?.burstP99Ms, ' ms')} |

CPU per request over the rounds (each server's own process, /proc): Latchkey ${cell(f?.cpuMicrosPerRequest, ' µs')}, bare express ${cell(f?.peerCpuMicrosPerRequest, ' µs')}.
Goal (issue #52): ratio ≥ 0.85, p99 ≤ 10 ms at 1,000 requests/s; a connection in memory with a token not due is
answered without an API call and without a promise (\`test/http/cached-fetch.test.ts\` counts the API requests at a
proxy in front of the API server). The p99 at
${f?.rate ?? FETCH_RATE} requests/s comes from \`bench/paced-load.ts\` (its own process, ${CONNECTIONS} keep-alive connections): requests
started at even intervals over each second whatever the answers before them, each latency timed from
its scheduled start (a stall delays, and counts, every request scheduled during it). autocannon's \`-R\`
does not spread them: each connection sends its share of a second back to back, then waits for the
next second, so its "1,000 requests/s" is a burst of ${CONNECTIONS} connections at full speed at the start of each
second (the before row was measured that way only).

### Proxy: \`GET /proxy/records\` to a loopback upstream (860-byte JSON)

| what | requests/s | ratio to peer | p50 added at one in flight (over calling the upstream directly) |
|---|---:|---:|---:|
| peer: minimal \`node:http\` forwarder, keep-alive agent | ${cell(p?.peerRequestsPerSecond)} | 1 | ${cell(p?.peerP50OverheadMsAtOne, ' ms')} |
| Latchkey before | ${cell(b.proxy?.requestsPerSecond)} (peer ${cell(b.proxy?.peerRequestsPerSecond)}) | ${cell(b.proxy?.ratio)} | ${cell(b.proxy?.p50OverheadMsAtOne, ' ms')} |
| Latchkey after | ${cell(p?.requestsPerSecond)} | **${cell(p?.ratio)}** (rounds ${p?.roundRatios?.join(', ') ?? '—'}) | **${cell(p?.p50OverheadMsAtOne, ' ms')}** |

CPU per request over the rounds: Latchkey ${cell(p?.cpuMicrosPerRequest, ' µs')}, forwarder ${cell(p?.peerCpuMicrosPerRequest, ' µs')}.
Direct upstream p50 at one in flight: ${cell(p?.directP50MsAtOne, ' ms')}. Goal: ratio ≥ 0.9, overhead ≤ 0.3 ms.

### Refresh on fetch: expired OAuth 2 access token (oidc-provider, refresh-token rotation)

${REFRESHES} connections refreshed one after the other, each by its first fetch; the token endpoint alone is the
same grant sent directly. "API calls on the path" are the Kubernetes API calls Latchkey started before it wrote
the answer (counted on its KubeConfig, the answer's time taken at \`res.end\`); "after" are those the refresh
started after it (the status write and the Lease's release). Load average at the end of the phase:
${r?.loadAverage?.join(' ') ?? '—'}.

| what | p50 | API calls on the path | after the answer |
|---|---:|---:|---:|
| peer: token endpoint alone | ${cell(r?.tokenEndpointP50Ms, ' ms')} | — | — |
| Latchkey before | ${cell(b.refreshOnFetch?.p50Ms, ' ms')} (token ${cell(b.refreshOnFetch?.tokenEndpointP50Ms, ' ms')}) | ${cell(b.refreshOnFetch?.apiRoundTrips)} | ${cell(b.refreshOnFetch?.apiCallsAfterAnswer)} |
| Latchkey after | **${cell(r?.p50Ms, ' ms')}** | **${cell(r?.apiRoundTrips)}** | ${cell(r?.apiCallsAfterAnswer)} |

Goal: ≤ 3 sequential API round trips besides the token call, p50 overhead over the token call ≤ 20 ms.
The round trips are also counted at a peer, a proxy in front of the API server, by
\`test/auth/refresh-round-trips.test.ts\`.

Refresh on fetch, after (CPU profile of the phase):

${profileTable(now.profiles?.refresh, r?.phaseSeconds)}

### Where the time goes (CPU profiles under the fetch and proxy loads)

${handNotes('hot-paths')}

V8's sampling profiler (the one \`node --cpu-prof\` starts, here scoped to the phase through \`node:inspector\`)
on Latchkey's process during a second ${SECONDS} s load of each path. Raw profiles: \`bench/profiles/\` (not committed).

Fetch, before:

${profileTable(b.profiles?.fetch)}

Fetch, after:

${profileTable(now.profiles?.fetch)}

Proxy, before:

${profileTable(b.profiles?.proxy)}

Proxy, after:

${profileTable(now.profiles?.proxy)}

Machine:

${machine().join('\n')}
`;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
