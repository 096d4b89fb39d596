/**
 * What the proxy tests run against: a Latchkey server replica on loopback (real KubeStore on the test
 * control plane), an Environment with its secret key, and helpers to add providers, integrations and
 * connections; upstreams come from servers/upstream.ts.
 */
import type { EgressGuard } from '../../src/egress/guard.js';
import type { Logger } from '../../src/platform/log.js';
import { request, type IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../src/context/app-context.js';
import type { RunningServer } from '../../src/http/server.js';
import type { ConnectionSpec, ProviderSpec } from '../../src/k8s/resources.js';
import type { StoredCredentials, StoreParts } from '../../src/k8s/store.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica } from './replica.js';

export interface ProxyBed {
  namespace: string;
  env: TestEnvironment;
  store: StoreParts;
  server: RunningServer;
  ctx: AppContext;
  /** Unique suffix for cluster-scoped names. */
  suffix: string;
  addProvider(name: string, spec: ProviderSpec): Promise<string>;
  addIntegration(id: string, provider: string, client?: Record<string, string>): Promise<void>;
  addConnection(spec: Omit<ConnectionSpec, 'id'>, credentials: StoredCredentials): Promise<void>;
  close(): Promise<void>;
}

/** A namespace with an Environment and Latchkey's HTTP server as production wires it (the proxy shares the REST API's token refresher). */
export async function startProxyBed(prefix: string, opts: { egress?: EgressGuard; logger?: Logger } = {}): Promise<ProxyBed> {
  const kc = testKubeConfig();
  const ns = await createTestNamespace(kc, prefix);
  const env = await createEnvironment(kc, ns.name);
  const replica = await startReplica(kc, { namespaces: [ns.name], egress: opts.egress, logger: opts.logger });
  const { ctx } = replica;
  const store = ctx;
  await eventually(
    () => store.catalog.listEnvironments(ns.name).length > 0 && store.catalog.getReferencedSecret(ns.name, `${env.name}-keys`),
  );
  const suffix = randomBytes(3).toString('hex');
  const providers: string[] = [];
  return {
    namespace: ns.name,
    env,
    store,
    server: replica.server!,
    ctx,
    suffix,
    async addProvider(name, spec) {
      const full = `${name}-${suffix}`;
      providers.push(full);
      await applyProvider(kc, full, spec);
      await eventually(() => store.catalog.getProvider(full));
      return full;
    },
    async addIntegration(id, provider, client) {
      await createIntegration(kc, ns.name, id, { provider }, client);
      await eventually(
        () => store.catalog.getIntegration(ns.name, id) && (!client || store.catalog.getReferencedSecret(ns.name, `${id}-client`)),
      );
    },
    async addConnection(spec, credentials) {
      await store.connections.createConnection({ namespace: ns.name, spec, credentials });
    },
    async close() {
      await replica.stop();
      await Promise.all(providers.map((p) => deleteProvider(kc, p)));
      await ns.delete();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A request to the proxy with node:http, so the path goes out byte-for-byte as written (no client
 * normalisation of "..") and the response body is not decompressed.
 */
export function rawRequest(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

export function proxyHeaders(
  h: ProxyBed,
  integration: string,
  connectionId: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    authorization: `Bearer ${h.env.secretKey}`,
    'connection-id': connectionId,
    'provider-config-key': integration,
    ...extra,
  };
}
