/**
 * MCP_OAUTH2 end to end with real peers: a remote MCP server built with the official SDK (McpServer,
 * StreamableHTTPServerTransport, requireBearerAuth, its protected resource metadata) whose
 * authorization server is oidc-provider (dynamic registration, resource indicators). The Provider
 * names only the server URL. An end user connects in Chromium through the Connect UI; Latchkey
 * discovers the authorization server, registers a client (RFC 7591, once per Integration), asks with
 * PKCE S256 and `resource`; then the SDK's own Client calls tools/list and tools through Latchkey's
 * proxy with the Latchkey key; a forced refresh (with `resource`) gives a token the server takes; a
 * reconnect after the server asks for more scope (403 insufficient_scope) asks for the union.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { registrationsSecretName } from '../../src/k8s/client-registrations.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import type { ConnectBed } from '../support/connect-bed.js';
import { startMcpConnectBed, type McpConnectBed } from '../support/mcp-connect-bed.js';
import type { McpServerBed } from '../support/mcp-server-bed.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const PROVIDER = `mcp-flow-${process.pid}`;
const INTEGRATION = 'acme-mcp';

let mcb: McpConnectBed;
let bed: ConnectBed;
let mcp: McpServerBed;

beforeAll(async () => {
  mcb = await startMcpConnectBed(kc, { prefix: 'connect-mcp', provider: PROVIDER, integration: INTEGRATION });
  ({ bed, mcp } = mcb);
});

afterAll(async () => {
  await mcb?.close();
});

const issueSession = (path: string, body: unknown): Promise<string> => mcb.sessionToken(body, path);

/** The end user signs in at the authorization server as `login` and consents; returns the connection ID. */
async function connectInBrowser(sessionToken: string, login: string): Promise<string> {
  const context = await bed.browser.newContext();
  try {
    const { app, popup } = await openConnectPopup(context, bed.app.url, sessionToken);
    await popup.waitForURL((u) => u.href.startsWith(mcp.oidc.issuer), { timeout: 20_000 });
    // Latchkey sent the browser with PKCE S256, the server's URI as `resource`, and the scope the server asked.
    const authorize = new URL(popup.url());
    if (authorize.pathname === '/auth') {
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorize.searchParams.get('resource')).toBe(mcp.url);
    }
    await popup.fill('input[name=login]', login);
    await popup.fill('input[name=password]', 'any-password');
    await popup.click('button[type=submit]');
    await popup.waitForSelector('text=Continue');
    await popup.click('text=Continue');
    return (await waitForEvent(app, 'connect')).connectionId!;
  } finally {
    await context.close();
  }
}

/** The SDK's client, pointed at Latchkey's proxy with the Latchkey key and the connection. */
const mcpClient = (connectionId: string): Promise<Client> => mcb.proxyClient(connectionId);

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text: string }>)[0]!.text;
}

