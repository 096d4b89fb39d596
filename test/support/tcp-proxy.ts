import { createServer, connect, type Socket } from 'node:net';

/**
 * A loopback TCP proxy a test can cut: `cut()` drops every open connection (breaking watches) and
 * `refuse(true)` drops new ones until `refuse(false)`, which looks like an API server that is down;
 * `stall(true)` accepts new ones and never answers, like an API server that hangs.
 */
export async function startTcpProxy(targetHost: string, targetPort: number) {
  const sockets = new Set<Socket>();
  let refusing = false;
  let stalling = false;
  let stalled = 0;
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    if (refusing) {
      client.destroy();
      return;
    }
    if (stalling) {
      stalled++;
      sockets.add(client);
      client.on('error', () => client.destroy());
      return;
    }
    const upstream = connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    port,
    cut() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    refuse(on: boolean) {
      refusing = on;
    },
    stall(on: boolean) {
      stalling = on;
    },
    /** How many connections were accepted (and left hanging) while stalling. */
    stalled: () => stalled,
    /** How many connections clients opened through the proxy so far. */
    accepted: () => accepted,
    async close() {
      this.cut();
      await new Promise((r) => server.close(r));
    },
  };
}
