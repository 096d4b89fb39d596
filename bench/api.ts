/**
 * REST API core paths, through a real Latchkey HTTP server (the production wiring: startHttpServer
 * on an AppContext like src/app/run.ts builds) against a real control plane and a real OAuth 2 server
 * (oidc-provider in process, dev/peers/oidc-server.ts), all on 127.0.0.1:
 *
 * 1. import throughput: POST /connections (Connection, Secret, status: three API writes each);
 * 2. GET /connections/:id with a fresh token (served from the informer cache);
 * 3. refresh on fetch: an expired access token, one refresh_token grant at the token endpoint;
 * 4. 50 concurrent fetches of one expired connection (one refresh, every request waits for it).
 *
 * Bounded in count and time; the namespace and the Provider are deleted at the end.
 *
 *   npm run bench:api                                     # rewrites the api section of docs/benchmarks.md
 *   BENCH_API_IMPORTS=300 BENCH_API_GETS=2000 npm run bench:api
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startHttpServer } from '../src/http/server.js';
import { loadConfig } from '../src/platform/config.js';
import { createContext } from '../src/app/context.js';
import { installCrds } from '../dev/apply.js';
import { createLogger } from '../src/platform/log.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { LOOPBACK_PEERS } from '../dev/egress.js';
import { REPO_ROOT, startControlPlane } from '../dev/control-plane.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import { startOidcServer } from '../dev/peers/oidc-server.js';
import {
  expectStatus,
  httpClient,
  idleBetween,
  machine,
  machineCpu,
  median,
  ms,
  percentile,
  processCpuMs,
  runLoad,
  summarize,
  writeSection,
  type Summary,
} from './support.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const IMPORTS_SEQUENTIAL = num('BENCH_API_IMPORTS_SEQUENTIAL', 100);
const IMPORTS = num('BENCH_API_IMPORTS', 1000);
const IMPORT_CONCURRENCY = num('BENCH_API_IMPORT_CONCURRENCY', 16);
const GET_POOL = num('BENCH_API_GET_POOL', 200);
const GETS = num('BENCH_API_GETS', 5000);
const GET_CONCURRENCY = num('BENCH_API_GET_CONCURRENCY', 16);
const REFRESH_SEQUENTIAL = num('BENCH_API_REFRESH_SEQUENTIAL', 50);
const REFRESH_PARALLEL = num('BENCH_API_REFRESH_PARALLEL', 100);
const REFRESH_CONCURRENCY = num('BENCH_API_REFRESH_CONCURRENCY', 8);
const CROWD_ROUNDS = num('BENCH_API_CROWD_ROUNDS', 10);
const CROWD = num('BENCH_API_CROWD', 50);
const TOKEN_CALLS = num('BENCH_API_TOKEN_CALLS', 50);
/** Upper bound of each measured phase. */
const MAX_SECONDS = num('BENCH_API_MAX_SECONDS', 60);

const INTEGRATION = 'bench-oauth';
const CLIENT = { clientId: 'latchkey-bench', clientSecret: `bench-${randomBytes(16).toString('hex')}` };
/** Described when the run starts (the load average then). */
const MACHINE = machine();

const opaque = (bytes: number) => randomBytes(bytes).toString('base64url');

function importBody(connectionId: string, credentials: { access_token: string; refresh_token: string; expires_at: string }): string {
  return JSON.stringify({
    provider_config_key: INTEGRATION,
    connection_id: connectionId,
    credentials: { type: 'OAUTH2', ...credentials },
    metadata: { plan: 'pro', region: 'eu' },
    end_user: {
      id: `user-${connectionId}`,
      email: `${connectionId}@example.test`,
      display_name: `User ${connectionId}`,
      tags: { organizationId: 'org-1' },
    },
  });
}

const getPath = (connectionId: string) => `/connections/${encodeURIComponent(connectionId)}?provider_config_key=${INTEGRATION}`;

