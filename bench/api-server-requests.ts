/**
 * Requests the kube-apiserver served, by verb and resource, from its own `/metrics`
 * (`apiserver_request_total`): counted by the API server, so the calls of every process
 * (controllers in their own processes included) are in it. Watches and the API server's own
 * requests (leases of kube-controller-manager, say) are counted too; compare phases, or subtract.
 */
import { request, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export type RequestCounts = Map<string, number>;

// The API server's metric names writes by HTTP method (POST, PUT), not by Kubernetes verb.
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY', 'CREATE', 'UPDATE']);

export async function apiServerRequests(kc: KubeConfig): Promise<RequestCounts> {
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
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    // Refused writes (409 conflicts above all) are counted apart: they cost the API server a round trip and mean a retry.
    const refused = labels.code && !labels.code.startsWith('2') ? ` (${labels.code})` : '';
    const key = `${labels.verb} ${labels.subresource ? `${labels.resource}/${labels.subresource}` : labels.resource}${refused}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** What was served between two readings, writes only, most first. */
export function writesBetween(before: RequestCounts, after: RequestCounts): Array<{ call: string; count: number }> {
  return callsBetween(before, after, (verb) => WRITE_VERBS.has(verb));
}

/** Reads of single objects (GET; lists and watches apart) served between two readings, most first. */
export function getsBetween(before: RequestCounts, after: RequestCounts): Array<{ call: string; count: number }> {
  return callsBetween(before, after, (verb) => verb === 'GET');
}

function callsBetween(
  before: RequestCounts,
  after: RequestCounts,
  verbs: (verb: string) => boolean,
): Array<{ call: string; count: number }> {
  const out: Array<{ call: string; count: number }> = [];
  for (const [key, n] of after) {
    if (!verbs(key.split(' ')[0]!)) continue;
    const d = n - (before.get(key) ?? 0);
    if (d > 0) out.push({ call: key, count: d });
  }
  return out.sort((a, b) => b.count - a.count);
}
