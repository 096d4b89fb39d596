import * as oidc from 'openid-client';
import { readAnswerText } from '../egress/bounded-body.js';
import { fillProviderUrl } from '../catalog/connection-config.js';
import { INTEGRATION_SECRET_KEYS, type IntegrationResource, type ProviderResource, type TokenResponseSpec } from '../k8s/resources.js';
import { PROVIDER_STATUS_HEADER } from '../oplog/redact.js';
import { parseAnswerBody, readTokenAnswer } from './provider-answers.js';
import { withClientCertificate } from '../egress/fetch.js';
import {
  clientAuthentication,
  encodeTokenRequest,
  requiredCertificate,
  tokenRequestsPresentCertificate,
  type TokenRequestClient,
} from './token-request.js';
import type { ClientCertificateCheck } from '../domain/client-certificate.js';
import type { CatalogStore } from '../k8s/store.js';

export type ClientCredentials = TokenRequestClient;

/**
 * The OAuth client of an Integration: from its `clientSecretRef` Secret, with a connection's
 * overrides (from the deprecated import) taking precedence. Undefined when no client ID is known.
 */
export function resolveClient(
  catalog: CatalogStore,
  namespace: string,
  integration: IntegrationResource,
  override?: { client_id?: string; client_secret?: string },
): ClientCredentials | undefined {
  const ref = integration.spec.clientSecretRef?.name;
  const fromSecret = (key: string) => (ref ? catalog.readSecretValue(namespace, ref, key) : undefined);
  const clientId = override?.client_id ?? fromSecret(INTEGRATION_SECRET_KEYS.clientId);
  if (!clientId) return undefined;
  return {
    clientId,
    clientSecret: override?.client_secret ?? fromSecret(INTEGRATION_SECRET_KEYS.clientSecret),
    ...integrationKeys(catalog, namespace, integration),
  };
}

/**
 * The Integration's own key material beside a client ID: the private key (and its ID) its Secret holds for
 * private_key_jwt client assertions, and the TLS client certificate its `clientCertificateRef` names.
 */
export function integrationKeys(
  catalog: CatalogStore,
  namespace: string,
  integration: IntegrationResource,
): Pick<ClientCredentials, 'privateKey' | 'keyId' | 'certificate'> {
  const certificate = integrationCertificate(catalog, namespace, integration);
  const ref = integration.spec.clientSecretRef?.name;
  const privateKey = ref ? catalog.readSecretValue(namespace, ref, INTEGRATION_SECRET_KEYS.privateKey) : undefined;
  const keyId = ref ? catalog.readSecretValue(namespace, ref, INTEGRATION_SECRET_KEYS.keyId) : undefined;
  return { ...(privateKey ? { privateKey } : {}), ...(keyId ? { keyId } : {}), ...(certificate ? { certificate } : {}) };
}

/**
 * The certificate `clientCertificateRef` names, checked now; undefined when it names none. The wall clock by
 * default: the TLS handshake judges the certificate's validity by it too.
 */
export function integrationCertificate(
  catalog: CatalogStore,
  namespace: string,
  integration: IntegrationResource,
  nowMs = Date.now(),
): ClientCertificateCheck | undefined {
  const name = integration.spec.clientCertificateRef?.name;
  if (!name) return undefined;
  return (
    catalog.readClientCertificate(namespace, name, nowMs) ?? {
      ok: false,
      reason: 'SecretNotFound',
      message: `Secret "${name}" is not there, or lacks the label latchkey.dev/watch=true`,
    }
  );
}

export interface OAuth2ConfigurationInput {
  provider: ProviderResource;
  client: ClientCredentials;
  /** Fills `${connectionConfig.X}` in the provider's URLs. */
  connectionConfig?: Record<string, unknown>;
  /**
   * `refresh` uses the provider's refreshUrl when it has one; `authorize` builds only the authorization
   * request, so the token URL is not filled (it may use a value the callback brings). Default `token`.
   */
  purpose?: 'token' | 'refresh' | 'authorize';
  /** The context's guarded fetch (egress rules); required so no call falls back to the global one. */
  fetch: typeof fetch;
  timeoutSeconds?: number;
  /** Receives every successful token response body as the provider sent it (before normalization). */
  onTokenResponse?: (body: Record<string, unknown>) => void;
  /** The code exchange's `redirect_uri` when it is not the callback URL (eBay's RuName): openid-client always sends the URL. */
  redirectUriName?: string;
}