interface Results {
  importSequential: Summary;
  importParallel: Summary;
  firstFetch: Summary;
  get: Summary;
  tokenEndpoint: Summary;
  refreshSequential: Summary;
  refreshParallel: Summary;
  refreshTokenCalls: { expected: number; made: number };
  crowd: { requests: Summary; roundMs: number[]; tokenCallsPerRound: number[]; distinctTokensPerRound: number[] };
}

async function main(): Promise<void> {
  const logger = createLogger('silent');
  const cp = await startControlPlane({ log: (l) => process.stderr.write(`[controlplane] ${l}\n`) });
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const cpCpu = () => processCpuMs(cp.workDir);
  await installCrds(kc, join(REPO_ROOT, 'crds'));
  const ns = await createTestNamespace(kc, 'bench-api');
  const provider = `bench-oauth-${ns.name}`;
  // Refreshed tokens live an hour: each connection is refreshed once during the run.
  const oidc = await startOidcServer({ clients: [CLIENT], accessTokenTtl: 3600 });
  await applyProvider(kc, provider, {
    displayName: 'Bench OAuth',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    tokenRequestAuthMethod: 'body',
  });
  const env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, INTEGRATION, { provider }, { clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret });

  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: ns.name,
    LATCHKEY_LEADER_ELECTION: 'false',
    POD_NAME: 'bench-api',
    LATCHKEY_PUBLIC_BASE_URL: 'http://127.0.0.1',
    LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS,
  });
  const ctx = createContext({ config, logger, kc });
  const store = ctx;
  await store.caches.start();
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  const auth = { authorization: `Bearer ${env.secretKey}` };
  const client = httpClient(server.port, Math.max(IMPORT_CONCURRENCY, GET_CONCURRENCY, REFRESH_CONCURRENCY));
  const crowdClient = httpClient(server.port, CROWD);
  const log = (line: string) => process.stderr.write(`[api] ${line}\n`);
  const failed = (what: string) => (err: unknown) => log(`${what} failed: ${(err as Error).message}`);

  try {
    await eventually(
      () =>
        store.catalog.getIntegration(ns.name, INTEGRATION) &&
        store.catalog.getProvider(provider) &&
        store.catalog.getReferencedSecret(ns.name, `${INTEGRATION}-client`) &&
        store.catalog.getReferencedSecret(ns.name, `${env.name}-keys`),
    );
    await eventually(async () => (await client.call('GET', '/providers', auth)).status === 200);

    // ---- 1. import ----
    const fresh = () => ({
      access_token: opaque(135),
      refresh_token: opaque(75),
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    const importOne = async (id: string, credentials = fresh()) =>
      expectStatus(await client.call('POST', '/connections', auth, importBody(id, credentials)), 201, `import ${id}`);
    const importSequential = await runLoad({
      count: IMPORTS_SEQUENTIAL,
      concurrency: 1,
      maxSeconds: MAX_SECONDS,
      controlPlaneCpu: cpCpu,
      op: (i) => importOne(`seq-${i}`),
      onFirstError: failed('import'),
    });
    log(`import sequential: ${importSequential.rps.toFixed(0)}/s`);
    const importParallel = await runLoad({
      count: IMPORTS,
      concurrency: IMPORT_CONCURRENCY,
      maxSeconds: MAX_SECONDS,
      controlPlaneCpu: cpCpu,
      op: (i) => importOne(`par-${i}`),
      onFirstError: failed('import'),
    });
    log(`import x${IMPORT_CONCURRENCY}: ${importParallel.rps.toFixed(0)}/s`);

    // ---- 2. GET, fresh token ----
    const pool = Array.from({ length: Math.min(GET_POOL, importParallel.count) }, (_, i) => getPath(`par-${i}`));
    if (pool.length === 0) throw new Error('no imported connections to fetch');
    const getOk = async (path: string, check = false) => {
      const res = await client.call('GET', path, auth);
      expectStatus(res, 200, `GET ${path}`);
      if (check && typeof (JSON.parse(res.body) as { credentials?: { access_token?: unknown } }).credentials?.access_token !== 'string')
        throw new Error('no access token in the answer');
    };
    // The first fetch of a connection in a minute also writes status.lastFetchedAt: measured apart.
    const firstFetch = await runLoad({
      count: pool.length,
      concurrency: GET_CONCURRENCY,
      maxSeconds: MAX_SECONDS,
      controlPlaneCpu: cpCpu,
      op: (i) => getOk(pool[i]!, true),
      onFirstError: failed('first GET'),
    });
    const refreshesBefore = oidc.refreshCalls();
    const get = await runLoad({
      count: GETS,
      concurrency: GET_CONCURRENCY,
      maxSeconds: MAX_SECONDS,
      controlPlaneCpu: cpCpu,
      op: (i) => getOk(pool[i % pool.length]!),
      onFirstError: failed('GET'),
    });
    if (oidc.refreshCalls() !== refreshesBefore) throw new Error('fresh tokens were refreshed during the GET benchmark');
    log(`GET fresh: ${get.rps.toFixed(0)}/s`);

    // ---- 3. refresh on fetch ----
    // The token endpoint alone (refresh_token grant, same server, same client), for comparison.
    // Timed per call, without the minting before it.
    const tokenLatencies: number[] = [];
    for (let i = 0; i < TOKEN_CALLS; i++) {
      const { refreshToken } = await oidc.mintTokens({ clientId: CLIENT.clientId });
      const t0 = process.hrtime.bigint();
      const res = await fetch(oidc.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: CLIENT.clientId,
          client_secret: CLIENT.clientSecret,
        }),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}`);
      tokenLatencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    // Requests/s from the calls' own time (one at a time), not the minting between them; CPU not attributable.
    const tokenSummary = summarize(tokenLatencies, 0, tokenLatencies.reduce((a, b) => a + b, 0) / 1000, NaN);

    const importExpired = async (id: string) => {
      const tokens = await oidc.mintTokens({ clientId: CLIENT.clientId });
      const credentials = {
        access_token: tokens.accessToken,
        refresh_token: tokens.refreshToken,
        expires_at: new Date(Date.now() - 60_000).toISOString(),
      };
      await importOne(id, credentials);
      await eventually(() => store.connections.getConnection(ns.name, INTEGRATION, id));
      return tokens.accessToken;
    };
    const seqIds = Array.from({ length: REFRESH_SEQUENTIAL }, (_, i) => `expired-seq-${i}`);
    const parIds = Array.from({ length: REFRESH_PARALLEL }, (_, i) => `expired-par-${i}`);
    const oldTokens = new Map<string, string>();
    for (const id of [...seqIds, ...parIds]) oldTokens.set(id, await importExpired(id));
    const refreshOk = async (id: string) => {
      const res = await client.call('GET', getPath(id), auth);
      expectStatus(res, 200, `GET expired ${id}`);
      const token = (JSON.parse(res.body) as { credentials: { access_token: string } }).credentials.access_token;
      if (token === oldTokens.get(id)) throw new Error(`${id}: the expired access token came back`);
    };
    const before = oidc.refreshCalls();
    const refreshSequential = await runLoad({
      count: seqIds.length,
      concurrency: 1,
      maxSeconds: MAX_SECONDS,
      controlPlaneCpu: cpCpu,
      op: (i) => refreshOk(seqIds[i]!),
      onFirstError: failed('refresh'),
    });
    const refreshParallel = await runLoad({
      count: parIds.length,
      concurrency: REFRESH_CONCURRENCY,
      maxSeconds: MAX_SECONDS,
      controlPlaneCpu: cpCpu,
      op: (i) => refreshOk(parIds[i]!),
      onFirstError: failed('refresh'),
    });
    const refreshTokenCalls = { expected: refreshSequential.count + refreshParallel.count, made: oidc.refreshCalls() - before };
    log(`refresh on fetch: p50 ${ms(refreshSequential.p50)}, x${REFRESH_CONCURRENCY} ${refreshParallel.rps.toFixed(1)}/s`);

    // ---- 4. a crowd on one expired connection ----
    const crowdLatencies: number[] = [];
    const roundMs: number[] = [];
    const tokenCallsPerRound: number[] = [];
    const distinctTokensPerRound: number[] = [];
    let crowdErrors = 0;
    let crowdCpuMs = 0;
    let crowdCpCpuMs = 0;
    const crowdMachine = { busy: 0, idle: 0 };
    const crowdStart = Date.now();
    let crowdSeconds = 0;
    for (let round = 0; round < CROWD_ROUNDS && Date.now() - crowdStart < MAX_SECONDS * 1000; round++) {
      const id = `crowd-${round}`;
      await importExpired(id);
      const calls = oidc.refreshCalls();
      const cpu0 = process.cpuUsage();
      const cp0 = cpCpu();
      const m0 = machineCpu();
      const t0 = process.hrtime.bigint();
      const answers = await Promise.all(
        Array.from({ length: CROWD }, async () => {
          const s = process.hrtime.bigint();
          const res = await crowdClient.call('GET', getPath(id), auth);
          if (res.status !== 200) return undefined;
          crowdLatencies.push(Number(process.hrtime.bigint() - s) / 1e6);
          return (JSON.parse(res.body) as { credentials: { access_token: string } }).credentials.access_token;
        }),
      );
      const elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
      const cpu = process.cpuUsage(cpu0);
      crowdCpuMs += (cpu.user + cpu.system) / 1000;
      crowdCpCpuMs += cpCpu() - cp0;
      const m1 = machineCpu();
      crowdMachine.busy += m1.busy - m0.busy;
      crowdMachine.idle += m1.idle - m0.idle;
      crowdSeconds += elapsed / 1000;
      roundMs.push(elapsed);
      crowdErrors += answers.filter((a) => a === undefined).length;
      tokenCallsPerRound.push(oidc.refreshCalls() - calls);
      distinctTokensPerRound.push(new Set(answers.filter(Boolean)).size);
    }
    const crowd = {
      requests: summarize(
        crowdLatencies,
        crowdErrors,
        crowdSeconds,
        crowdCpuMs,
        crowdCpCpuMs,
        idleBetween({ busy: 0, idle: 0 }, crowdMachine),
      ),
      roundMs,
      tokenCallsPerRound,
      distinctTokensPerRound,
    };
    log(`crowd: round p50 ${ms(median(roundMs))}, token calls per round ${tokenCallsPerRound.join(',')}`);

    const results: Results = {
      importSequential,
      importParallel,
      firstFetch,
      get,
      tokenEndpoint: tokenSummary,
      refreshSequential,
      refreshParallel,
      refreshTokenCalls,
      crowd,
    };
    print(results);
    writeReport(results);
  } finally {
    client.close();
    crowdClient.close();
    await server.close();
    await store.caches.stop();
    await oidc.close();
    await deleteProvider(kc, provider);
    await ns.delete();
    await cp.stop();
  }
}

function line(label: string, s: Summary): string {
  return `| ${label} | ${s.count} | ${s.errors} | ${s.rps.toFixed(s.rps < 100 ? 1 : 0)} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.cpuMsPerOp)} | ${ms(s.controlPlaneCpuMsPerOp)} | ${Number.isFinite(s.machineIdle) ? `${(s.machineIdle * 100).toFixed(0)} %` : '—'} |`;
}

/** Cores kept busy during a phase: requests/s times CPU seconds per request. */
const cores = (s: Summary, cpuMsPerOp: number) => (s.rps * cpuMsPerOp) / 1000;

/** Which CPU was busy during a phase, in words, from the measured figures. */
function busy(s: Summary): string {
  const n = cpus().length;
  const node = cores(s, s.cpuMsPerOp);
  const cp = cores(s, s.controlPlaneCpuMsPerOp);
  const others = Math.max(0, (1 - s.machineIdle) * n - node - cp);
  const idle = `${(s.machineIdle * 100).toFixed(0)} % of the machine's CPU idle`;
  const verdict =
    s.machineIdle < 0.15
      ? `${idle}: the CPU was the limit (shared: other processes on the machine used ${others.toFixed(2)} cores meanwhile)`
      : `${idle}: the CPU was not the limit; waiting on round trips in sequence was`;
  return `the Node.js process kept ${node.toFixed(2)} cores busy and the control plane ${cp.toFixed(2)}, ${verdict}`;
}

