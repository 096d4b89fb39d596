/**
 * MCP_OAUTH2's redirect flow. The start discovers the authorization server from the Provider's MCP
 * server URL (./discovery.ts), picks or registers the client (./registration.ts), and sends the
 * browser to the authorization endpoint with PKCE S256, `resource` (the server's canonical URI) and
 * the scopes; what was discovered travels sealed in the state. The callback exchanges the code at
 * the sealed token endpoint (./token-client.ts). A reconnect asks for the union of the scopes granted
 * before and those asked now (MCP's step-up: a server that answered `insufficient_scope` names more).
 */
import { calculatePKCECodeChallenge } from 'openid-client';
import { sealFlowState, type DiscoveredAuthorizationServer } from '../../auth/flow-state.js';
import { newCodeVerifier } from '../../auth/oauth2-authorization.js';
import { resolveClient } from '../../auth/oauth2-client.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { McpOAuth2Credentials } from '../../domain/credentials.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { RedirectDeps, RedirectFlow } from '../auth-mode.js';
import { atProvider, exchangeAtProvider } from '../shared/provider-failure.js';
import { discover, discoveryRefused } from './discovery.js';
import { chooseClient } from './registration.js';
import { exchangeCode } from './token-client.js';
import { serverUrlOf } from './options.js';

/** Space-separated scopes, each once, in first-seen order. */
export function scopeUnion(...scopes: Array<string | undefined>): string | undefined {
  const all = [...new Set(scopes.flatMap((s) => (s ?? '').split(/\s+/).filter(Boolean)))];
  return all.length ? all.join(' ') : undefined;
}

/** The scopes granted to the connection a reconnect replaces, if any. */
async function grantedBefore(
  deps: RedirectDeps,
  namespace: string,
  integration: string,
  connectionId: string | undefined,
): Promise<string | undefined> {
  if (!connectionId) return undefined;
  const stored = await deps.connections.getConnection(namespace, integration, connectionId);
  const mcp = (stored?.credentials as Partial<McpOAuth2Credentials> | undefined)?.mcp;
  return typeof mcp?.scope === 'string' ? mcp.scope : undefined;
}

