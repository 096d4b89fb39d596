/**
 * One HTTP request timed from a given start, for the benchmarks' load processes (latency-probe.ts,
 * paced-load.ts, timed-client.ts): each runs in its own process, so the time is the caller's view,
 * not the measured server's event loop.
 */
import { request, type Agent } from 'node:http';

export interface TimedRequest {
  url: URL;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  agent: Agent;
  /** process.hrtime.bigint() the time counts from (default: when the request is sent). */
  fromNs?: bigint;
  /** Keep the response's body (default: read and dropped). */
  keepBody?: boolean;
}

export interface TimedResponse {
  status: number;
  ms: number;
  body?: string;
}

export function timedRequest(r: TimedRequest): Promise<TimedResponse> {
  return new Promise((resolve, reject) => {
    const t0 = r.fromNs ?? process.hrtime.bigint();
    const req = request(
      {
        host: r.url.hostname,
        port: r.url.port,
        path: r.url.pathname + r.url.search,
        method: r.method ?? 'GET',
        headers: r.headers,
        agent: r.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        if (r.keepBody) res.on('data', (c: Buffer) => chunks.push(c));
        else res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: Number(process.hrtime.bigint() - t0) / 1e6,
            ...(r.keepBody ? { body: Buffer.concat(chunks).toString('utf8') } : {}),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/** The time of a request answered 200; anything else rejects. */
export async function timedOk(r: TimedRequest): Promise<number> {
  const { status, ms } = await timedRequest(r);
  if (status !== 200) throw new Error(`status ${status}`);
  return ms;
}