function print(r: Results): void {
  for (const [label, s] of Object.entries({
    'import x1': r.importSequential,
    [`import x${IMPORT_CONCURRENCY}`]: r.importParallel,
    'GET first fetch': r.firstFetch,
    'GET fresh': r.get,
    'token endpoint': r.tokenEndpoint,
    'refresh x1': r.refreshSequential,
    [`refresh x${REFRESH_CONCURRENCY}`]: r.refreshParallel,
    crowd: r.crowd.requests,
  })) {
    process.stdout.write(`${label}: ${s.count} ok, ${s.errors} errors, ${s.rps.toFixed(1)}/s, p50 ${ms(s.p50)}, p99 ${ms(s.p99)}\n`);
  }
}

function writeReport(r: Results): void {
  const header =
    '| what | requests | errors | requests/s | p50 | p99 | Node.js process CPU per request | control plane CPU per request | machine CPU idle |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|';
  const sortedRounds = [...r.crowd.roundMs].sort((a, b) => a - b);
  const oneTokenCall = r.crowd.tokenCallsPerRound.every((n) => n === 1);
  const oneToken = r.crowd.distinctTokensPerRound.every((n) => n === 1);
  const refreshOverhead = r.refreshSequential.p50 - r.tokenEndpoint.p50;
  const text = `## REST API: import, fetch, refresh on fetch (\`npm run bench:api\`, \`bench/api.ts\`)

**Set-up:** one Latchkey HTTP server built as in production (\`startHttpServer\` on an \`AppContext\`, the
REST API's own token refresher with its Lease lock), a real control plane, and a real OAuth 2 server
(\`oidc-provider\`, \`dev/peers/oidc-server.ts\`, refresh-token rotation on) for an \`OAUTH2\` integration,
all on 127.0.0.1. The load generator (keep-alive \`node:http\` clients, closed loop: each worker sends its next
request when the previous answer arrives), Latchkey and the OAuth server share one Node.js process, so its
CPU column includes the client's and, for refreshes, the OAuth server's work. The control plane column is
the CPU time of kube-apiserver, etcd and kube-controller-manager (from \`/proc\`) over the same phase, divided
by the requests; "cores busy" below is requests/s times CPU per request. "Machine CPU idle" is the idle share
of all cores over the phase (\`/proc/stat\`), other developers' processes on this shared machine included.
The controller is not running (it would refresh the expired connections ahead of the fetches).
Connections carry a 180-character access token, a 100-character refresh token, an end user and two metadata
keys. Every answer was checked (status; for refreshes, a new access token).

### Import (\`POST /connections\`)

Each import makes three API writes in sequence: the Connection, its credentials Secret (owned by the
Connection), and the Connection's status (expiry and next refresh time).

${header}
${line('import, 1 at a time', r.importSequential)}
${line(`import, ${IMPORT_CONCURRENCY} in flight`, r.importParallel)}

**${r.importParallel.rps.toFixed(0)} connections created per second** with ${IMPORT_CONCURRENCY} in flight
(${(r.importParallel.rps * 3).toFixed(0)} API writes/s), ${r.importSequential.rps.toFixed(0)}/s one at a time. With ${IMPORT_CONCURRENCY} in flight ${busy(r.importParallel)}.
One at a time, ${busy(r.importSequential)}. The three writes of one import cannot overlap (the Secret
needs the Connection's UID, the status needs the Connection), so one import is at least three API round
trips. At the parallel rate, a bulk onboarding of 100,000 connections takes about
${(100_000 / r.importParallel.rps / 60).toFixed(0)} minutes on this machine; the Node.js CPU per import includes the TLS client to the API
server and the watch events each write sends back to every informer.

### \`GET /connections/:id\` with a fresh token

${r.get.count} requests round-robin over ${Math.min(GET_POOL, r.importParallel.count)} connections whose tokens expire in an hour, ${GET_CONCURRENCY} in flight, after a
first pass over the same connections. The first fetch of a connection in a minute also writes
\`status.lastFetchedAt\` (one API write; later fetches in that minute do not), so it is shown apart.

${header}
${line('first fetch in a minute (writes lastFetchedAt)', r.firstFetch)}
${line('fetch, token fresh (cache only)', r.get)}

**${r.get.rps.toFixed(0)} requests/s, p50 ${ms(r.get.p50)}, p99 ${ms(r.get.p99)}.** A fetch of a fresh token makes no call to
the API server: secret-key lookup, the connection and its Secret from the informer caches, decoding the
credentials, zod validation and JSON out; ${busy(r.get)}. Throughput per replica is bounded by its Node.js
event loop (one core for JavaScript); replicas scale it out, since every replica serves from its own cache.

### Refresh on fetch (expired access token)

Each connection's access token had expired. The fetch creates the refresh Lease, calls the token endpoint
once (\`refresh_token\` grant) with the credentials from the informer cache and replaces the Secret
(compare-and-swap on the cached version); the status write and the Lease's release follow the answer,
\`lastFetchedAt\` a later batch: one token call and two API calls on the path. The token endpoint alone
(the same grant sent directly, one at a time) is shown for comparison. Token calls made:
${r.refreshTokenCalls.made} for ${r.refreshTokenCalls.expected} refreshing fetches.

${header}
${line('token endpoint alone (refresh_token grant)', r.tokenEndpoint)}
${line('fetch with refresh, 1 at a time', r.refreshSequential)}
${line(`fetch with refresh, ${REFRESH_CONCURRENCY} in flight (different connections)`, r.refreshParallel)}

A refreshing fetch costs **p50 ${ms(r.refreshSequential.p50)}** (p99 ${ms(r.refreshSequential.p99)}), of which the token endpoint is
${ms(r.tokenEndpoint.p50)}; the other ${ms(refreshOverhead)} are the two API calls on the path and Latchkey's own work. A real
provider's token endpoint (tens to hundreds of ms over the internet) adds to that directly. Different
connections refresh in parallel: ${r.refreshParallel.rps.toFixed(1)} refreshes/s with ${REFRESH_CONCURRENCY} in flight, where ${busy(r.refreshParallel)}
(the Node.js figure includes the in-process OAuth server's work).

### ${CROWD} concurrent fetches of one expired connection

${r.crowd.roundMs.length} rounds; in each, a newly imported expired connection is fetched by ${CROWD} requests at once.
Token calls per round: ${r.crowd.tokenCallsPerRound.join(', ')} (${oneTokenCall ? 'one refresh each round' : '**not one per round**'}); distinct
access tokens returned per round: ${r.crowd.distinctTokensPerRound.join(', ')} (${oneToken ? 'every request got the same new token' : '**requests got different tokens**'}).

${header}
${line(`each of the ${CROWD} requests`, r.crowd.requests)}

Whole round (first request sent to last answer): median ${ms(median(r.crowd.roundMs))}, slowest ${ms(percentile(sortedRounds, 1))}.
The ${CROWD - 1} other requests wait on the one in-flight refresh in this process (no extra token call, no
extra Lease traffic), so a crowd costs about one refreshing fetch (${ms(r.refreshSequential.p50)} above) plus the time to answer
${CROWD} requests, not ${CROWD} refreshes. Across replicas, requests on the others find the Lease held and
wait for the new Secret on their own watch (no polling; not measured here: one replica).

Machine:

${MACHINE.join('\n')}
`;
  writeSection('api', text);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
