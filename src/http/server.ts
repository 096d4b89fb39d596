import { createServer, type Server } from 'node:http';
import type { AppContext } from '../context/app-context.js';
import { LastFetchedRecorder } from '../connections/last-fetched.js';
import { createRequestListener } from './app.js';

export interface RunningServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Starts the sidecar HTTP server (REST API, Connect UI, OAuth callback, metrics, probes). */
export async function startHttpServer(ctx: AppContext, port = ctx.config.httpPort, host = '0.0.0.0'): Promise<RunningServer> {
  // Fetches record last_fetched_at here; it is written in batches off the request path.
  const lastFetched = new LastFetchedRecorder({ ...ctx, intervalMs: ctx.config.lastFetchedIntervalSeconds * 1000 });
  lastFetched.start();
  const server: Server = createServer(createRequestListener(ctx, { lastFetched }));
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
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await lastFetched.stop();
    },
  };
}
