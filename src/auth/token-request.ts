/**
 * How a Provider's token requests are sent, as its `tokenRequestAuthMethod`, `tokenRequestBodyFormat` and
 * `clientCertificate` say: the client authentication (RFC 6749 §2.3: HTTP Basic or the body; RFC 7523
 * §2.2: a client assertion signed with the Integration's private key; RFC 8705 §2.1: the Integration's
 * TLS client certificate), the body's encoding (a form, or one JSON object for providers whose docs
 * send JSON) and the certificate the connection presents. One strategy for every grant (authorization
 * code, refresh, client credentials), so each grant's parameters stay openid-client's.
 */
import { createPrivateKey, type KeyObject, type webcrypto } from 'node:crypto';
import * as oidc from 'openid-client';
import type { ClientCertificate, ClientCertificateCheck } from '../domain/client-certificate.js';
import { LatchkeyError } from '../domain/errors.js';
import type { ProviderSpec } from '../k8s/resources.js';

/** The client as a token request authenticates it. */
export interface TokenRequestClient {
  clientId: string;
  clientSecret?: string;
  /** private_key_jwt: the PEM private key (PKCS#8, PKCS#1 or SEC1) and its key ID, from the Integration's Secret. */
  privateKey?: string;
  keyId?: string;
  /** The Integration's TLS client certificate as read and checked (`clientCertificateRef`); absent when it names none. */
  certificate?: ClientCertificateCheck;
}

export interface ClientAuthentication {
  /** The RFC 8414 name of the method (openid-client's client metadata). */
  method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'tls_client_auth' | 'none';
  auth: oidc.ClientAuth;
}

/**
 * The client authentication of a Provider's token requests. `tokenUrl` is a private_key_jwt assertion's
 * `aud` (RFC 7523 §3: the token endpoint identifies the authorization server; Okta requires it).
 */
export function clientAuthentication(spec: ProviderSpec, client: TokenRequestClient, tokenUrl: string | undefined): ClientAuthentication {
  switch (spec.tokenRequestAuthMethod) {
    case 'basic':
      return { method: 'client_secret_basic', auth: oidc.ClientSecretBasic(client.clientSecret ?? '') };
    case 'private_key_jwt':
      return { method: 'private_key_jwt', auth: privateKeyJwt(client, tokenUrl) };
    case 'tls_client_auth':
      // RFC 8705 §2.1: client_id in the body; the certificate (requiredCertificate) authenticates.
      return { method: 'tls_client_auth', auth: oidc.TlsClientAuth() };
    case 'none':
      // A public client (RFC 6749 §2.1; PKCE proves the code's origin): client_id alone, never the secret.
      return { method: 'none', auth: oidc.None() };
    default:
      return client.clientSecret
        ? { method: 'client_secret_post', auth: oidc.ClientSecretPost(client.clientSecret) }
        : { method: 'none', auth: oidc.None() };
  }
}

/** Whether the Provider's token requests present the Integration's client certificate. */
export function tokenRequestsPresentCertificate(spec: ProviderSpec): boolean {
  return spec.tokenRequestAuthMethod === 'tls_client_auth' || spec.clientCertificate !== undefined;
}

/**
 * The certificate a request to this Provider presents (`needed`: the Provider requires one there), or
 * undefined when it needs none. Refused clearly (409 `integration_not_configured`: the Integration's
 * state, not the caller's request) when the Integration names no certificate or a Secret that does not hold one.
 */
export function requiredCertificate(needed: boolean, certificate: ClientCertificateCheck | undefined): ClientCertificate | undefined {
  if (!needed) return undefined;
  if (!certificate) {
    throw new LatchkeyError(
      'conflict',
      'integration_not_configured',
      "This provider requires a TLS client certificate (mutual TLS): the Integration's spec.clientCertificateRef must name a " +
        'kubernetes.io/tls Secret (tls.crt, tls.key) labelled latchkey.dev/watch=true.',
    );
  }
  if (!certificate.ok) {
    throw new LatchkeyError(
      'conflict',
      'integration_not_configured',
      `This provider requires a TLS client certificate (mutual TLS), and the Integration's certificate Secret cannot be used: ${certificate.message}.`,
    );
  }
  return certificate.certificate;
}

