/**
 * OAuth 2 authorization code flow with PKCE and `state`, through openid-client: the URL the end
 * user's browser is sent to, and the code exchange at the callback.
 */
import {
  Configuration,
  ClientSecretBasic,
  ClientSecretPost,
  allowInsecureRequests,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  calculatePKCECodeChallenge,
  clientCredentialsGrant,
  customFetch,
  randomPKCECodeVerifier,
  type TokenEndpointResponse,
} from 'openid-client';
import type { IntegrationSpec, ProviderSpec } from '../k8s/resources.js';

export interface OAuth2ClientInput {
  provider: ProviderSpec;
  integration: IntegrationSpec;
  clientId: string;
  clientSecret: string;
  /** Values for `${connectionConfig.KEY}` placeholders in the provider's URLs. */
  connectionConfig: Record<string, string>;
  fetch: typeof fetch;
  /** The `iss` the authorization server put on the callback (RFC 9207), when it did. */
  issuer?: string;
}

/** Stored OAuth 2 credentials (the shape the REST API returns). */
export interface OAuth2Credentials {
  type: 'OAUTH2';
  access_token: string;
  refresh_token?: string;
  expires_at?: string;
  raw: Record<string, unknown>;
}

export interface OAuth2ClientCredentials {
  type: 'OAUTH2_CC';
  token: string;
  expires_at?: string;
  client_id: string;
  client_secret: string;
  raw: Record<string, unknown>;
}

/** Fills `${connectionConfig.KEY}` placeholders; a missing key is an error (the URL would be wrong). */
export function fillTemplate(template: string, connectionConfig: Record<string, string>): string {
  return template.replace(/\$\{connectionConfig\.([A-Za-z][A-Za-z0-9_]*)\}/g, (_m, key: string) => {
    const value = connectionConfig[key];
    if (value === undefined || value === '') throw new Error(`connection configuration "${key}" is required`);
    return encodeURIComponent(value);
  });
}

export function oauth2Configuration(input: OAuth2ClientInput): Configuration {
  const { provider } = input;
  if (!provider.authorizationUrl && !provider.tokenUrl) throw new Error('provider has neither authorizationUrl nor tokenUrl');
  const tokenUrl = fillTemplate(provider.tokenUrl ?? '', input.connectionConfig);
  const authorizationUrl = provider.authorizationUrl ? fillTemplate(provider.authorizationUrl, input.connectionConfig) : undefined;
  const issuer = input.issuer ?? new URL(authorizationUrl ?? tokenUrl).origin;
  const auth = provider.tokenRequestAuthMethod === 'basic' ? ClientSecretBasic(input.clientSecret) : ClientSecretPost(input.clientSecret);
  const config = new Configuration(
    { issuer, authorization_endpoint: authorizationUrl, token_endpoint: tokenUrl },
    input.clientId,
    {},
    auth,
  );
  config[customFetch] = (url, options) => input.fetch(url, options as RequestInit);
  // Plain http only for loopback addresses (local development and tests).
  if ([authorizationUrl, tokenUrl].some((u) => u && isLoopbackHttp(u))) allowInsecureRequests(config);
  return config;
}

function isLoopbackHttp(url: string): boolean {
  const u = new URL(url);
  return u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]');
}

function scopesOf(provider: ProviderSpec, integration: IntegrationSpec): string | undefined {
  const scopes = integration.scopes?.length ? integration.scopes : provider.defaultScopes ?? [];
  return scopes.length ? scopes.join(provider.scopeSeparator ?? ' ') : undefined;
}

/** The provider's authorization URL for this flow, and the PKCE verifier to keep for the callback. */
export async function startAuthorization(
  input: OAuth2ClientInput,
  opts: { redirectUri: string; state: string; codeVerifier?: string },
): Promise<{ url: URL; codeVerifier?: string }> {
  const config = oauth2Configuration(input);
  const params: Record<string, string> = {
    ...(input.provider.authorizationParams ?? {}),
    ...(input.integration.authorizationParams ?? {}),
    redirect_uri: opts.redirectUri,
    state: opts.state,
  };
  const scope = scopesOf(input.provider, input.integration);
  if (scope) params.scope = scope;
  let codeVerifier: string | undefined;
  if (!input.provider.disablePkce) {
    codeVerifier = opts.codeVerifier ?? randomPKCECodeVerifier();
    params.code_challenge = await calculatePKCECodeChallenge(codeVerifier);
    params.code_challenge_method = 'S256';
  }
  return { url: buildAuthorizationUrl(config, params), codeVerifier };
}

/** PKCE verifier generated ahead, so it can be sealed into the state before the URL is built. */
export const newCodeVerifier = randomPKCECodeVerifier;

/** Exchanges the code of a callback for tokens (checks state and PKCE). */
export async function finishAuthorization(
  input: OAuth2ClientInput,
  callbackUrl: URL,
  opts: { redirectUri: string; expectedState: string; codeVerifier?: string },
  nowMs: number,
): Promise<OAuth2Credentials> {
  const config = oauth2Configuration(input);
  const tokens = await authorizationCodeGrant(
    config,
    callbackUrl,
    { expectedState: opts.expectedState, pkceCodeVerifier: opts.codeVerifier },
    { redirect_uri: opts.redirectUri, ...(input.provider.tokenParams ?? {}) },
  );
  return {
    type: 'OAUTH2',
    access_token: tokens.access_token,
    ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
    ...(tokens.expires_in !== undefined ? { expires_at: new Date(nowMs + tokens.expires_in * 1000).toISOString() } : {}),
    raw: rawOf(tokens),
  };
}

/** Client credentials grant: used to check an OAUTH2_CC form before it is stored, and its first token. */
export async function clientCredentialsToken(input: OAuth2ClientInput, nowMs: number): Promise<OAuth2ClientCredentials> {
  const config = oauth2Configuration(input);
  const scope = scopesOf(input.provider, input.integration);
  const tokens = await clientCredentialsGrant(config, { ...(input.provider.tokenParams ?? {}), ...(scope ? { scope } : {}) });
  return {
    type: 'OAUTH2_CC',
    token: tokens.access_token,
    ...(tokens.expires_in !== undefined ? { expires_at: new Date(nowMs + tokens.expires_in * 1000).toISOString() } : {}),
    client_id: input.clientId,
    client_secret: input.clientSecret,
    raw: rawOf(tokens),
  };
}

function rawOf(tokens: TokenEndpointResponse): Record<string, unknown> {
  return JSON.parse(JSON.stringify(tokens)) as Record<string, unknown>;
}
