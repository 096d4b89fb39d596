/**
 * Provider webhooks: verified events accepted per second at 16 in flight (autocannon in its own
 * process) by `POST /webhooks/{namespace}/{integration}` of a server in its own process (run as
 * `latchkey server` runs, its webhook dispatcher included), next to a bare express 5 route checking the
 * same HMAC (bench/peer-servers.ts `webhook`); then the receive-to-forward latency: events sent at a
 * paced rate, each timed from its POST to its `forward` delivery at the application's receiver.
 *
 * The Provider is GitHub's manifest without the delivery ID (autocannon repeats one request: with
 * GitHub's X-GitHub-Delivery every repeat would be a duplicate, answered without being stored), so
 * each accepted event is one outbox ConfigMap written before the 2xx. The per-Integration budget is
 * switched off (LATCHKEY_PROVIDER_WEBHOOK_RATE_PER_INTEGRATION=0): it would cap the figure at 100/s.
 *
 *   npm run bench:provider-webhooks     # rewrites the provider-webhooks section of docs/benchmarks.md
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../dev/cluster.js';
import { LOOPBACK_PEERS } from '../dev/egress.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import type { ProviderSpec } from '../src/k8s/resources.js';
import { WebhookOutbox } from '../src/k8s/webhook-outbox.js';
import { writeFigures } from './figures.js';
import { cannon, type CannonResult } from './load.js';
import { startReplica } from './replica-process.js';
import { machine, ms, percentile, startBenchControlPlane, writeSection } from './support.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SECONDS = num('BENCH_SECONDS', 5);
const CONNECTIONS = num('BENCH_CONNECTIONS', 16);
const LATENCY_EVENTS = num('BENCH_LATENCY_EVENTS', 300);
const LATENCY_RATE = num('BENCH_LATENCY_RATE', 30);
/** How long the outbox may take to drain after the throughput phase, seconds. */
const DRAIN_SECONDS = num('BENCH_DRAIN_SECONDS', 300);
const HERE = dirname(fileURLToPath(import.meta.url));
const SECRET = 'bench-webhook-secret';
const PROVIDER = 'bench-github-webhooks';
const log = (line: string) => process.stderr.write(`[provider-webhooks] ${line}\n`);

const signature = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

async function peer(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(HERE, 'peer-servers.js'), 'webhook'], {
    env: { ...process.env, PEER_KEY: SECRET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.once('data', (c: Buffer) => resolve((JSON.parse(c.toString('utf8')) as { port: number }).port));
  });
  return { port, child };
}

/** The application's receiver: counts deliveries and notes when each timed event arrived. */
async function receiver() {
  const arrived = new Map<number, number>();
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      count++;
      const seq = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payload?: { seq?: number } }).payload?.seq;
      if (typeof seq === 'number') arrived.set(seq, performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port, arrived, count: () => count };
}

