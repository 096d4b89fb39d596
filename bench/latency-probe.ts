/**
 * A one-in-flight latency probe, run as its own process by bench/load.ts: reads
 * `{ url, method?, headers?, body?, count }` on stdin, sends the requests one after the other on
 * one keep-alive connection, prints `{ count, errors, p50Ms, p99Ms }` (fractions of a millisecond).
 */
import { Agent } from 'node:http';
import { percentile } from './support.js';
import { timedOk } from './timed-request.js';

interface ProbeInput {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  count: number;
}

async function main(): Promise<void> {
  let raw = '';
  for await (const chunk of process.stdin) raw += (chunk as Buffer).toString('utf8');
  const input = JSON.parse(raw) as ProbeInput;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(input.url);
  const one = () => timedOk({ url, method: input.method, headers: input.headers, body: input.body, agent });
  // Warm-up: connection set up, caches and JIT.
  for (let i = 0; i < Math.min(200, input.count); i++) await one().catch(() => undefined);
  const latencies: number[] = [];
  let errors = 0;
  for (let i = 0; i < input.count; i++) {
    try {
      latencies.push(await one());
    } catch {
      errors++;
    }
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    JSON.stringify({ count: latencies.length, errors, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) }),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack ?? err));
  process.exit(1);
});
