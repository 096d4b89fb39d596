/**
 * OAuth 1.0a (RFC 5849): HMAC-SHA1 request signing and the three-legged flow (temporary
 * credentials, resource owner authorization, token credentials). `signRequest` is also what the
 * proxy uses to sign calls made with an OAUTH1 connection.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { LatchkeyError } from '../../domain/errors.js';
import { readAnswerForm } from '../../egress/bounded-body.js';

export interface OAuth1SignInput {
  method: string;
  /** Full URL; its query parameters are signed. */
  url: string;
  consumerKey: string;
  consumerSecret: string;
  token?: string;
  tokenSecret?: string;
  /** Extra protocol parameters, e.g. oauth_callback or oauth_verifier. */
  oauthParams?: Record<string, string>;
  /** Parameters of an application/x-www-form-urlencoded body (they are signed too). */
  bodyParams?: Record<string, string> | URLSearchParams;
  realm?: string;
  /** HMAC-SHA1 (RFC 5849) unless set; NetSuite's token-based authentication requires HMAC-SHA256. */
  signatureMethod?: 'HMAC-SHA1' | 'HMAC-SHA256';
  /** For tests: fixed nonce and timestamp. */
  nonce?: string;
  timestamp?: number;
}

/** RFC 3986 percent-encoding, as RFC 5849 section 3.6 requires. */
export function percentEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Base string URI (RFC 5849 3.4.1.2): lower-case scheme and host, default port dropped, no query. */
function baseStringUri(url: URL): string {
  const defaultPort = (url.protocol === 'http:' && url.port === '80') || (url.protocol === 'https:' && url.port === '443');
  const port = url.port && !defaultPort ? `:${url.port}` : '';
  return `${url.protocol.toLowerCase()}//${url.hostname.toLowerCase()}${port}${url.pathname}`;
}

/** The signature base string (exported for tests against RFC 5849's example). */
export function signatureBaseString(method: string, url: string, params: Array<[string, string]>): string {
  const u = new URL(url);
  const all: Array<[string, string]> = [...u.searchParams.entries(), ...params];
  const normalized = all
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as [string, string])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return [method.toUpperCase(), percentEncode(baseStringUri(u)), percentEncode(normalized)].join('&');
}

/** Signs a request with HMAC-SHA1 (or `signatureMethod`) and returns the `Authorization: OAuth ...` header value. */
export function signRequest(input: OAuth1SignInput): string {
  const oauth: Record<string, string> = {
    oauth_consumer_key: input.consumerKey,
    oauth_nonce: input.nonce ?? randomBytes(18).toString('base64url').replace(/[-_]/g, 'x').slice(0, 24),
    oauth_signature_method: input.signatureMethod ?? 'HMAC-SHA1',
    oauth_timestamp: String(input.timestamp ?? Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
    ...(input.token ? { oauth_token: input.token } : {}),
    ...(input.oauthParams ?? {}),
  };
  const body = input.bodyParams instanceof URLSearchParams ? [...input.bodyParams.entries()] : Object.entries(input.bodyParams ?? {});
  const base = signatureBaseString(input.method, input.url, [...Object.entries(oauth), ...body]);
  const key = `${percentEncode(input.consumerSecret)}&${percentEncode(input.tokenSecret ?? '')}`;
  const hash = input.signatureMethod === 'HMAC-SHA256' ? 'sha256' : 'sha1';
  oauth.oauth_signature = createHmac(hash, key).update(base).digest('base64');
  const parts = Object.entries(oauth).map(([k, v]) => `${percentEncode(k)}="${percentEncode(v)}"`);
  if (input.realm !== undefined) parts.unshift(`realm="${percentEncode(input.realm)}"`);
  return `OAuth ${parts.join(', ')}`;
}

export interface OAuth1Consumer {
  consumerKey: string;
  consumerSecret: string;
  fetch: typeof fetch;
}

/** The code of a step of the OAuth 1.0a handshake the provider refused or garbled (502: its failure, not the caller's). */
export const OAUTH1_FAILED = 'oauth1_failed';
export const oauth1Failed = (message: string) => new LatchkeyError('upstream', OAUTH1_FAILED, message);

async function postSigned(
  consumer: OAuth1Consumer,
  url: string,
  sign: Omit<OAuth1SignInput, 'method' | 'url' | 'consumerKey' | 'consumerSecret'>,
): Promise<URLSearchParams> {
  const authorization = signRequest({
    ...sign,
    method: 'POST',
    url,
    consumerKey: consumer.consumerKey,
    consumerSecret: consumer.consumerSecret,
  });
  const res = await consumer.fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/x-www-form-urlencoded, */*' },
    body: '',
    signal: AbortSignal.timeout(15_000),
  });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw oauth1Failed(`provider answered ${res.status} at ${new URL(url).pathname}`);
  }
  // Bounded: past the limit a `provider_answer_too_large` error, and nothing is kept.
  return readAnswerForm(res);
}

/** Step 1: temporary credentials (request token), with the callback the provider will send the user to. */
export async function requestTemporaryCredentials(
  consumer: OAuth1Consumer,
  requestTokenUrl: string,
  callback: string,
): Promise<{ token: string; tokenSecret: string }> {
  const params = await postSigned(consumer, requestTokenUrl, { oauthParams: { oauth_callback: callback } });
  const token = params.get('oauth_token');
  const tokenSecret = params.get('oauth_token_secret');
  if (!token || tokenSecret === null) throw oauth1Failed('request token response lacks oauth_token or oauth_token_secret');
  if (params.get('oauth_callback_confirmed') !== 'true')
    throw oauth1Failed('provider did not confirm the callback (oauth_callback_confirmed)');
  return { token, tokenSecret };
}

/** Step 2: where the end user authorizes the request token. */
export function authorizationUrl(authorizeUrl: string, token: string, extra: Record<string, string> = {}): URL {
  const url = new URL(authorizeUrl);
  for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
  url.searchParams.set('oauth_token', token);
  return url;
}

export interface OAuth1Credentials {
  type: 'OAUTH1';
  oauth_token: string;
  oauth_token_secret: string;
  raw: Record<string, string>;
}

/** Step 3: exchanges the authorized request token and verifier for token credentials. */
export async function requestTokenCredentials(
  consumer: OAuth1Consumer,
  accessTokenUrl: string,
  temporary: { token: string; tokenSecret: string },
  verifier: string,
): Promise<OAuth1Credentials> {
  const params = await postSigned(consumer, accessTokenUrl, {
    token: temporary.token,
    tokenSecret: temporary.tokenSecret,
    oauthParams: { oauth_verifier: verifier },
  });
  const token = params.get('oauth_token');
  const tokenSecret = params.get('oauth_token_secret');
  if (!token || tokenSecret === null) throw oauth1Failed('access token response lacks oauth_token or oauth_token_secret');
  return { type: 'OAUTH1', oauth_token: token, oauth_token_secret: tokenSecret, raw: Object.fromEntries(params) };
}
