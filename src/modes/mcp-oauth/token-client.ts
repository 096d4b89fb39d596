/**
 * The token requests at a discovered authorization server, through openid-client: the code exchange
 * (PKCE verifier, `state`, and the callback's `iss` checked against the issuer when the server
 * advertises RFC 9207, or whenever the callback carries one) and the refresh token grant, both with
 * `resource` (RFC 8707). The endpoints are the ones the flow discovered and sealed (or the connection
 * stored), never a Provider's; every answer comes through the guarded, bounded fetch.
 */
import * as oidc from 'openid-client';
import { isLoopback } from '../../auth/oauth2-client.js';
import { unwrapTooLarge } from '../../auth/oauth2-authorization.js';
import type { DiscoveredAuthorizationServer } from '../../auth/flow-state.js';
import { LatchkeyError } from '../../domain/errors.js';

export interface TokenClient {
  issuer: string;
  tokenEndpoint: string;
  issParameter?: boolean;
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod: DiscoveredAuthorizationServer['tokenEndpointAuthMethod'];
  fetch: typeof fetch;
  timeoutSeconds?: number;
}

export interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_at?: string;
  scope?: string;
  raw: Record<string, unknown>;
}

function configuration(c: TokenClient): { config: oidc.Configuration; answer: () => Record<string, unknown> | undefined } {
  const auth =
    c.tokenEndpointAuthMethod === 'client_secret_basic'
      ? oidc.ClientSecretBasic(c.clientSecret ?? '')
      : c.tokenEndpointAuthMethod === 'client_secret_post'
        ? oidc.ClientSecretPost(c.clientSecret ?? '')
        : oidc.None();
  const config = new oidc.Configuration(
    { issuer: c.issuer, token_endpoint: c.tokenEndpoint, authorization_response_iss_parameter_supported: c.issParameter === true },
    c.clientId,
    { token_endpoint_auth_method: c.tokenEndpointAuthMethod },
    auth,
  );
  if (isLoopback(c.tokenEndpoint)) oidc.allowInsecureRequests(config);
  if (c.timeoutSeconds !== undefined) config.timeout = c.timeoutSeconds;
  let raw: Record<string, unknown> | undefined;
  config[oidc.customFetch] = async (url, options) => {
    const res = await c.fetch(url, options as RequestInit);
    if (!res.ok || !(res.headers.get('content-type') ?? '').includes('json')) return res;
    // Kept as the server sent it (the credentials' `raw`), then handed to openid-client to read.
    const text = await res.text();
    try {
      raw = JSON.parse(text) as Record<string, unknown>;
    } catch {
      raw = undefined;
    }
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(text, { status: res.status, statusText: res.statusText, headers });
  };
  return { config, answer: () => raw };
}

function answerOf(
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
  raw: Record<string, unknown> | undefined,
  now: number,
): TokenAnswer {
  const expiresIn = tokens.expiresIn();
  return {
    access_token: tokens.access_token,
    ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
    ...(expiresIn !== undefined ? { expires_at: new Date(now + expiresIn * 1000).toISOString() } : {}),
    ...(typeof tokens.scope === 'string' ? { scope: tokens.scope } : {}),
    raw: raw ?? (JSON.parse(JSON.stringify(tokens)) as Record<string, unknown>),
  };
}

/** The callback's code for tokens; `callbackUrl`'s query is the authorization response. */
export async function exchangeCode(
  c: TokenClient,
  callback: { query: URLSearchParams; redirectUri: string; expectedState: string; codeVerifier: string; resource: string },
  now: number,
): Promise<TokenAnswer> {
  const iss = callback.query.get('iss');
  // RFC 9207: an `iss` that is there must name the issuer, advertised or not (the SDK's rule too).
  if (iss !== null && iss.replace(/\/$/, '') !== c.issuer.replace(/\/$/, '')) {
    throw new LatchkeyError(
      'upstream',
      'issuer_mismatch',
      'The authorization response came from another authorization server than the one asked (iss).',
    );
  }
  const { config, answer } = configuration(c);
  // openid-client sends the URL it is given, without its query, as the token request's redirect_uri.
  const url = new URL(callback.redirectUri);
  url.search = callback.query.toString();
  const tokens = await unwrapTooLarge(
    oidc.authorizationCodeGrant(
      config,
      url,
      { expectedState: callback.expectedState, pkceCodeVerifier: callback.codeVerifier },
      { redirect_uri: callback.redirectUri, resource: callback.resource },
    ),
  );
  return answerOf(tokens, answer(), now);
}

/** The refresh token grant for the same resource. */
export async function refreshTokens(c: TokenClient, refreshToken: string, resource: string, now: number): Promise<TokenAnswer> {
  const { config, answer } = configuration(c);
  const tokens = await unwrapTooLarge(oidc.refreshTokenGrant(config, refreshToken, { resource }));
  return answerOf(tokens, answer(), now);
}