function privateKeyJwt(client: TokenRequestClient, tokenUrl: string | undefined): oidc.ClientAuth {
  if (!client.privateKey) {
    throw new LatchkeyError(
      'internal',
      'integration_not_configured',
      "This provider authenticates with a signed client assertion (private_key_jwt): the Integration's Secret needs privateKey.",
    );
  }
  // Node's WebCrypto key is the key openid-client signs with (its types name the DOM's CryptoKey).
  const key = signingKey(client.privateKey) as unknown as oidc.CryptoKey;
  return oidc.PrivateKeyJwt(
    { key, ...(client.keyId ? { kid: client.keyId } : {}) },
    {
      [oidc.modifyAssertion]: (_header, payload) => {
        if (tokenUrl) payload.aud = tokenUrl;
      },
    },
  );
}

/** The JWS algorithms of RFC 7518 a key of each kind signs with here: RS256, and ES256/ES384/ES512 by curve. */
const EC_CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** The Integration's PEM key as a WebCrypto signing key; a key that is not one says so without any of its text. */
function signingKey(pem: string): webcrypto.CryptoKey {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new LatchkeyError('internal', 'integration_not_configured', "The Integration's privateKey is not a PEM private key.");
  }
  if (key.asymmetricKeyType === 'rsa') return key.toCryptoKey({ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
  const curve = EC_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''];
  if (key.asymmetricKeyType === 'ec' && curve) return key.toCryptoKey({ name: 'ECDSA', namedCurve: curve }, false, ['sign']);
  throw new LatchkeyError(
    'internal',
    'integration_not_configured',
    "The Integration's privateKey must be an RSA key or an EC key on P-256, P-384 or P-521.",
  );
}

/** Each parameter present under its RFC name moves to the provider's name for it (TikTok's `app_id` for `client_id`). */
export function renameParams(params: URLSearchParams, names: Partial<Record<string, string>> | undefined): void {
  for (const [name, renamed] of Object.entries(names ?? {})) {
    if (!renamed || renamed === name || !params.has(name)) continue;
    const values = params.getAll(name);
    params.delete(name);
    for (const value of values) params.append(renamed, value);
  }
}

/**
 * openid-client's request as the provider takes it: the parameters its endpoint does not take left out
 * (`tokenRequestOmits`) and those it names otherwise renamed (`tokenRequestParamNames`); with
 * `tokenRequestBodyFormat: json`, a form body becomes one JSON object of the same parameters (a parameter
 * sent twice becomes an array); with `query`, the parameters go in the URL's query and the POST has no body
 * (Bullhorn's docs send them so).
 */
export function encodeTokenRequest(spec: ProviderSpec, url: string, options: oidc.CustomFetchOptions): [string, RequestInit] {
  if (options.body instanceof URLSearchParams && (spec.tokenRequestOmits?.length || spec.tokenRequestParamNames)) {
    for (const name of spec.tokenRequestOmits ?? []) options.body.delete(name);
    renameParams(options.body, spec.tokenRequestParamNames);
  }
  const format = spec.tokenRequestBodyFormat;
  if ((format !== 'json' && format !== 'query') || !(options.body instanceof URLSearchParams)) return [url, options as RequestInit];
  const headers = Object.fromEntries(Object.entries(options.headers).filter(([name]) => name.toLowerCase() !== 'content-type'));
  if (format === 'query') {
    const target = new URL(url);
    for (const [name, value] of options.body) target.searchParams.append(name, value);
    return [target.href, { ...options, headers, body: undefined } as RequestInit];
  }
  const body: Record<string, string | string[]> = {};
  for (const [name, value] of options.body) {
    const seen = body[name];
    body[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return [url, { ...options, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) } as RequestInit];
}
