/**
 * Workloads' ServiceAccount tokens against the secret key, in the same run (docs/workloads.md):
 *
 * 1. `GET /connections/:id` (an OAuth 2 connection, nothing to refresh) with the Environment's secret
 *    key vs with a ServiceAccount token whose TokenReview and SubjectAccessReview are cached (the
 *    default bounds: 60 s and 10 s, so each load asks RBAC again about once), throughput with 16
 *    connections, rounds alternating which goes first; goal: the token at 0.8× the key or better
 *    (also reported as the median of each round's ratio, its two loads back to back);
 * 2. one request in flight (p50/p99): the same two fetches, and `POST /oauth2/token` (RFC 8693
 *    token exchange of the ServiceAccount token for the same connection's access token).
 *
 * Latchkey's server runs in its own process as `latchkey server` starts (bench/replica-process.ts,
 * the chart's heap flags), the load generators in theirs (bench/load.ts), against a control plane of
 * the benchmark's own. Figures go to docs/benchmarks.json (section `workloadAuth`).
 *
 *   npm run bench:workload-auth
 *   BENCH_SECONDS=5 BENCH_ROUNDS=2 npm run bench:workload-auth
 */
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { createTestNamespace } from '../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { JWT_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT, connectionUrn } from '../src/http/token-exchange.js';
import { writeFigures } from './figures.js';
import { cannon, probe, type Target } from './load.js';
import { startReplica } from './replica-process.js';
import { expectStatus, handNotes, httpClient, machine, median, ms, startBenchControlPlane, writeSection } from './support.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SECONDS = num('BENCH_SECONDS', 8);
const ROUNDS = num('BENCH_ROUNDS', 5);
const CONNECTIONS = num('BENCH_CONNECTIONS', 16);
const PROBE_COUNT = num('BENCH_PROBE_COUNT', 2000);
/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times. */
const CLOCK_TICKS = Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim()) || 100;

