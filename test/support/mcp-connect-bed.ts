/**
 * The MCP Connect tests' bed: a Connect bed, a remote MCP server (mcp-server-bed.ts) named by an
 * MCP_OAUTH2 Provider, one Integration of it in the bed's namespace, synced; and the steps those tests
 * share: a Connect session, and the SDK's client calling the server through Latchkey's proxy.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startConnectBed, type ConnectBed } from './connect-bed.js';
import { startMcpServerBed, type McpServerBed, type McpServerBedOptions } from './mcp-server-bed.js';

export interface McpConnectBed {
  bed: ConnectBed;
  mcp: McpServerBed;
  /** A Connect session's token (`path`: /connect/sessions or a reconnect session's). */
  sessionToken(body: unknown, path?: string): Promise<string>;
  /** The SDK's client, as an application uses it: the proxy's URL for the server's path, Latchkey's key and headers. */
  proxyClient(connectionId: string): Promise<Client>;
  close(): Promise<void>;
}

export async function startMcpConnectBed(
  kc: KubeConfig,
  opts: {
    prefix: string;
    provider: string;
    integration: string;
    /** Run after the Connect bed starts, before the MCP server: what the server is started with. */
    prepare?: (bed: ConnectBed) => Promise<McpServerBedOptions>;
  },
): Promise<McpConnectBed> {
  const bed = await startConnectBed(kc, opts.prefix, 'development');
  const mcp = await startMcpServerBed(opts.prepare ? await opts.prepare(bed) : {});
  await applyProvider(kc, opts.provider, {
    displayName: 'Acme MCP',
    authMode: 'MCP_OAUTH2',
    mcp: { serverUrl: mcp.url },
    proxy: { baseUrl: mcp.origin },
  });
  await createIntegration(kc, bed.ns.name, opts.integration, { provider: opts.provider, displayName: 'Acme tools' });
  await bed.synced((store) => store.catalog.getIntegration(bed.ns.name, opts.integration) && store.catalog.getProvider(opts.provider));
  return {
    bed,
    mcp,
    async sessionToken(body, path = '/connect/sessions') {
      const res = await fetch(`${bed.latchkey.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bed.env.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { data: { token: string } }).data.token;
    },
    async proxyClient(connectionId) {
      const transport = new StreamableHTTPClientTransport(new URL(`${bed.latchkey.url}/proxy${new URL(mcp.url).pathname}`), {
        requestInit: {
          headers: { authorization: `Bearer ${bed.env.secretKey}`, 'connection-id': connectionId, 'provider-config-key': opts.integration },
        },
      });
      const client = new Client({ name: 'app-under-test', version: '1.0.0' });
      await client.connect(transport);
      return client;
    },
    async close() {
      await mcp.close();
      await deleteProvider(kc, opts.provider);
      await bed.close();
    },
  };
}
