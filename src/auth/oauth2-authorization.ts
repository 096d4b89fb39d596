/**
 * OAuth 2 through openid-client (configured by ./oauth2-client.ts): the authorization code flow with
 * PKCE and `state` (the URL the end user's browser is sent to, the code exchange at the callback), the
 * refresh token grant, and the one client credentials grant (an OAUTH2_CC form's check and its renewal).
 */
import {
  authorizationCodeGrant,
  buildAuthorizationUrl,
  calculatePKCECodeChallenge,
  clientCredentialsGrant,
  genericGrantRequest,
  randomPKCECodeVerifier,
  refreshTokenGrant,
  type Configuration,
  type TokenEndpointResponse,
} from 'openid-client';
import type { OAuth2ClientCredentials, OAuth2Credentials } from '../domain/credentials.js';
import { findAnswerTooLarge } from '../domain/errors.js';
import type { IntegrationResource, ProviderResource } from '../k8s/resources.js';
import { GRANTED_SCOPES_FIELD, grantedScopes } from './granted-scopes.js';
import { oauth2Configuration, type ClientCredentials, type OAuth2ConfigurationInput } from './oauth2-client.js';
import { tokenExpiresAt } from './provider-answers.js';
import { renameParams } from './token-request.js';
import { refuseMissingIntegrationValues } from '../catalog/integration-values.js';

export interface OAuth2FlowInput {
  provider: ProviderResource;
  integration: IntegrationResource;
  client: ClientCredentials;
  /** Values for `${connectionConfig.KEY}` placeholders in the provider's URLs. */
  connectionConfig: Record<string, unknown>;
  fetch: typeof fetch;
  /** A connect session's scopes for this integration (`oauth_scopes_override`): asked for instead of the Integration's. */
  scopes?: string[];
  /** A connect session's extra authorization parameters (`authorization_params`), after the Provider's and the Integration's. */
  authorizationParams?: Record<string, string>;
}

/** The client's configuration, and the last token answer as the provider sent it (before openid-client normalizes it). */
function configurationKeepingAnswer(
  input: Pick<
    OAuth2ConfigurationInput,
    'provider' | 'client' | 'connectionConfig' | 'fetch' | 'timeoutSeconds' | 'purpose' | 'redirectUriName'
  >,
): { config: Configuration; answer: () => Record<string, unknown> | undefined } {
  let raw: Record<string, unknown> | undefined;
  const config = oauth2Configuration({ ...input, onTokenResponse: (body) => (raw = body) });
  return { config, answer: () => raw };
}

/** The scopes asked for: the session's, else the Integration's, else the provider's defaults. */
function requestedScopes(input: OAuth2FlowInput): string[] {
  if (input.scopes?.length) return input.scopes;
  return input.integration.spec.scopes?.length ? input.integration.spec.scopes : (input.provider.spec.defaultScopes ?? []);
}

function scopeParam(input: OAuth2FlowInput): string | undefined {
  const scopes = requestedScopes(input);
  return scopes.length ? scopes.join(input.provider.spec.scopeSeparator ?? ' ') : undefined;
}

/**
 * The `redirect_uri` the provider is sent: the callback URL, or the name it registered for it (eBay's RuName, the
 * Integration's `redirectUriName`), which the authorization and the token request both carry.
 */
function sentRedirectUri(input: Pick<OAuth2FlowInput, 'provider' | 'integration'>, callbackUrl: string): string {
  if (!input.provider.spec.redirectUriIsName) return callbackUrl;
  refuseMissingIntegrationValues(input.provider.spec, input.integration.spec);
  return input.integration.spec.redirectUriName!;
}

/** PKCE verifier made ahead, so it can be sealed into the state before the URL is built. */
export const newCodeVerifier = randomPKCECodeVerifier;