async function main(): Promise<void> {
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const ns = await createTestNamespace(kc, 'bench-provider-webhooks');
  const app = await receiver();
  const spec: ProviderSpec = {
    displayName: 'GitHub (bench)',
    authMode: 'OAUTH2',
    authorizationUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    webhooks: { signature: { scheme: 'hmac-sha256', header: 'x-hub-signature-256', prefix: 'sha256=', encoding: 'hex' } },
  };
  await applyProvider(kc, PROVIDER, spec);
  await createEnvironment(kc, ns.name, { webhooks: { url: `http://127.0.0.1:${app.port}/hooks` } });
  await createIntegration(kc, ns.name, 'github', { provider: PROVIDER }, { clientId: 'id', clientSecret: 'secret', webhookSecret: SECRET });
  const server = await startReplica({
    kind: 'server',
    identity: 'bench-provider-webhooks',
    kubeconfigPath: cp.kubeconfigPath,
    namespace: ns.name,
    waitSeconds: 120,
    env: { LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS, LATCHKEY_LOG_LEVEL: 'info', LATCHKEY_PROVIDER_WEBHOOK_RATE_PER_INTEGRATION: '0' },
  });
  const bare = await peer();
  const load = loadavg().map((n) => Math.round(n * 100) / 100);
  try {
    const url = `http://127.0.0.1:${server.port}/webhooks/${ns.name}/github`;
    const body = JSON.stringify({ action: 'opened', issue: { number: 1347 }, repository: { full_name: 'octocat/Hello-World' } });
    const headers = { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-hub-signature-256': signature(body) };
    // The Integration is in the server's cache once a signed event is answered 200.
    for (let i = 0; ; i++) {
      const status = (await fetch(url, { method: 'POST', headers, body })).status;
      if (status === 200) break;
      if (i > 600) throw new Error(`the endpoint answers ${status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const target = { url, method: 'POST', headers, body };
    log(`throughput: ${SECONDS} s at ${CONNECTIONS} in flight`);
    const latchkey: CannonResult = await cannon(target, { connections: CONNECTIONS, seconds: SECONDS });
    const peerResult: CannonResult = await cannon(
      { ...target, url: `http://127.0.0.1:${bare.port}/webhooks/${ns.name}/github` },
      { connections: CONNECTIONS, seconds: SECONDS },
    );
    log(
      `latchkey ${latchkey.requestsPerSecond.toFixed(0)}/s (non-2xx ${latchkey.non2xx}), peer ${peerResult.requestsPerSecond.toFixed(0)}/s`,
    );

    // Let the dispatcher deliver the throughput phase's events before timing single ones.
    const outbox = new WebhookOutbox(kc);
    const drainStart = performance.now();
    while ((await outbox.list([ns.name])).length > 0) {
      if (performance.now() - drainStart > DRAIN_SECONDS * 1000) throw new Error('the outbox did not drain');
      await new Promise((r) => setTimeout(r, 500));
    }
    const drainSeconds = (performance.now() - drainStart) / 1000;
    log(`outbox drained in ${drainSeconds.toFixed(1)} s; latency: ${LATENCY_EVENTS} events at ${LATENCY_RATE}/s`);

    const sent = new Map<number, number>();
    const posts: Array<Promise<unknown>> = [];
    for (let seq = 0; seq < LATENCY_EVENTS; seq++) {
      const event = JSON.stringify({ seq, action: 'opened' });
      sent.set(seq, performance.now());
      posts.push(fetch(url, { method: 'POST', headers: { ...headers, 'x-hub-signature-256': signature(event) }, body: event }));
      await new Promise((r) => setTimeout(r, 1000 / LATENCY_RATE));
    }
    await Promise.all(posts);
    const deadline = performance.now() + 120_000;
    while (app.arrived.size < LATENCY_EVENTS && performance.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const latencies = [...app.arrived].map(([seq, at]) => at - sent.get(seq)!).sort((a, b) => a - b);
    const p50 = percentile(latencies, 0.5);
    const p99 = percentile(latencies, 0.99);
    const figures = {
      seconds: SECONDS,
      connections: CONNECTIONS,
      latchkey: latchkey,
      peer: peerResult,
      ratio: latchkey.requestsPerSecond / peerResult.requestsPerSecond,
      drainSeconds,
      latency: { events: LATENCY_EVENTS, rate: LATENCY_RATE, delivered: latencies.length, p50Ms: p50, p99Ms: p99 },
      loadAverage: load,
    };
    writeFigures('provider-webhooks', figures);
    writeSection(
      'provider-webhooks',
      `## Provider webhooks

\`npm run bench:provider-webhooks\` (bench/provider-webhooks.ts): \`POST /webhooks/{namespace}/{integration}\` with
a GitHub-signed event (\`X-Hub-Signature-256\`, no delivery ID, so every request stores one \`forward\` delivery in
the outbox before its 2xx), ${CONNECTIONS} in flight for ${SECONDS} s, autocannon in its own process, the server in
its own (its dispatcher delivering meanwhile); next to a bare express 5 route checking the same HMAC. Then
${LATENCY_EVENTS} events at ${LATENCY_RATE}/s, each timed from its POST to its \`forward\` delivery at the application's
receiver (after the first phase's ${latchkey.requests} events were delivered, in ${drainSeconds.toFixed(1)} s).
Load average at the start: ${load.join(', ')}.

| what | verified events/s | ratio to peer | p99 | receive-to-forward p50 | p99 |
|---|---:|---:|---:|---:|---:|
| peer: bare express 5 route, same HMAC | ${peerResult.requestsPerSecond.toFixed(0)} | 1 | ${peerResult.p99Ms} ms | — | — |
| Latchkey | ${latchkey.requestsPerSecond.toFixed(0)} | **${figures.ratio.toFixed(2)}** | ${latchkey.p99Ms} ms | **${ms(p50)}** | **${ms(p99)}** |

Each accepted event is one ConfigMap create at the API server (the outbox) before its answer, on the same two
cores as the load generator and the control plane; the peer stores nothing.${latchkey.non2xx ? ` Non-2xx answers during the load: ${latchkey.non2xx}.` : ''}

${machine().join('\n')}
`,
    );
    log(`receive-to-forward p50 ${ms(p50)}, p99 ${ms(p99)} (${latencies.length}/${LATENCY_EVENTS} delivered)`);
  } finally {
    bare.child.kill('SIGTERM');
    await server.stop();
    app.server.close();
    await deleteProvider(kc, PROVIDER);
    await ns.delete();
    await cp.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
