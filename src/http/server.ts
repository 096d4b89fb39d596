import { createServer, type Server } from 'node:http';
import type { AppContext } from '../context/app-context.js';
import { LastFetchedRecorder } from '../connections/last-fetched.js';
import { createRequestListener } from './app.js';

export interface RunningServer {
  port: number;
  url: string;
  /**
   * Stops the server. With `lingerMs` it first keeps serving that long, answering with `Connection:
   * close` (each kept-alive client moves to another pod after its next answer) while the Service drops
   * this pod. Then it stops taking connections; with `drainMs`, requests in flight get that long to
   * finish; what is still open then is cut. Without either, every connection is cut at once (tests).
   */
  close(opts?: { lingerMs?: number; drainMs?: number }): Promise<void>;
}

/** Starts the sidecar HTTP server (REST API, Connect UI, OAuth callback, metrics, probes). */
export async function startHttpServer(ctx: AppContext, port = ctx.config.httpPort, host = '0.0.0.0'): Promise<RunningServer> {
  // Fetches record last_fetched_at here; it is written in batches off the request path.
  const lastFetched = new LastFetchedRecorder({ ...ctx, intervalMs: ctx.config.lastFetchedIntervalSeconds * 1000 });
  lastFetched.start();
  const listener = createRequestListener(ctx, { lastFetched });
  let draining = false;
  const server: Server = createServer((req, res) => {
    // A request on a kept-alive socket while the server stops: answered, then the socket closes.
    if (draining) res.shouldKeepAlive = false;
    listener(req, res);
  });
  // Slow clients must not hold sockets forever; proxied responses may stream for longer.
  server.headersTimeout = 30_000;
  server.requestTimeout = 300_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as { port: number }).port;
  ctx.logger.info({ port: actual }, 'HTTP server listening');
  return {
    port: actual,
    url: `http://127.0.0.1:${actual}`,
    // No more fetches, then what they recorded is written (before the caller stops the store).
    close: async ({ lingerMs = 0, drainMs = 0 } = {}) => {
      draining = true;
      if (lingerMs > 0) await new Promise((r) => setTimeout(r, lingerMs));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        const cut = setTimeout(() => server.closeAllConnections(), drainMs);
        server.once('close', () => clearTimeout(cut));
      });
      await lastFetched.stop();
    },
  };
}
