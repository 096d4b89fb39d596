/**
 * An open-loop load generator at a fixed rate, run as its own process by bench/load.ts: reads
 * `{ url, paths?, headers?, rate, seconds, connections }` on stdin, starts request i at `i / rate` seconds
 * whatever the answers before it did, on up to `connections` keep-alive connections, and prints
 * `{ count, errors, requestsPerSecond, p50Ms, p99Ms, p999Ms, maxMs }`.
 *
 * Why not autocannon's `-R`: autocannon lets each connection send its share of a second's requests
 * back to back and then pause until the next second (lib/httpClient.js, `reqsMadeThisSecond`), so
 * "1,000 requests/s" there is a burst at full speed of 16 connections for the first tens of
 * milliseconds of every second, then silence. This spreads them over the second, as clients at
 * that rate would. Each latency runs from the request's scheduled start, not from when it was
 * sent: a stall of the server (or of this process) delays every request scheduled during it, and
 * each counts (no coordinated omission).
 */
import { Agent } from 'node:http';
import { percentile } from './support.js';
import { timedOk } from './timed-request.js';

interface PacedInput {
  url: string;
  /**
   * Paths (with their query) on `url`'s host, taken in order, one per request, wrapping at the end
   * (warm-up first, then the measured requests): e.g. a different connection for every request.
   */
  paths?: string[];
  headers?: Record<string, string>;
  rate: number;
  seconds: number;
  connections: number;
  /** Seconds at the rate before the measured ones (connections opened, JIT warm). */
  warmupSeconds?: number;
}

async function main(): Promise<void> {
  let raw = '';
  for await (const chunk of process.stdin) raw += (chunk as Buffer).toString('utf8');
  const input = JSON.parse(raw) as PacedInput;
  const agent = new Agent({ keepAlive: true, maxSockets: input.connections });
  const url = new URL(input.url);
  const urls = input.paths?.length ? input.paths.map((p) => new URL(p, url)) : [url];
  let next = 0;
  const send = (scheduledNs: bigint) => timedOk({ url: urls[next++ % urls.length]!, headers: input.headers, agent, fromNs: scheduledNs });

  const run = async (seconds: number) => {
    const latencies: number[] = [];
    let errors = 0;
    const total = Math.round(seconds * input.rate);
    const intervalNs = BigInt(Math.round(1e9 / input.rate));
    const start = process.hrtime.bigint();
    const pending: Array<Promise<void>> = [];
    let sent = 0;
    await new Promise<void>((done) => {
      const tick = () => {
        const now = process.hrtime.bigint();
        // Every request whose start time has come, each timed from its own start time.
        while (sent < total && start + BigInt(sent) * intervalNs <= now) {
          const scheduled = start + BigInt(sent) * intervalNs;
          pending.push(
            send(scheduled).then(
              (ms) => void latencies.push(ms),
              () => void errors++,
            ),
          );
          sent++;
        }
        if (sent >= total) {
          clearInterval(timer);
          done();
        }
      };
      const timer = setInterval(tick, 1);
    });
    await Promise.all(pending);
    const elapsedS = Number(process.hrtime.bigint() - start) / 1e9;
    return { latencies, errors, elapsedS };
  };

  if (input.warmupSeconds) await run(input.warmupSeconds);
  const { latencies, errors, elapsedS } = await run(input.seconds);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  process.stdout.write(
    JSON.stringify({
      count: latencies.length,
      errors,
      requestsPerSecond: Math.round(latencies.length / elapsedS),
      p50Ms: round(percentile(latencies, 0.5)),
      p99Ms: round(percentile(latencies, 0.99)),
      p999Ms: round(percentile(latencies, 0.999)),
      maxMs: round(latencies[latencies.length - 1] ?? 0),
    }),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack ?? err));
  process.exit(1);
});
