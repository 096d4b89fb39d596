/**
 * A streamed MCP tool answer through Latchkey's proxy vs straight from the MCP server, same run
 * (docs/proxy.md, "Streams"): the SDK's Client (bench/mcp-stream-client.ts, its own process) calls the
 * `parts` tool of an MCP server built with the SDK (dev/peers/mcp-server.ts, in this process, idle
 * while the client runs): BENCH_MCP_PARTS progress notifications BENCH_MCP_DELAY_MS apart, then the
 * result, each call timed to its first part and to its result. Rounds alternate which path goes first.
 * Latchkey's server runs in its own process as `latchkey server` starts (bench/replica-process.ts).
 * A proxy that held the answer would show a first part as late as the result. Figures go to
 * docs/benchmarks.json (section `mcpStream`).
 *
 *   npm run bench:mcp-stream
 *   BENCH_MCP_CALLS=50 BENCH_ROUNDS=2 npm run bench:mcp-stream
 */
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../dev/cluster.js';
import { LOOPBACK_PEERS } from '../dev/egress.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { startMcpServer } from '../dev/peers/mcp-server.js';
import { writeFigures } from './figures.js';
import { startReplica } from './replica-process.js';
import { expectStatus, handNotes, httpClient, machine, ms, percentile, startBenchControlPlane, writeSection } from './support.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CALLS = num('BENCH_MCP_CALLS', 200);
const ROUNDS = num('BENCH_ROUNDS', 3);
const PARTS = num('BENCH_MCP_PARTS', 5);
const DELAY_MS = num('BENCH_MCP_DELAY_MS', 10);
const CLIENT = join(dirname(fileURLToPath(import.meta.url)), 'mcp-stream-client.js');

interface Times {
  firstMs: number[];
  totalMs: number[];
}

/** One run of the client process: `calls` tool calls in one session. */
function runClient(url: string, headers: Record<string, string>): Promise<Times> {
  const child = fork(CLIENT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise<Times>((resolve, reject) => {
    child.once('message', (m: { ok: boolean; error?: string } & Times) => {
      child.disconnect();
      if (m.ok) resolve(m);
      else reject(new Error(`the MCP client failed: ${m.error}`));
    });
    child.once('exit', (code) => reject(new Error(`the MCP client exited (${code})`)));
    child.send({ url, headers, calls: CALLS, parts: PARTS, delayMs: DELAY_MS });
  });
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const r = (n: number) => Number(n.toFixed(2));
  return { p50Ms: r(percentile(sorted, 0.5)), p99Ms: r(percentile(sorted, 0.99)) };
};

async function main(): Promise<void> {
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const mcp = await startMcpServer({ keepAliveMs: 0 });
  let replica: Awaited<ReturnType<typeof startReplica>> | undefined;
  try {
    const ns = await createTestNamespace(kc, 'bench-mcp');
    const env = await createEnvironment(kc, ns.name);
    await applyProvider(kc, 'bench-mcp', {
      displayName: 'Bench MCP server',
      authMode: 'API_KEY',
      proxy: { baseUrl: mcp.origin, headers: { authorization: 'Bearer ${apiKey}' } },
    });
    await createIntegration(kc, ns.name, 'mcp', { provider: 'bench-mcp' });
    replica = await startReplica({
      kind: 'server',
      identity: 'bench-mcp',
      kubeconfigPath: cp.kubeconfigPath,
      namespace: ns.name,
      waitSeconds: 180,
      env: { LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS },
    });
    const client = httpClient(replica.port, 1);
    const key = { authorization: `Bearer ${env.secretKey}` };
    // The Integration reaches the server's cache a moment after /readyz: import once it answers.
    for (let i = 0; ; i++) {
      const body = JSON.stringify({
        provider_config_key: 'mcp',
        connection_id: 'c1',
        credentials: { type: 'API_KEY', apiKey: 'bench-key' },
      });
      const imported = await client.call('POST', '/connections', key, body);
      if (imported.status === 201 || imported.status === 200) break;
      if (i > 100) expectStatus(imported, 201, 'import');
      await new Promise((r) => setTimeout(r, 200));
    }
    const paths = {
      direct: { url: mcp.url, headers: { authorization: 'Bearer bench-key' } },
      proxy: {
        url: `http://127.0.0.1:${replica.port}/proxy/mcp`,
        headers: { ...key, 'connection-id': 'c1', 'provider-config-key': 'mcp' },
      },
    };
    const all = {
      direct: { firstMs: [] as number[], totalMs: [] as number[] },
      proxy: { firstMs: [] as number[], totalMs: [] as number[] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['direct', 'proxy'] as const) : (['proxy', 'direct'] as const);
      for (const path of order) {
        const t = await runClient(paths[path].url, paths[path].headers);
        all[path].firstMs.push(...t.firstMs);
        all[path].totalMs.push(...t.totalMs);
      }
    }
    const figures = {
      what: `the SDK's client calling a tool answered in ${PARTS} SSE events ${DELAY_MS} ms apart, through the proxy vs straight from the SDK's MCP server, same run`,
      note: 'the machine is shared with other engineers and loaded while this ran (see loadAverage): compare figures of one run only',
      machine: machine(),
      calls: CALLS * ROUNDS,
      parts: PARTS,
      delayMs: DELAY_MS,
      direct: { firstPart: stats(all.direct.firstMs), result: stats(all.direct.totalMs) },
      proxy: { firstPart: stats(all.proxy.firstMs), result: stats(all.proxy.totalMs) },
    };
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
    writeFigures('mcpStream', figures);
    const row = (name: string, f: typeof figures.direct) =>
      `| ${name} | ${ms(f.firstPart.p50Ms)} | ${ms(f.firstPart.p99Ms)} | ${ms(f.result.p50Ms)} | ${ms(f.result.p99Ms)} |`;
    writeSection(
      'mcp-stream',
      `## MCP: a streamed tool answer through the proxy (\`npm run bench:mcp-stream\`, \`bench/mcp-stream.ts\`)

${machine().join('\n')}

The SDK's client (its own process) calls a tool of the SDK's MCP server that answers in ${PARTS} SSE events
(progress notifications) ${DELAY_MS} ms apart, then the result; ${CALLS} calls one after the other per run, ${ROUNDS} runs per path
alternating which goes first. Time to the first part shows the answer is streamed (a proxy holding it would show
the first part as late as the result).

| path | first part p50 | first part p99 | result p50 | result p99 |
|---|---|---|---|---|
${row('straight to the MCP server', figures.direct)}
${row("through Latchkey's proxy", figures.proxy)}

${handNotes('mcp-stream')}`,
    );
  } finally {
    await replica?.stop();
    await mcp.close();
    await cp.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
