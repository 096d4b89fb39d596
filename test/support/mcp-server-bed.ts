/**
 * A remote MCP server as the public ones are built, for tests and benchmarks: the official TypeScript
 * SDK's `McpServer` behind its `StreamableHTTPServerTransport` (stateless: a server and transport per
 * request), guarded by the SDK's `requireBearerAuth` (401 with `resource_metadata`, 403
 * `insufficient_scope`), its protected resource metadata served by the SDK's `mcpAuthMetadataRouter`
 * (RFC 9728), and as authorization server a real `oidc-provider` (dev/peers/oidc-server.ts) with
 * dynamic client registration and resource indicators: its access tokens are for this server's URL
 * alone, and the server checks them in oidc-provider's own store (audience, scopes, expiry).
 *
 * Tools: `echo` (the text back), `whoami` (the end user the token is for), and `count` (n numbered
 * lines, each a logging notification before the result, so an SSE answer arrives in parts).
 */
import { createServer, type Server } from 'node:http';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { startOidcServer, type OidcTestServer, type TestClient } from '../../dev/peers/oidc-server.js';

export interface McpServerBed {
  /** The server's Streamable HTTP endpoint (what a Provider's `mcp.serverUrl` names). */
  url: string;
  origin: string;
  /** Its authorization server. */
  oidc: OidcTestServer;
  /** Bearer tokens the server refused or accepted, by status (never the tokens). */
  calls: Array<{ method: string; status: number }>;
  /** Clients oidc-provider registered dynamically (RFC 7591). */
  registrations(): number;
  /** Scopes the tools require from now on (a 403 `insufficient_scope` naming them otherwise). */
  requireScopes(scopes: string[]): void;
  close(): Promise<void>;
}

export interface McpServerBedOptions {
  /** Scopes the metadata advertises (default `mcp:tools`); tokens may also carry `mcp:admin`, which no metadata names (a step-up asks for it). */
  scopes?: string[];
  /** Pre-registered clients of the authorization server. */
  clients?: TestClient[];
  accessTokenTtl?: number;
  /** The MCP endpoint's path (default `/mcp`). */
  path?: string;
  /** Answer tool calls as JSON instead of an SSE stream (default false: SSE, as the SDK answers by default). */
  jsonResponse?: boolean;
  /** The authorization server accepts Client ID Metadata Documents under this https prefix (see startOidcServer). */
  clientIdMetadataDocuments?: { urlPrefix: string; ca: string };
}

export async function startMcpServerBed(opts: McpServerBedOptions = {}): Promise<McpServerBed> {
  const scopes = opts.scopes ?? ['mcp:tools'];
  const http: Server = createServer();
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  const url = `${origin}${opts.path ?? '/mcp'}`;
  const oidc = await startOidcServer({
    clients: opts.clients ?? [],
    dynamicRegistration: true,
    resourceIndicators: { resources: [url], scopes: [...scopes, 'mcp:admin'] },
    ...(opts.accessTokenTtl ? { accessTokenTtl: opts.accessTokenTtl } : {}),
    ...(opts.clientIdMetadataDocuments ? { clientIdMetadataDocuments: opts.clientIdMetadataDocuments } : {}),
  });
  let registered = 0;
  oidc.provider.on('registration_create.success', () => registered++);
  const discovery = (await (await fetch(`${oidc.issuer}/.well-known/openid-configuration`)).json()) as OAuthMetadata;

  let required: string[] = [];
  const calls: McpServerBed['calls'] = [];
  const verifier = {
    async verifyAccessToken(token: string) {
      const at = await oidc.provider.AccessToken.find(token);
      if (!at) throw new InvalidTokenError('The access token is not valid');
      const aud = (at as unknown as { aud?: string }).aud;
      return {
        token,
        clientId: at.clientId!,
        scopes: (at.scope ?? '').split(' ').filter(Boolean),
        expiresAt: at.exp,
        ...(aud ? { resource: new URL(aud) } : {}),
        extra: { account: at.accountId },
      };
    },
  };

  const app = express();
  app.use(
    mcpAuthMetadataRouter({
      oauthMetadata: discovery,
      resourceServerUrl: new URL(url),
      scopesSupported: scopes,
      resourceName: 'Test MCP server',
    }),
  );
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(url));
  app.all(
    opts.path ?? '/mcp',
    (req, res, next) => {
      res.on('finish', () => calls.push({ method: req.method, status: res.statusCode }));
      // The scopes required now (a step-up test raises them).
      requireBearerAuth({ verifier, resourceMetadataUrl, expectedResource: new URL(url), requiredScopes: required })(req, res, next);
    },
    express.json(),
    async (req, res) => {
      const account = String((req.auth?.extra as { account?: string } | undefined)?.account ?? '');
      const server = new McpServer({ name: 'latchkey-test-mcp', version: '1.0.0' }, { capabilities: { logging: {} } });
      server.registerTool('echo', { description: 'Says the text back', inputSchema: { text: z.string() } }, ({ text }) => ({
        content: [{ type: 'text', text }],
      }));
      server.registerTool('whoami', { description: 'The end user the token is for' }, () => ({
        content: [{ type: 'text', text: account }],
      }));
      server.registerTool(
        'count',
        {
          description: 'n lines, one logging notification each, then the result',
          inputSchema: { n: z.number().int().min(1).max(1000), delayMs: z.number().int().min(0).max(1000).optional() },
        },
        async ({ n, delayMs }, extra) => {
          for (let i = 1; i <= n; i++) {
            await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `line ${i}` } });
            if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
          }
          return { content: [{ type: 'text', text: `counted to ${n}` }] };
        },
      );
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: opts.jsonResponse ?? false,
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  http.on('request', app);

  return {
    url,
    origin,
    oidc,
    calls,
    registrations: () => registered,
    requireScopes(s) {
      required = s;
    },
    async close() {
      await oidc.close();
      await new Promise<void>((r) => {
        http.close(() => r());
        http.closeAllConnections();
      });
    },
  };
}