/**
 * The provider's authorization URL: client_id, redirect_uri, state, scopes (the Integration's, else
 * the provider's defaults), PKCE S256 (unless the provider disables it), and the provider's and then
 * the Integration's extra authorization parameters; RFC 6749 parameters the provider does not take left
 * out (`authorizationOmits`), and those it names otherwise renamed (`authorizationParamNames`).
 */
export async function buildAuthorizationRedirect(
  input: OAuth2FlowInput,
  opts: { redirectUri: string; state: string; codeVerifier?: string },
): Promise<URL> {
  refuseMissingIntegrationValues(input.provider.spec, input.integration.spec);
  const config = oauth2Configuration({
    provider: input.provider,
    client: input.client,
    connectionConfig: input.connectionConfig,
    fetch: input.fetch,
    purpose: 'authorize',
  });
  if (!config.serverMetadata().authorization_endpoint) throw new Error('provider has no authorization URL');
  const params: Record<string, string> = {
    ...(input.provider.spec.authorizationParams ?? {}),
    ...(input.integration.spec.authorizationParams ?? {}),
    ...(input.authorizationParams ?? {}),
    redirect_uri: sentRedirectUri(input, opts.redirectUri),
    state: opts.state,
  };
  const scope = scopeParam(input);
  if (scope) params.scope = scope;
  if (opts.codeVerifier && !input.provider.spec.disablePkce) {
    params.code_challenge = await calculatePKCECodeChallenge(opts.codeVerifier);
    params.code_challenge_method = 'S256';
  }
  const url = buildAuthorizationUrl(config, params);
  // openid-client always adds these; a provider whose authorization URL does not take them says so.
  for (const name of input.provider.spec.authorizationOmits ?? []) url.searchParams.delete(name);
  renameParams(url.searchParams, input.provider.spec.authorizationParamNames);
  return url;
}

/**
 * Exchanges the callback's code for tokens; openid-client checks `state` and sends the PKCE verifier.
 * Providers have no configured issuer, so an RFC 9207 `iss` on the callback is only checked when it
 * names the token endpoint's origin; a different one is dropped (the sealed state already binds the
 * flow to one provider).
 */
export async function exchangeAuthorizationCode(
  input: OAuth2FlowInput,
  callbackUrl: URL,
  opts: { redirectUri: string; expectedState: string; codeVerifier?: string },
  nowMs: number,
): Promise<OAuth2Credentials> {
  const { config, answer } = configurationKeepingAnswer({
    ...input,
    ...(input.provider.spec.redirectUriIsName ? { redirectUriName: sentRedirectUri(input, opts.redirectUri) } : {}),
  });
  // openid-client sends the URL it is given, without its query, as the token request's redirect_uri
  // (over any redirect_uri parameter): give it the one sent at authorization (an Environment's custom
  // callback URL reaches Latchkey through a redirect), with the callback's parameters.
  const url = new URL(opts.redirectUri);
  url.search = callbackUrl.search;
  const codeParam = input.provider.spec.callbackCodeParam;
  if (codeParam && codeParam !== 'code') {
    // The provider's name for the code (Amazon Selling Partner's `spapi_oauth_code`); a `code` beside it is not its code.
    url.searchParams.delete('code');
    const code = callbackUrl.searchParams.get(codeParam);
    if (code !== null) url.searchParams.set('code', code);
  }
  if (url.searchParams.has('iss') && url.searchParams.get('iss') !== config.serverMetadata().issuer) url.searchParams.delete('iss');
  const tokens = await unwrapTooLarge(
    authorizationCodeGrant(
      config,
      url,
      { expectedState: opts.expectedState, ...(opts.codeVerifier ? { pkceCodeVerifier: opts.codeVerifier } : {}) },
      { redirect_uri: opts.redirectUri, ...(input.provider.spec.tokenParams ?? {}) },
    ),
  );
  const expiresAt = tokenExpiresAt(input.provider.spec.tokenResponse, answer(), tokens.expires_in, nowMs);
  return {
    type: 'OAUTH2',
    access_token: tokens.access_token,
    ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
    ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
    raw: answer() ?? rawOf(tokens),
    ...scopesField(grantedScopes(answer() ?? rawOf(tokens), requestedScopes(input))),
  };
}

