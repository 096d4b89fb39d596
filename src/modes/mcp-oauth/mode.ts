/**
 * MCP_OAUTH2: an end user's grant at a remote MCP server, as MCP's authorization spec describes
 * (docs/mcp.md). The Provider names only the server URL (`spec.mcp.serverUrl`); the authorization
 * server, the client and the scopes are discovered at each Connect start (./redirect-flow.ts). Tokens
 * are renewed with the refresh token grant at the token endpoint the connection's flow discovered, for
 * the same resource (RFC 8707), and sent as a bearer token to the server alone (the Provider's proxy
 * base URL must be the server's origin).
 */
import { z } from 'zod';
import { resolveClient } from '../../auth/oauth2-client.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import type { RefreshStrategy } from '../../auth/refresh/strategies.js';
import type { McpOAuth2Credentials } from '../../domain/credentials.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { AuthModeModule } from '../auth-mode.js';
import { grantImportFields, grantShownFields, rawAnswer } from '../shared/credential-schemas.js';
import { compact, flatFields, isoOrUndefined, isoTimestamp } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { mcpOptions } from './options.js';
import { mcpRedirectFlow } from './redirect-flow.js';
import { refreshTokens } from './token-client.js';

/** The refresh token grant at the discovered token endpoint; an answer without a new refresh token keeps the old one. */
const refresh: RefreshStrategy = {
  canRefresh: (c) =>
    typeof c.refresh_token === 'string' &&
    c.refresh_token.length > 0 &&
    typeof (c as Partial<McpOAuth2Credentials>).mcp?.token_endpoint === 'string',
  async refresh(input) {
    const current = input.connection.credentials as unknown as McpOAuth2Credentials;
    const mcp = current.mcp!;
    const client =
      mcp.client_registration === 'pre-registered'
        ? resolveClient(input.catalog, input.namespace, input.integration)
        : current.config_override?.client_id
          ? { clientId: current.config_override.client_id, clientSecret: current.config_override.client_secret }
          : undefined;
    if (!client) {
      throw new RefreshError(`integration ${input.integration.metadata.name} has no OAuth client ID (clientSecretRef)`, {
        permanent: true,
        code: 'integration_misconfigured',
      });
    }
    const next = await refreshTokens(
      {
        issuer: mcp.issuer,
        tokenEndpoint: mcp.token_endpoint,
        clientId: client.clientId,
        ...(client.clientSecret ? { clientSecret: client.clientSecret } : {}),
        tokenEndpointAuthMethod: mcp.token_endpoint_auth_method ?? 'none',
        fetch: input.fetch,
        timeoutSeconds: input.timeoutSeconds,
      },
      current.refresh_token!,
      mcp.resource,
      input.now,
    );
    const updated: Record<string, unknown> = {
      ...current,
      access_token: next.access_token,
      refresh_token: next.refresh_token ?? current.refresh_token,
      raw: next.raw,
      mcp: { ...mcp, ...(next.scope ? { scope: next.scope } : {}) },
    };
    if (next.expires_at) updated.expires_at = next.expires_at;
    else delete updated.expires_at;
    return updated as unknown as StoredCredentials;
  },
};

export const mcpOAuth2: AuthModeModule = {
  mode: 'MCP_OAUTH2',
  credentialSchemas: {
    // Tokens for a remote MCP server obtained elsewhere (not renewed: the authorization server was not discovered here).
    import: z.strictObject({
      type: z.literal('MCP_OAUTH2'),
      ...grantImportFields,
    }),
    shown: z.object({
      type: z.literal('MCP_OAUTH2'),
      ...grantShownFields,
      raw: rawAnswer.optional(),
      mcp: z
        .object({
          server_url: z.string().describe('The MCP server'),
          resource: z.string().describe("The resource (RFC 8707) the tokens are for: the server's canonical URI"),
          issuer: z.string().describe('The authorization server the server named'),
          token_endpoint: z.string(),
          client_registration: z.enum(['pre-registered', 'metadata-document', 'dynamic']),
          scope: z.string().optional().describe('The scopes granted'),
        })
        .optional()
        .describe('What was discovered from the server URL (absent on imported tokens)'),
    }),
  },
  fromImport(_deps, { given }) {
    return Promise.resolve({
      credentials: compact({ ...given, expires_at: isoOrUndefined(given.expires_at), raw: compact({ ...given, type: undefined }) }),
    });
  },
  fromFlatImport(deps, input) {
    const body = flatFields(input, ['access_token', 'refresh_token', 'expires_at', 'expires_in'], ['access_token']);
    const expiresAt =
      body.expires_at !== undefined
        ? isoTimestamp(new Date(body.expires_at), 'expires_at')
        : body.expires_in !== undefined
          ? isoTimestamp(new Date(deps.clock.now() + body.expires_in * 1000), 'expires_in')
          : undefined;
    return Promise.resolve(
      compact({
        type: 'MCP_OAUTH2',
        access_token: body.access_token!,
        refresh_token: body.refresh_token,
        expires_at: expiresAt,
        raw: compact({ access_token: body.access_token, refresh_token: body.refresh_token }),
      }),
    );
  },
  connect: { flow: 'redirect', ...mcpRedirectFlow },
  refresh,
  proxy: bearerInjection('access_token'),
  providerProblems: (spec) => {
    const server = spec.mcp?.serverUrl;
    if (!server || !URL.canParse(server)) return ['MCP_OAUTH2 providers need spec.mcp.serverUrl (the MCP server)'];
    const base = spec.proxy?.baseUrl;
    // The tokens are for this server alone (RFC 8707): the proxy may send them nowhere else.
    if (base && (!URL.canParse(base) || new URL(base).origin !== new URL(server).origin))
      return ['MCP_OAUTH2 providers send their tokens to the MCP server alone: spec.proxy.baseUrl must be at its origin'];
    return [];
  },
  integration: {
    // A pre-registered client is optional: without one a client is registered (metadata document or RFC 7591).
    clientBeforeConnect: false,
    shownAs: 'OAUTH2',
    accepts: ['OAUTH2'],
  },
  options: mcpOptions,
};
