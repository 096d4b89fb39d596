/**
 * The proxy bed as the auth-mode and proxy suites use it: REST and proxy clients on its server, and
 * the peers the suite started first (upstreams, fake provider servers) closed after it.
 */
import { type JsonCall, type ProxyCall, proxyClient, restClient, serverOf } from './api-clients.js';
import { startProxyBed, type ProxyBed } from './proxy-bed.js';

export interface ProxyModeBed extends ProxyBed {
  /** REST with the Environment's secret key. */
  rest: JsonCall;
  /** Requests through the proxy for a connection of `integration`. */
  proxyTo(integration: string): ProxyCall;
}

export async function startProxyModeBed<P extends Record<string, { close(): Promise<unknown> }>>(
  prefix: string,
  peers: P = {} as P,
): Promise<ProxyModeBed & P> {
  const h = await startProxyBed(prefix);
  const server = serverOf(h);
  return {
    ...h,
    ...peers,
    rest: restClient(server),
    proxyTo: (integration) => proxyClient(server, integration),
    async close() {
      await h.close();
      for (const peer of Object.values(peers)) await peer.close();
    },
  };
}
