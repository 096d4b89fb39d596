import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from '../platform/log.js';
import type { Readiness } from '../k8s/readiness.js';

export interface HealthServerOptions {
  port: number;
  host?: string;
  registry: Registry;
  logger: Logger;
  /** Ready for traffic when the caches follow the API server (src/k8s/readiness.ts). Followers are ready too: they stand by. */
  readiness: () => Readiness;
  /** Called before /metrics is rendered (to refresh gauges computed from the caches). */
  beforeMetrics?: () => void;
}

export interface RunningHealthServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** The controller's own small HTTP server: /healthz, /readyz and /metrics for the pod's probes and Prometheus. */
export async function startHealthServer(opts: HealthServerOptions): Promise<RunningHealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: { code: 'method_not_allowed', message: 'Only GET' } });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const status = opts.readiness();
      return json(status === 'ready' ? 200 : 503, { status });
    }
    if (path === '/metrics') {
      try {
        opts.beforeMetrics?.();
      } catch (err) {
        opts.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not update gauges');
      }
      opts.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': opts.registry.contentType });
          res.end(text);
        },
        () => json(500, { error: { code: 'internal_error', message: 'metrics unavailable' } }),
      );
      return;
    }
    return json(404, { error: { code: 'route_not_found', message: `No route for ${req.method} ${path}` } });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  opts.logger.info({ port }, 'controller health server listening');
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
