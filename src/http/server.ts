import { createServer, type Server } from 'node:http';
import type { AppContext } from '../app/context.js';
import { LastFetchedRecorder } from '../connections/last-fetched.js';
import { createRequestListener } from './app.js';

export interface RunningServer {
  port: number;
  url: string;
  /**
   * Stops taking connections. With `drainMs`, requests in flight get that long to finish, answered
   * with `Connection: close` (a client's kept-alive socket is not reused after them); what is still
   * open then is cut. Without it, every connection is cut at once (tests).
   */
  close(drainMs?: number): Promise<void>;
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
    close: async (drainMs = 0) => {
      draining = true;
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
