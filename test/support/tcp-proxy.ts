import { createServer, connect, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../../dev/cluster.js';

export type TcpProxy = Awaited<ReturnType<typeof startTcpProxy>>;

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
  const stalledOpen = new Set<Socket>();
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
      stalledOpen.add(client);
      client.on('error', () => client.destroy());
      client.on('close', () => stalledOpen.delete(client));
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
    /** Those still open (their client has not given up on them, nor has cut() dropped them), as opaque handles. */
    openStalled: (): ReadonlySet<object> => new Set<object>(stalledOpen),
    /** How many connections clients opened through the proxy so far. */
    accepted: () => accepted,
    async close() {
      this.cut();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * The API server of `kc` behind a loopback TCP proxy the test can cut, refuse or stall, and a KubeConfig
 * (same credentials) that reaches it only through the proxy.
 */
export async function apiServerBehindProxy(kc: KubeConfig): Promise<{ proxy: TcpProxy; kc: KubeConfig }> {
  const target = new URL(kc.getCurrentCluster()!.server);
  const proxy = await startTcpProxy(target.hostname, Number(target.port));
  const viaProxy = new KubeConfig();
  viaProxy.loadFromString(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'p',
      clusters: [{ name: 'p', cluster: { server: `https://127.0.0.1:${proxy.port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: kc.getCurrentUser()!.token } }],
      contexts: [{ name: 'p', context: { cluster: 'p', user: 'u' } }],
    }),
  );
  return { proxy, kc: viaProxy };
}

/** A test namespace and the API server behind a TCP proxy (apiServerBehindProxy), for a file's tests. */
export async function startProxiedApiServerBed(
  kc: KubeConfig,
  prefix: string,
): Promise<{ ns: { name: string }; proxy: TcpProxy; viaProxy: KubeConfig; close(): Promise<void> }> {
  const ns = await createTestNamespace(kc, prefix);
  const { proxy, kc: viaProxy } = await apiServerBehindProxy(kc);
  return {
    ns,
    proxy,
    viaProxy,
    async close() {
      await proxy.close();
      await ns.delete();
    },
  };
}
