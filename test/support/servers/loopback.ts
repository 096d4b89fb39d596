import type { Server } from 'node:http';

/** A test server listening on 127.0.0.1 (a free port): its origin, and a close that also drops kept-alive connections. */
export interface LoopbackServer {
  port: number;
  origin: string;
  close(): Promise<void>;
}

export async function listenOnLoopback(server: Server): Promise<LoopbackServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
