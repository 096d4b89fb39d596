/**
 * MCP_OAUTH2 with the client registered by Client ID Metadata Document, end to end: Latchkey's
 * public URL is https (a TLS front with a test CA before the replica), the MCP server's authorization
 * server is oidc-provider with its clientIdMetadataDocument feature (trusting the test CA, allowed to
 * fetch Latchkey's documents alone on loopback). An end user connects in Chromium through the Connect
 * UI; oidc-provider fetches the Integration's document from Latchkey; no RFC 7591 registration
 * happens; the SDK's client then calls a tool through Latchkey's proxy.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import type { ConnectBed } from '../support/connect-bed.js';
import { startMcpConnectBed, type McpConnectBed } from '../support/mcp-connect-bed.js';
import type { McpServerBed } from '../support/mcp-server-bed.js';
import { appPage } from '../support/servers/app-page.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';

const kc = testKubeConfig();
const PROVIDER = `mcp-cimd-${process.pid}`;
const INTEGRATION = 'acme-mcp-cimd';

let mcb: McpConnectBed;
let bed: ConnectBed;
let mcp: McpServerBed;
let ca: TestCa;
let front: { url: string; close(): Promise<void> };
let app: { url: string; close(): Promise<void> };

/** TLS in front of the replica (what an ingress is in production): TLS ends here, bytes go on to it. */
async function tlsFront(targetPort: number, tls: TestCa): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TlsServer = createTlsServer({ key: tls.serverKey, cert: tls.serverCert }, (client) => {
    const upstream = netConnect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

beforeAll(async () => {
  mcb = await startMcpConnectBed(kc, {
    prefix: 'connect-mcp-cimd',
    provider: PROVIDER,
    integration: INTEGRATION,
    prepare: async (connectBed) => {
      ca = makeTestCa(['127.0.0.1']);
      front = await tlsFront(Number(new URL(connectBed.latchkey.url).port), ca);
      // Latchkey's public URL is the https front: its callback and its metadata documents are served there.
      connectBed.latchkey.ctx.config.publicBaseUrl = front.url;
      app = await appPage(front.url);
      return { clientIdMetadataDocuments: { urlPrefix: `${front.url}/connect/clients/`, ca: ca.caCert } };
    },
  });
  ({ bed, mcp } = mcb);
});

afterAll(async () => {
  await app?.close();
  await front?.close();
  ca?.remove();
  await mcb?.close();
});

describe('MCP_OAUTH2 with a Client ID Metadata Document', () => {
  it('the authorization server fetches the Integration document from Latchkey; the connection works through the proxy', async () => {
    const discovery = (await (await fetch(`${mcp.oidc.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.client_id_metadata_document_supported).toBe(true);

    const sessionToken = await mcb.sessionToken({ end_user: { id: 'user-cimd' }, allowed_integrations: [INTEGRATION] });

    const documentUrl = `${front.url}/connect/clients/${bed.ns.name}/${INTEGRATION}`;
    // The browser trusts the front as it would a real certificate (the test CA is not in Chromium's store).
    const context = await bed.browser.newContext({ ignoreHTTPSErrors: true });
    let connectionId: string;
    try {
      const { app: page, popup } = await openConnectPopup(context, app.url, sessionToken);
      await popup.waitForURL((u) => u.href.startsWith(mcp.oidc.issuer), { timeout: 20_000 });
      await popup.fill('input[name=login]', 'carol');
      await popup.fill('input[name=password]', 'any-password');
      await popup.click('button[type=submit]');
      await popup.waitForSelector('text=Continue');
      await popup.click('text=Continue');
      connectionId = (await waitForEvent(page, 'connect')).connectionId!;
    } finally {
      await context.close();
    }

    // oidc-provider fetched Latchkey's document over https, and it names Latchkey's https callback.
    expect(mcp.oidc.metadataDocumentFetches.length).toBeGreaterThanOrEqual(1);
    expect(mcp.oidc.metadataDocumentFetches[0]).toEqual({
      url: documentUrl,
      status: 200,
      body: {
        client_id: documentUrl,
        client_name: 'Acme tools',
        redirect_uris: [`${front.url}/oauth/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
    expect(mcp.registrations()).toBe(0);

    const stored = await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId));
    const creds = stored.credentials as unknown as Record<string, unknown> & { mcp: Record<string, unknown> };
    expect(creds.type).toBe('MCP_OAUTH2');
    expect(creds.refresh_token).toBeTruthy();
    expect(creds.mcp).toMatchObject({ server_url: mcp.url, issuer: mcp.oidc.issuer, client_registration: 'metadata-document' });
    // The token oidc-provider issued is for that client and the server.
    const at = await mcp.oidc.provider.AccessToken.find(String(creds.access_token));
    expect(at?.clientId).toBe(documentUrl);

    const client = await mcb.proxyClient(connectionId);
    try {
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect((result.content as Array<{ text: string }>)[0]!.text).toBe('carol');
    } finally {
      await client.close();
    }
  });
});