/** The granted scopes as a field of the credentials, or nothing. */
function scopesField(scopes: string[] | undefined): { granted_scopes?: string[] } {
  return scopes ? { [GRANTED_SCOPES_FIELD]: scopes } : {};
}

/**
 * The client credentials grant: the provider's token parameters (its `grant_type` is the grant's own)
 * and the scopes (the Integration's, else the provider's defaults). `current`: stored credentials
 * whose other fields are kept (a renewal). `grant`: another grant the client makes alone in its place
 * (an RFC 7521 assertion grant: RFC 7522's SAML bearer assertion), with its own parameters.
 */
export async function clientCredentialsToken(
  input: OAuth2FlowInput & {
    client: { clientId: string; clientSecret?: string };
    timeoutSeconds?: number;
    grant?: { type: string; params: Record<string, string> };
  },
  nowMs: number,
  current: Record<string, unknown> = {},
): Promise<OAuth2ClientCredentials> {
  const { config, answer } = configurationKeepingAnswer(input);
  const params: Record<string, string> = { ...(input.provider.spec.tokenParams ?? {}), ...(input.grant?.params ?? {}) };
  delete params.grant_type;
  const scope = scopeParam(input);
  if (scope) params.scope = scope;
  const tokens = input.grant ? await genericGrantRequest(config, input.grant.type, params) : await clientCredentialsGrant(config, params);
  const expiresIn = tokens.expiresIn();
  const next: Record<string, unknown> = {
    ...current,
    type: 'OAUTH2_CC',
    token: tokens.access_token,
    client_id: input.client.clientId,
    client_secret: input.client.clientSecret ?? '',
    raw: answer() ?? rawOf(tokens),
    ...scopesField(grantedScopes(answer() ?? rawOf(tokens), requestedScopes(input))),
  };
  const expiresAt = tokenExpiresAt(input.provider.spec.tokenResponse, answer(), expiresIn, nowMs);
  if (expiresAt !== undefined) next.expires_at = expiresAt;
  else delete next.expires_at;
  return next as OAuth2ClientCredentials;
}

/** The refresh token grant; an answer without a new refresh token keeps the old one, and the other stored fields are kept. */
export async function refreshOAuth2Tokens(
  input: Omit<OAuth2FlowInput, 'integration' | 'connectionConfig'> & { connectionConfig?: Record<string, unknown>; timeoutSeconds: number },
  current: OAuth2Credentials,
  nowMs: number,
): Promise<OAuth2Credentials> {
  const { config, answer } = configurationKeepingAnswer({ ...input, purpose: 'refresh' });
  const tokens = await refreshTokenGrant(config, current.refresh_token!);
  const expiresIn = tokens.expiresIn();
  const next: Record<string, unknown> = {
    ...current,
    type: 'OAUTH2',
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token ?? current.refresh_token,
    raw: answer() ?? { ...tokens },
    // A refresh answer's `scope` is the grant as it is now; without one the recorded scopes stay.
    ...scopesField(grantedScopes(answer() ?? { ...tokens })),
  };
  const expiresAt = tokenExpiresAt(input.provider.spec.tokenResponse, answer(), expiresIn, nowMs);
  if (expiresAt !== undefined) next.expires_at = expiresAt;
  else delete next.expires_at;
  return next as OAuth2Credentials;
}

/** openid-client wraps what its fetch threw: an oversized answer comes out as itself (a clear 502), not as "something went wrong". */
export async function unwrapTooLarge<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw findAnswerTooLarge(err) ?? err;
  }
}

function rawOf(tokens: TokenEndpointResponse): Record<string, unknown> {
  return JSON.parse(JSON.stringify(tokens)) as Record<string, unknown>;
}