export const mcpRedirectFlow: RedirectFlow = {
  async start(deps, input) {
    const { integration, provider, base } = input;
    const connectionConfig = await input.checkedConfig();
    const serverUrl = serverUrlOf(provider.spec);
    const client = resolveClient(deps.catalog, base.namespace, integration);
    input.secrets.push(client?.clientSecret);
    const url = await atProvider(async () => {
      const found = await discover(deps.fetch, serverUrl);
      const as = found.authorizationServer;
      // The application's choice first; else what the server's challenge asked, else what it supports (MCP 2025-11-25).
      const asked = integration.spec.scopes?.length
        ? integration.spec.scopes.join(' ')
        : (found.challengeScope ?? (provider.spec.mcp?.scopes ?? found.protectedResource.scopesSupported)?.join(' '));
      const scope = scopeUnion(await grantedBefore(deps, base.namespace, integration.metadata.name, base.reconnect?.connectionId), asked);
      const chosen = await chooseClient(deps, {
        namespace: base.namespace,
        integration,
        authorizationServer: as,
        redirectUri: base.redirectUri,
        publicBaseUrl: deps.config?.publicBaseUrl ?? '',
        clientName: input.appName,
      });
      input.secrets.push(chosen.clientSecret);
      const discovered: DiscoveredAuthorizationServer = {
        issuer: as.issuer,
        tokenEndpoint: as.tokenEndpoint,
        issParameter: as.issParameterSupported,
        resource: found.resource,
        clientId: chosen.clientId,
        clientRegistration: chosen.registration,
        tokenEndpointAuthMethod: chosen.tokenEndpointAuthMethod,
        ...(scope ? { scope } : {}),
      };
      const codeVerifier = newCodeVerifier();
      const state = sealFlowState(
        { ...base, mode: provider.spec.authMode, connectionConfig, codeVerifier, authorizationServer: discovered },
        input.secretKey,
      );
      const target = new URL(as.authorizationEndpoint);
      const params: Record<string, string> = {
        ...(provider.spec.authorizationParams ?? {}),
        ...(integration.spec.authorizationParams ?? {}),
        response_type: 'code',
        client_id: chosen.clientId,
        redirect_uri: base.redirectUri,
        state,
        code_challenge: await calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        resource: found.resource,
        ...(scope ? { scope } : {}),
      };
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      return target;
    });
    return { url: url.href, to: provider.spec.displayName };
  },

  async complete(deps, input) {
    const { state, integration } = input;
    const as = state.authorizationServer;
    if (!as || !state.codeVerifier)
      throw new LatchkeyError('invalid_input', 'invalid_state', 'This authorization was not started as an MCP authorization.');
    const client = await clientSecretOf(deps, input.state.namespace, integration, as);
    input.secrets.push(client);
    const credentials = await exchangeAtProvider(input.name, input.secrets, async () => {
      try {
        const tokens = await exchangeCode(
          {
            issuer: as.issuer,
            tokenEndpoint: as.tokenEndpoint,
            issParameter: as.issParameter,
            clientId: as.clientId,
            ...(client ? { clientSecret: client } : {}),
            tokenEndpointAuthMethod: as.tokenEndpointAuthMethod,
            fetch: deps.fetch,
          },
          {
            query: input.url.searchParams,
            redirectUri: state.redirectUri,
            expectedState: input.stateValue,
            codeVerifier: state.codeVerifier!,
            resource: as.resource,
          },
          deps.clock.now(),
        );
        return credentialsOf(tokens, as, serverUrlOf(input.provider.spec), client);
      } catch (err) {
        // The server forgot the client it registered: the next attempt registers again (RFC 7591).
        if (as.clientRegistration === 'dynamic' && (err as { error?: unknown }).error === 'invalid_client')
          await deps.registrations?.forget(state.namespace, integration, as.issuer);
        throw err;
      }
    });
    return { credentials, connectionConfig: state.connectionConfig };
  },

  suppliedKeys: () => new Set(),
};

/** The client secret of a registered confidential client (RFC 7591), or of the Integration's own client. */
async function clientSecretOf(
  deps: RedirectDeps,
  namespace: string,
  integration: Parameters<typeof resolveClient>[2],
  as: DiscoveredAuthorizationServer,
): Promise<string | undefined> {
  if (as.clientRegistration === 'pre-registered') return resolveClient(deps.catalog, namespace, integration)?.clientSecret;
  if (as.clientRegistration !== 'dynamic' || as.tokenEndpointAuthMethod === 'none') return undefined;
  const kept = await deps.registrations?.read(namespace, integration, as.issuer);
  if (!kept || kept.clientId !== as.clientId)
    throw discoveryRefused('The client registered at the authorization server is gone; please try again.');
  return kept.clientSecret;
}

function credentialsOf(
  tokens: Awaited<ReturnType<typeof exchangeCode>>,
  as: DiscoveredAuthorizationServer,
  serverUrl: string,
  clientSecret: string | undefined,
): StoredCredentials {
  const credentials: McpOAuth2Credentials = {
    type: 'MCP_OAUTH2',
    access_token: tokens.access_token,
    ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
    ...(tokens.expires_at ? { expires_at: tokens.expires_at } : {}),
    raw: tokens.raw,
    mcp: {
      server_url: serverUrl,
      resource: as.resource,
      issuer: as.issuer,
      token_endpoint: as.tokenEndpoint,
      client_registration: as.clientRegistration,
      ...((tokens.scope ?? as.scope) ? { scope: tokens.scope ?? as.scope } : {}),
      ...(as.tokenEndpointAuthMethod !== 'none' ? { token_endpoint_auth_method: as.tokenEndpointAuthMethod } : {}),
    },
    // A client the flow registered or named (not the Integration's own): what a refresh uses.
    ...(as.clientRegistration !== 'pre-registered'
      ? { config_override: { client_id: as.clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) } }
      : {}),
  };
  return credentials as unknown as StoredCredentials;
}