async function main(): Promise<void> {
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  let replica: Awaited<ReturnType<typeof startReplica>> | undefined;
  try {
    const ns = await createTestNamespace(kc, 'bench-workload');
    const env = await createEnvironment(kc, ns.name);
    await applyProvider(kc, 'bench-workload-oauth', {
      displayName: 'Bench OAuth 2',
      authMode: 'OAUTH2',
      authorizationUrl: 'https://auth.example.com/authorize',
      tokenUrl: 'https://auth.example.com/token',
      proxy: { baseUrl: 'https://api.example.com' },
    });
    await createIntegration(kc, ns.name, 'crm', { provider: 'bench-workload-oauth' }, { clientId: 'cid', clientSecret: 'csecret' });

    // The workload: a ServiceAccount allowed to fetch credentials in the Environment's namespace, and its token.
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: 'billing' } } });
    await rbac.createNamespacedRole({
      namespace: ns.name,
      body: {
        metadata: { name: 'billing' },
        rules: [{ apiGroups: ['latchkey.dev'], resources: ['connections/credentials'], verbs: ['get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns.name,
      body: {
        metadata: { name: 'billing' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'billing' },
        subjects: [{ kind: 'ServiceAccount', name: 'billing', namespace: ns.name }],
      },
    });
    const token = (
      await core.createNamespacedServiceAccountToken({
        namespace: ns.name,
        name: 'billing',
        body: { spec: { audiences: ['latchkey'], expirationSeconds: 3600 } },
      })
    ).status!.token!;

    replica = await startReplica({
      kind: 'server',
      identity: 'bench-workload',
      kubeconfigPath: cp.kubeconfigPath,
      namespace: ns.name,
      waitSeconds: 180,
    });
    const client = httpClient(replica.port, 4);
    const key = { authorization: `Bearer ${env.secretKey}` };
    const sa = { authorization: `Bearer ${token}` };
    // The Integration reaches the server's cache a moment after /readyz: import once it answers.
    for (let i = 0; ; i++) {
      const imported = await client.call(
        'POST',
        '/connections',
        key,
        JSON.stringify({
          provider_config_key: 'crm',
          connection_id: 'c1',
          credentials: {
            type: 'OAUTH2',
            access_token: 'at-bench',
            refresh_token: 'rt-bench',
            expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          },
        }),
      );
      if (imported.status === 201 || imported.status === 200) break;
      if (i > 100) expectStatus(imported, 201, 'import');
      await new Promise((r) => setTimeout(r, 200));
    }
    const path = '/connections/c1?provider_config_key=crm';
    const url = `http://127.0.0.1:${replica.port}${path}`;
    expectStatus(await client.call('GET', path, key), 200, 'fetch with the secret key');
    // Fills the review caches.
    expectStatus(await client.call('GET', path, sa), 200, 'fetch with the ServiceAccount token');
    const exchangeBody = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: token,
      subject_token_type: JWT_TOKEN_TYPE,
      resource: connectionUrn({ namespace: ns.name, integration: 'crm', connectionId: 'c1' }),
    }).toString();
    const exchange: Target = {
      url: `http://127.0.0.1:${replica.port}/oauth2/token`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: exchangeBody,
    };
    const check = await fetch(exchange.url, { method: 'POST', headers: exchange.headers, body: exchangeBody });
    if (check.status !== 200) throw new Error(`token exchange: ${check.status} ${await check.text()}`);
    client.close();

    const keyRps: number[] = [];
    const saRps: number[] = [];
    const keyCpuUs: number[] = [];
    const saCpuUs: number[] = [];
    const errors: number[] = [];
    const pid = replica.child.pid!;
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, and which goes first too: the machine's load drifts.
      const order = round % 2 === 0 ? (['key', 'sa'] as const) : (['sa', 'key'] as const);
      for (const which of order) {
        const cpuBefore = cpuMsOf(pid);
        const r = await cannon({ url, headers: which === 'key' ? key : sa }, { connections: CONNECTIONS, seconds: SECONDS });
        // The server's own CPU per answered request: what the machine's other load disturbs least.
        (which === 'key' ? keyCpuUs : saCpuUs).push(((cpuMsOf(pid) - cpuBefore) * 1000) / Math.max(1, r.requests));
        (which === 'key' ? keyRps : saRps).push(r.requestsPerSecond);
        errors.push(r.errors + r.non2xx);
        process.stderr.write(`round ${round + 1} ${which}: ${r.requestsPerSecond.toFixed(0)} req/s, p99 ${r.p99Ms} ms\n`);
      }
    }
    const oneKey = await probe({ url, headers: key }, PROBE_COUNT);
    const oneSa = await probe({ url, headers: sa }, PROBE_COUNT);
    const oneExchange = await probe(exchange, PROBE_COUNT);
    const figures = {
      what: 'GET /connections/:id with the secret key vs a ServiceAccount token (reviews cached), and POST /oauth2/token, same run',
      note: 'the machine is shared with other engineers and loaded while this ran (see loadAverage): compare figures of one run only',
      machine: machine(),
      seconds: SECONDS,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      fetchSecretKeyRequestsPerSecond: Math.round(median(keyRps)),
      fetchServiceAccountRequestsPerSecond: Math.round(median(saRps)),
      serviceAccountToSecretKey: Number((median(saRps) / median(keyRps)).toFixed(2)),
      // Each round's two loads ran back to back: their ratio is less at the mercy of the machine's drifting load.
      serviceAccountToSecretKeyMedianOfRounds: Number(median(saRps.map((v, i) => v / keyRps[i]!)).toFixed(2)),
      goal: 0.8,
      perRound: { secretKey: keyRps.map(Math.round), serviceAccount: saRps.map(Math.round) },
      serverCpuMicrosecondsPerRequest: {
        secretKey: Math.round(median(keyCpuUs)),
        serviceAccount: Math.round(median(saCpuUs)),
        perRound: { secretKey: keyCpuUs.map(Math.round), serviceAccount: saCpuUs.map(Math.round) },
      },
      errorsOrNon2xx: errors.reduce((a, b) => a + b, 0),
      oneInFlight: {
        fetchSecretKey: { p50Ms: oneKey.p50Ms, p99Ms: oneKey.p99Ms, errors: oneKey.errors },
        fetchServiceAccount: { p50Ms: oneSa.p50Ms, p99Ms: oneSa.p99Ms, errors: oneSa.errors },
        tokenExchange: { p50Ms: oneExchange.p50Ms, p99Ms: oneExchange.p99Ms, errors: oneExchange.errors },
      },
    };
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
    writeFigures('workloadAuth', figures);
    const o = figures.oneInFlight;
    writeSection(
      'workload-auth',
      `## Workloads: ServiceAccount token vs secret key, token exchange (\`npm run bench:workload-auth\`, \`bench/workload-auth.ts\`)

${machine().join('\n')}

\`GET /connections/:id\` (OAuth 2, nothing to refresh), ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s each, the two
loads of a round back to back (which goes first alternates); the ServiceAccount's TokenReview and SubjectAccessReview
cached (60 s and 10 s bounds: each load asks RBAC again about once). Goal: the token at 0.8× the key or better.

| | requests/s (median of rounds) | per round |
|---|---|---|
| secret key | ${figures.fetchSecretKeyRequestsPerSecond} | ${figures.perRound.secretKey.join(', ')} |
| ServiceAccount token | ${figures.fetchServiceAccountRequestsPerSecond} | ${figures.perRound.serviceAccount.join(', ')} |
| token / key | ${figures.serviceAccountToSecretKey} (median of each round's ratio: ${figures.serviceAccountToSecretKeyMedianOfRounds}) | |

The server's own CPU per answered request (its process's user + system time over the load, divided by the
requests; the machine's other load disturbs it least): secret key ${figures.serverCpuMicrosecondsPerRequest.secretKey} µs,
ServiceAccount token ${figures.serverCpuMicrosecondsPerRequest.serviceAccount} µs (per round: ${figures.serverCpuMicrosecondsPerRequest.perRound.secretKey.join(', ')} and ${figures.serverCpuMicrosecondsPerRequest.perRound.serviceAccount.join(', ')}).

One request in flight (${PROBE_COUNT} each):

| | p50 | p99 |
|---|---|---|
| fetch, secret key | ${ms(o.fetchSecretKey.p50Ms)} | ${ms(o.fetchSecretKey.p99Ms)} |
| fetch, ServiceAccount token | ${ms(o.fetchServiceAccount.p50Ms)} | ${ms(o.fetchServiceAccount.p99Ms)} |
| \`POST /oauth2/token\` (token exchange, same token and connection) | ${ms(o.tokenExchange.p50Ms)} | ${ms(o.tokenExchange.p99Ms)} |

${handNotes('workload-auth')}`,
    );
  } finally {
    await replica?.stop();
    await cp.stop();
  }
}

/** User + system CPU time (ms) of one process, from /proc (Linux). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
