/**
 * What the proxy tests run against: Latchkey's HTTP server on loopback (real KubeStore on the test
 * control plane), an Environment with its secret key, and real upstream HTTP servers on 127.0.0.1
 * that record every request they get.
 */
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { loadConfig } from '../../src/app/config.js';
import { createContext, type AppContext } from '../../src/app/context.js';
import type { EgressGuard } from '../../src/egress/guard.js';
import type { ConnectionSpec, ProviderSpec } from '../../src/k8s/resources.js';
import { KubeStore, type StoredCredentials } from '../../src/k8s/store.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { LOOPBACK_PEERS } from '../../dev/egress.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

export interface Upstream {
  port: number;
  origin: string;
  requests: RecordedRequest[];
  /** Handler by path prefix (longest match wins); the default echoes the request as JSON. */
  on(prefix: string, handler: UpstreamHandler): void;
  /** Handler that takes over the raw request before its body is read (streaming tests). */
  onRaw(prefix: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

export const echo: UpstreamHandler = (req, res, body) => {
  res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: body.toString('utf8') }));
};

/** An upstream on 127.0.0.1 (or `host`), on a free port (or `port`). */
export async function startUpstream(at: { host?: string; port?: number } = {}): Promise<Upstream> {
  const host = at.host ?? '127.0.0.1';
  const requests: RecordedRequest[] = [];
  const handlers = new Map<string, UpstreamHandler>();
  const raw = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const match = <T>(map: Map<string, T>, url: string) =>
    [...map.keys()]
      .filter((p) => url.startsWith(p))
      .sort((a, b) => b.length - a.length)
      .map((p) => map.get(p)!)[0];
  const server: Server = createServer((req, res) => {
    const rawHandler = match(raw, req.url ?? '');
    if (rawHandler) {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.alloc(0) });
      rawHandler(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void Promise.resolve((match(handlers, req.url ?? '') ?? echo)(req, res, body)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(at.port ?? 0, host, r));
  const { port } = server.address() as { port: number };
  return {
    port,
    origin: `http://${host}:${port}`,
    requests,
    on: (prefix, handler) => void handlers.set(prefix, handler),
    onRaw: (prefix, handler) => void raw.set(prefix, handler),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

export interface ProxyHarness {
  namespace: string;
  env: TestEnvironment;
  store: KubeStore;
  server: RunningServer;
  ctx: AppContext;
  /** Unique suffix for cluster-scoped names. */
  suffix: string;
  addProvider(name: string, spec: ProviderSpec): Promise<string>;
  addIntegration(id: string, provider: string, client?: Record<string, string>): Promise<void>;
  addConnection(spec: Omit<ConnectionSpec, 'id'>, credentials: StoredCredentials): Promise<void>;
  close(): Promise<void>;
}

/** Latchkey's HTTP server as production wires it (createApp: the proxy shares the REST API's token refresher). */
export async function startProxyHarness(prefix: string, opts: { egress?: EgressGuard } = {}): Promise<ProxyHarness> {
  const kc = testKubeConfig();
  const ns = await createTestNamespace(kc, prefix);
  const logger = testLogger();
  const store = new KubeStore(kc, { namespaces: [ns.name], logger });
  await store.start();
  const env = await createEnvironment(kc, ns.name);
  const config = loadConfig({ LATCHKEY_HTTP_PORT: '0', LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS });
  const ctx: AppContext = createContext({ config, logger, kc, store, egress: opts.egress });
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  await eventually(() => store.listEnvironments(ns.name).length > 0 && store.getReferencedSecret(ns.name, `${env.name}-keys`));
  const suffix = randomBytes(3).toString('hex');
  const providers: string[] = [];
  return {
    namespace: ns.name,
    env,
    store,
    server,
    ctx,
    suffix,
    async addProvider(name, spec) {
      const full = `${name}-${suffix}`;
      providers.push(full);
      await applyProvider(kc, full, spec);
      await eventually(() => store.getProvider(full));
      return full;
    },
    async addIntegration(id, provider, client) {
      await createIntegration(kc, ns.name, id, { provider }, client);
      await eventually(() => store.getIntegration(ns.name, id) && (!client || store.getReferencedSecret(ns.name, `${id}-client`)));
    },
    async addConnection(spec, credentials) {
      await store.createConnection({ namespace: ns.name, spec, credentials });
    },
    async close() {
      await server.close();
      await store.stop();
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
  h: ProxyHarness,
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
