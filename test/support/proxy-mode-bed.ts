/**
 * The proxy bed as the auth-mode and proxy suites use it: REST and proxy clients on its server, and
 * the peers the suite started first (upstreams, fake provider servers) closed after it.
 */
import {
  connectApiClient,
  type ImportCall,
  importCalls,
  type JsonCall,
  type ProxyCall,
  proxyClient,
  restClient,
  serverOf,
} from './api-clients.js';
import { startProxyBed, type ProxyBed } from './proxy-bed.js';

export interface ProxyModeBed extends ProxyBed {
  /** REST with the Environment's secret key. */
  rest: JsonCall;
  /** POST /connections naming the connection. */
  importConnection: ImportCall;
  /** The deprecated POST /connection naming the connection. */
  importLegacy: ImportCall;
  /** The Connect UI's JSON API with a session of `endUserId` allowed `integrations`. */
  connectApi(endUserId: string, integrations: string[]): JsonCall;
  /** Requests through the proxy for a connection of `integration`. */
  proxyTo(integration: string): ProxyCall;
}

export async function startProxyModeBed<P extends Record<string, { close(): Promise<unknown> }>>(
  prefix: string,
  peers: P = {} as P,
): Promise<ProxyModeBed & P> {
  const h = await startProxyBed(prefix);
  const server = serverOf(h);
  const rest = restClient(server);
  return {
    ...h,
    ...peers,
    rest,
    ...importCalls(rest),
    proxyTo: (integration) => proxyClient(server, integration),
    connectApi: (endUserId, integrations) => connectApiClient(server, { namespace: h.namespace, endUserId, integrations }),
    async close() {
      await h.close();
      for (const peer of Object.values(peers)) await peer.close();
    },
  };
}
