/**
 * Requests the kube-apiserver served, by verb and resource, from its own `/metrics`
 * (`apiserver_request_total`): counted by the API server, so the calls of every process
 * (controllers in their own processes included) are in it. Watches and the API server's own
 * requests (leases of kube-controller-manager, say) are counted too; compare phases, or subtract.
 */
import { request, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export type RequestCounts = Map<string, number>;

/**
 * One reading of the API server's request metrics: requests served by call (`apiserver_request_total`,
 * refusals apart), and the time it spent serving them (`apiserver_request_duration_seconds`: sum and
 * count, by call, refusals included; its own time, not the client's round trip).
 */
export interface ApiServerReading {
  counts: RequestCounts;
  seconds: Map<string, { sum: number; count: number }>;
}

// The API server's metric names writes by HTTP method (POST, PUT), not by Kubernetes verb.
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY', 'CREATE', 'UPDATE']);

export async function apiServerRequests(kc: KubeConfig): Promise<ApiServerReading> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const opts: RequestOptions = {
    hostname: server.hostname,
    port: server.port,
    path: '/metrics',
    method: 'GET',
  };
  await kc.applyToHTTPSOptions(opts);
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET /metrics: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
  const counts: RequestCounts = new Map();
  const seconds: ApiServerReading['seconds'] = new Map();
  const labelsOf = (line: string) => Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const callOf = (labels: Record<string, string | undefined>) =>
    `${labels.verb} ${labels.subresource ? `${labels.resource}/${labels.subresource}` : labels.resource}`;
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const duration = /^apiserver_request_duration_seconds_(sum|count)\{/.exec(line);
    if (duration) {
      const call = callOf(labelsOf(line));
      const entry = seconds.get(call) ?? { sum: 0, count: 0 };
      entry[duration[1] as 'sum' | 'count'] += value;
      seconds.set(call, entry);
      continue;
    }
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = labelsOf(line);
    // Refused writes (409 conflicts above all) are counted apart: they cost the API server a round trip and mean a retry.
    const refused = labels.code && !labels.code.startsWith('2') ? ` (${labels.code})` : '';
    const key = `${callOf(labels)}${refused}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return { counts, seconds };
}

/** The API server's mean time per request (ms) between two readings, for calls served at least `min` times, most served first. */
export function meanMsBetween(
  before: ApiServerReading,
  after: ApiServerReading,
  min = 1,
): Array<{ call: string; count: number; meanMs: number }> {
  const out: Array<{ call: string; count: number; meanMs: number }> = [];
  for (const [call, a] of after.seconds) {
    const b = before.seconds.get(call) ?? { sum: 0, count: 0 };
    const count = a.count - b.count;
    if (count >= min && !call.startsWith('WATCH')) out.push({ call, count, meanMs: ((a.sum - b.sum) / count) * 1000 });
  }
  return out.sort((x, y) => y.count - x.count);
}

/** What was served between two readings, writes only, most first. */
export function writesBetween(before: ApiServerReading, after: ApiServerReading): Array<{ call: string; count: number }> {
  return callsBetween(before, after, (verb) => WRITE_VERBS.has(verb));
}

/** Reads of single objects (GET; lists and watches apart) served between two readings, most first. */
export function getsBetween(before: ApiServerReading, after: ApiServerReading): Array<{ call: string; count: number }> {
  return callsBetween(before, after, (verb) => verb === 'GET');
}

function callsBetween(
  before: ApiServerReading,
  after: ApiServerReading,
  verbs: (verb: string) => boolean,
): Array<{ call: string; count: number }> {
  const out: Array<{ call: string; count: number }> = [];
  for (const [key, n] of after.counts) {
    if (!verbs(key.split(' ')[0]!)) continue;
    const d = n - (before.counts.get(key) ?? 0);
    if (d > 0) out.push({ call: key, count: d });
  }
  return out.sort((a, b) => b.count - a.count);
}