describe('MCP_OAUTH2 through the Connect UI', () => {
  let connectionId: string;

  it('connects from the server URL alone (dynamic registration) and the SDK client calls tools through the proxy', async () => {
    const token = await issueSession('/connect/sessions', { end_user: { id: 'user-7' }, allowed_integrations: [INTEGRATION] });
    connectionId = await connectInBrowser(token, 'alice');

    const stored = await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId));
    const creds = stored.credentials as unknown as Record<string, unknown> & {
      mcp: Record<string, unknown>;
      config_override?: { client_id?: string };
    };
    expect(creds.type).toBe('MCP_OAUTH2');
    expect(creds.refresh_token).toBeTruthy();
    expect(creds.mcp).toMatchObject({
      server_url: mcp.url,
      resource: mcp.url,
      issuer: mcp.oidc.issuer,
      token_endpoint: `${mcp.oidc.issuer}/token`,
      client_registration: 'dynamic',
      scope: 'mcp:tools',
    });
    // One client registered for the Integration, kept in its registrations Secret (owned by the Integration).
    expect(mcp.registrations()).toBe(1);
    const secret = await core.readNamespacedSecret({ namespace: bed.ns.name, name: registrationsSecretName(INTEGRATION) });
    expect(secret.type).toBe('latchkey.dev/client-registrations');
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Integration', name: INTEGRATION });
    const kept = JSON.parse(Buffer.from(Object.values(secret.data!)[0]!, 'base64').toString()) as { clientId: string; issuer: string };
    expect(kept).toMatchObject({ clientId: creds.config_override?.client_id, issuer: mcp.oidc.issuer });

    const client = await mcpClient(connectionId);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(['count', 'echo', 'whoami']);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello through latchkey' } }))).toBe('hello through latchkey');
      expect(textOf(await client.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
    } finally {
      await client.close();
    }
  });

  it('a second end user reuses the registered client', async () => {
    const token = await issueSession('/connect/sessions', { end_user: { id: 'user-8' }, allowed_integrations: [INTEGRATION] });
    const second = await connectInBrowser(token, 'bob');
    expect(mcp.registrations()).toBe(1);
    const client = await mcpClient(second);
    try {
      expect(textOf(await client.callTool({ name: 'whoami', arguments: {} }))).toBe('bob');
    } finally {
      await client.close();
    }
  });

  it('refreshes at the discovered token endpoint for the same resource; the new token works', async () => {
    const before = (await bed.latchkey.ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId))!.credentials.access_token;
    const refreshesBefore = mcp.oidc.refreshCalls();
    const res = await fetch(
      `${bed.latchkey.url}/connections/${encodeURIComponent(connectionId)}?provider_config_key=${INTEGRATION}&force_refresh=true`,
      { headers: { authorization: `Bearer ${bed.env.secretKey}` } },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { credentials: { access_token: string } };
    expect(body.credentials.access_token).not.toBe(before);
    expect(mcp.oidc.refreshCalls()).toBe(refreshesBefore + 1);
    expect(mcp.oidc.tokenCalls.at(-1)).toMatchObject({ grantType: 'refresh_token', status: 200 });
    // The refreshed token is still for the server (oidc-provider issues it for the `resource` asked).
    const at = await mcp.oidc.provider.AccessToken.find(body.credentials.access_token);
    expect((at as unknown as { aud?: string }).aud).toBe(mcp.url);
    const client = await mcpClient(connectionId);
    try {
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after refresh' } }))).toBe('after refresh');
    } finally {
      await client.close();
    }
  });

  it('steps up: after a 403 insufficient_scope, a reconnect asks for the union and the call then passes', async () => {
    mcp.requireScopes(['mcp:tools', 'mcp:admin']);
    try {
      const denied = await fetch(`${bed.latchkey.url}/proxy/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bed.env.secretKey}`,
          'connection-id': connectionId,
          'provider-config-key': INTEGRATION,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(denied.status).toBe(403);
      expect(denied.headers.get('www-authenticate')).toContain('insufficient_scope');

      const token = await issueSession('/connect/sessions/reconnect', { connection_id: connectionId, integration_id: INTEGRATION });
      expect(await connectInBrowser(token, 'alice')).toBe(connectionId);
      const stored = await eventually(async () => {
        const c = await bed.latchkey.ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId);
        return (c?.credentials as { mcp?: { scope?: string } } | undefined)?.mcp?.scope?.includes('mcp:admin') ? c : undefined;
      });
      expect((stored.credentials as unknown as { mcp: { scope: string } }).mcp.scope.split(' ').sort()).toEqual(['mcp:admin', 'mcp:tools']);
      const client = await mcpClient(connectionId);
      try {
        expect(textOf(await client.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
      } finally {
        await client.close();
      }
    } finally {
      mcp.requireScopes([]);
    }
  });

  it('serves the Integration its Client ID Metadata Document', async () => {
    const res = await fetch(`${bed.latchkey.url}/connect/clients/${bed.ns.name}/${INTEGRATION}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      client_id: `${bed.latchkey.url}/connect/clients/${bed.ns.name}/${INTEGRATION}`,
      client_name: 'Acme tools',
      redirect_uris: [`${bed.latchkey.url}/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const missing = await fetch(`${bed.latchkey.url}/connect/clients/${bed.ns.name}/no-such-integration`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('client_not_found');
  });
});