/**
 * openid-client Configuration for (provider, integration client, connection configuration):
 * templated endpoints, the provider's token request shape (client authentication and body encoding:
 * ./token-request.ts), plain http allowed only for loopback hosts, and a lenient reading of token
 * responses (see {@link normalizeTokenResponse}).
 */
export function oauth2Configuration(input: OAuth2ConfigurationInput): oidc.Configuration {
  const s = input.provider.spec;
  const tokenTemplate = (input.purpose === 'refresh' ? s.refreshUrl : undefined) ?? s.tokenUrl;
  if (!tokenTemplate) throw new Error(`provider ${input.provider.metadata.name} has no token URL`);
  let authorizationUrl: string | undefined;
  if (s.authorizationUrl) {
    try {
      authorizationUrl = fillProviderUrl(s, s.authorizationUrl, input.connectionConfig);
    } catch (err) {
      if (input.purpose === 'authorize') throw err;
      authorizationUrl = undefined; // not needed for token requests
    }
  }
  // The authorization request needs no token URL; it may name a value only the callback brings (Zoho's accounts server).
  const tokenUrl = input.purpose === 'authorize' ? undefined : fillProviderUrl(s, tokenTemplate, input.connectionConfig);
  const issuerUrl = tokenUrl ?? authorizationUrl;
  if (!issuerUrl) throw new Error(`provider ${input.provider.metadata.name} has no authorization URL`);
  const { method, auth } =
    input.purpose === 'authorize' ? { method: 'none', auth: oidc.None() } : clientAuthentication(s, input.client, tokenUrl);
  const certificate =
    input.purpose === 'authorize' ? undefined : requiredCertificate(tokenRequestsPresentCertificate(s), input.client.certificate);
  const config = new oidc.Configuration(
    {
      issuer: new URL(issuerUrl).origin,
      ...(tokenUrl ? { token_endpoint: tokenUrl } : {}),
      ...(authorizationUrl ? { authorization_endpoint: authorizationUrl } : {}),
    },
    input.client.clientId,
    { token_endpoint_auth_method: method },
    auth,
  );
  if ([tokenUrl, authorizationUrl].every((u) => u === undefined || isLoopback(u))) oidc.allowInsecureRequests(config);
  if (input.timeoutSeconds !== undefined) config.timeout = input.timeoutSeconds;
  config[oidc.customFetch] = async (url, options) => {
    if (input.redirectUriName && options.body instanceof URLSearchParams && options.body.has('redirect_uri'))
      options.body.set('redirect_uri', input.redirectUriName);
    const [target, init] = encodeTokenRequest(s, url, options);
    const res = await input.fetch(target, withClientCertificate(init, certificate));
    return normalizeTokenResponse(res, input.provider.spec.tokenResponse, input.onTokenResponse);
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
 * Real providers bend RFC 6749 (see ./provider-answers.ts): any `token_type`, `expires_in` as a string
 * or absent, form-encoded answers, errors in a 200 answer, nested tokens. A successful answer is
 * rewritten into the strict shape openid-client checks (an error in a 200 becomes a 400 RFC 6749 error
 * answer, so it takes the same path as one); the untouched body goes to `onBody` (it becomes the
 * credentials' `raw`). Every answer is read here, bounded, once ({@link readAnswerText}:
 * a `provider_answer_too_large` error past the limit), and handed to openid-client as a new Response, so it
 * never reads a provider's body itself.
 */
async function normalizeTokenResponse(
  res: Response,
  spec: TokenResponseSpec | undefined,
  onBody?: (body: Record<string, unknown>) => void,
): Promise<Response> {
  const text = await readAnswerText(res);
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  const answer = (body: string | null, status = res.status) =>
    new Response(body, { status, statusText: status === res.status ? res.statusText : '', headers });
  const noBody = res.status === 204 || res.status === 304;
  const contentType = res.headers.get('content-type') ?? '';
  const body = noBody ? undefined : parseAnswerBody(text, contentType);
  if (!body) return answer(noBody ? null : text);
  headers.set('content-type', 'application/json');
  // An error answer (4xx) in a form encoding: openid-client reads RFC 6749 errors from JSON only.
  if (!res.ok) return answer(JSON.stringify(body));
  const read = readTokenAnswer(spec, body);
  if (read.kind === 'error') {
    headers.set(PROVIDER_STATUS_HEADER, String(res.status));
    return answer(JSON.stringify({ error: read.error, ...(read.description ? { error_description: read.description } : {}) }), 400);
  }
  onBody?.(read.original);
  return answer(JSON.stringify(read.fields));
}
