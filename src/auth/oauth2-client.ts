import * as oidc from 'openid-client';
import { readAnswerText } from '../egress/bounded-body.js';
import { fillProviderUrl } from '../catalog/connection-config.js';
import { INTEGRATION_SECRET_KEYS, type IntegrationResource, type ProviderResource } from '../k8s/resources.js';
import type { KubeStore } from '../k8s/store.js';

export interface ClientCredentials {
  clientId: string;
  clientSecret?: string;
}

/**
 * The OAuth client of an Integration: from its `clientSecretRef` Secret, with a connection's
 * overrides (from the deprecated import) taking precedence. Undefined when no client ID is known.
 */
export function resolveClient(
  store: KubeStore,
  namespace: string,
  integration: IntegrationResource,
  override?: { client_id?: string; client_secret?: string },
): ClientCredentials | undefined {
  const ref = integration.spec.clientSecretRef?.name;
  const fromSecret = (key: string) => (ref ? store.readSecretValue(namespace, ref, key) : undefined);
  const clientId = override?.client_id ?? fromSecret(INTEGRATION_SECRET_KEYS.clientId);
  if (!clientId) return undefined;
  return { clientId, clientSecret: override?.client_secret ?? fromSecret(INTEGRATION_SECRET_KEYS.clientSecret) };
}

export interface OAuth2ConfigurationInput {
  provider: ProviderResource;
  client: ClientCredentials;
  /** Fills `${connectionConfig.X}` in the provider's URLs. */
  connectionConfig?: Record<string, unknown>;
  /** `refresh` uses the provider's refreshUrl when it has one. Default `token`. */
  purpose?: 'token' | 'refresh';
  /** The context's guarded fetch (egress rules); required so no call falls back to the global one. */
  fetch: typeof fetch;
  timeoutSeconds?: number;
  /** Receives every successful token response body as the provider sent it (before normalization). */
  onTokenResponse?: (body: Record<string, unknown>) => void;
}

/**
 * openid-client Configuration for (provider, integration client, connection configuration):
 * templated endpoints, the provider's token endpoint client authentication (`basic` or `body`,
 * default body), plain http allowed only for loopback hosts, and a lenient reading of token
 * responses (see {@link normalizeTokenResponse}).
 */
export function oauth2Configuration(input: OAuth2ConfigurationInput): oidc.Configuration {
  const s = input.provider.spec;
  const tokenTemplate = (input.purpose === 'refresh' ? s.refreshUrl : undefined) ?? s.tokenUrl;
  if (!tokenTemplate) throw new Error(`provider ${input.provider.metadata.name} has no token URL`);
  const tokenUrl = fillProviderUrl(s, tokenTemplate, input.connectionConfig);
  let authorizationUrl: string | undefined;
  if (s.authorizationUrl) {
    try {
      authorizationUrl = fillProviderUrl(s, s.authorizationUrl, input.connectionConfig);
    } catch {
      authorizationUrl = undefined; // not needed for token requests
    }
  }
  const method = s.tokenRequestAuthMethod === 'basic' ? 'client_secret_basic' : input.client.clientSecret ? 'client_secret_post' : 'none';
  const auth =
    method === 'client_secret_basic'
      ? oidc.ClientSecretBasic(input.client.clientSecret ?? '')
      : method === 'client_secret_post'
        ? oidc.ClientSecretPost(input.client.clientSecret!)
        : oidc.None();
  const config = new oidc.Configuration(
    {
      issuer: new URL(tokenUrl).origin,
      token_endpoint: tokenUrl,
      ...(authorizationUrl ? { authorization_endpoint: authorizationUrl } : {}),
    },
    input.client.clientId,
    { token_endpoint_auth_method: method },
    auth,
  );
  if ([tokenUrl, authorizationUrl].every((u) => u === undefined || isLoopback(u))) oidc.allowInsecureRequests(config);
  if (input.timeoutSeconds !== undefined) config.timeout = input.timeoutSeconds;
  config[oidc.customFetch] = async (url, options) => {
    const res = await input.fetch(url, options as RequestInit);
    return normalizeTokenResponse(res, input.onTokenResponse);
  };
  return config;
}

/** True when the URL's host is the loopback interface (tests run providers there). */
export function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Real providers bend RFC 6749: no `token_type`, `expires_in` as a string, an `id_token` whose
 * issuer is not the token URL's. Latchkey does not use ID tokens from token requests, so a successful
 * JSON response is rewritten into the strict shape openid-client checks; the untouched body goes
 * to `onBody` (it becomes the credentials' `raw`). Every answer is read here, bounded, once
 * ({@link readAnswerText}: {@link AnswerTooLargeError} past the limit), and handed to openid-client
 * as a new Response, so it never reads a provider's body itself.
 */
async function normalizeTokenResponse(res: Response, onBody?: (body: Record<string, unknown>) => void): Promise<Response> {
  const text = await readAnswerText(res);
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  const answer = (body: string | null) => new Response(body, { status: res.status, statusText: res.statusText, headers });
  const noBody = res.status === 204 || res.status === 304;
  if (!res.ok || !(res.headers.get('content-type') ?? '').includes('json')) return answer(noBody ? null : text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return answer(text);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return answer(text);
  const original = body as Record<string, unknown>;
  onBody?.(original);
  const fixed: Record<string, unknown> = { ...original };
  delete fixed.id_token;
  if (typeof fixed.token_type !== 'string') fixed.token_type = 'bearer';
  if (typeof fixed.expires_in === 'string' && /^\d+$/.test(fixed.expires_in)) fixed.expires_in = Number(fixed.expires_in);
  if (fixed.expires_in !== undefined && typeof fixed.expires_in !== 'number') delete fixed.expires_in;
  return answer(JSON.stringify(fixed));
}
