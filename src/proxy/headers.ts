/**
 * Which headers cross the proxy. Hop-by-hop headers (RFC 9110 section 7.6.1, plus those the
 * `Connection` header names) never do; the caller's `Authorization` (its Latchkey secret key) and
 * Latchkey's own headers stay behind; everything else passes in both directions.
 *
 * Nango's SDK (`nango.proxy({ headers })`) sends the caller's headers as `Nango-Proxy-<name>` and
 * its proxy options as headers of their own; these are read here as Nango's server reads them, so
 * an application moved from Nango sends the upstream the same request (docs/proxy.md).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { LatchkeyError } from '../domain/errors.js';

export const CONNECTION_ID_HEADER = 'connection-id';
export const PROVIDER_CONFIG_KEY_HEADER = 'provider-config-key';
export const RETRIES_HEADER = 'retries';
export const BASE_URL_OVERRIDE_HEADER = 'base-url-override';
/** Nango's SDK prefixes the caller's own headers with this; the header goes out under its own name. */
const NANGO_PROXY_PREFIX = 'nango-proxy-';
/**
 * Per-request options of Nango's proxy that Latchkey has no counterpart for (decompression is the
 * Provider's `proxy.decompress`, the statuses retried are fixed, redirects are never followed):
 * not forwarded, since they are addressed to the proxy and not to the provider.
 */
const NANGO_OPTION_HEADERS = new Set([BASE_URL_OVERRIDE_HEADER, 'decompress', 'retry-on', 'forward-headers-on-redirect']);

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Request headers that are Latchkey's or describe the connection to Latchkey, not to the provider. */
const OWN_REQUEST_HEADERS = new Set(['authorization', 'host', CONNECTION_ID_HEADER, PROVIDER_CONFIG_KEY_HEADER, RETRIES_HEADER]);

function listedInConnection(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  const names = new Set<string>();
  for (const v of Array.isArray(value) ? value : value ? [value] : []) {
    for (const n of v.split(',')) if (n.trim()) names.add(n.trim().toLowerCase());
  }
  return names;
}

/** A header addressed to Latchkey (or to Nango's proxy) or to this hop only: never sent to the provider. */
function staysBehind(n: string, dropped: Set<string>): boolean {
  return HOP_BY_HOP.has(n) || dropped.has(n) || OWN_REQUEST_HEADERS.has(n) || n.startsWith('latchkey-') || n.startsWith('nango-');
}

/**
 * The caller's headers that are forwarded to the provider. `Nango-Proxy-<name>` goes out as
 * `<name>` (replacing an unprefixed header of that name, as with Nango), under the same rules as a
 * header sent as is; other `Nango-*` headers and Nango's proxy options stay behind.
 */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const dropped = listedInConnection(headers);
  const out: OutgoingHttpHeaders = {};
  const prefixed: Array<[string, string | string[]]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const n = name.toLowerCase();
    if (n.startsWith(NANGO_PROXY_PREFIX)) prefixed.push([n.slice(NANGO_PROXY_PREFIX.length), value]);
    else if (!staysBehind(n, dropped) && !NANGO_OPTION_HEADERS.has(n)) out[n] = value;
  }
  for (const [n, value] of prefixed) if (n && !staysBehind(n, dropped)) out[n] = value;
  return out;
}

/**
 * Nango's SDK always sends `Base-Url-Override` (empty unless `baseUrlOverride` is set). Latchkey
 * sends a connection's credentials only under its Provider's base URL (the SSRF rules), so a value
 * is refused rather than silently sent elsewhere or ignored.
 */
export function checkBaseUrlOverride(headers: IncomingHttpHeaders): void {
  const value = headers[BASE_URL_OVERRIDE_HEADER];
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  if (values.some((v) => v.trim() !== ''))
    throw new LatchkeyError(
      'invalid_input',
      'base_url_override_unsupported',
      "Base-Url-Override is not supported: Latchkey sends a connection's credentials only to its Provider's proxy.baseUrl (define a Provider with that base URL)",
    );
}

/** The provider's response headers that are returned to the caller. */
export function returnedResponseHeaders(headers: IncomingHttpHeaders, opts: { decompressed: boolean }): OutgoingHttpHeaders {
  const dropped = listedInConnection(headers);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const n = name.toLowerCase();
    if (HOP_BY_HOP.has(n) || dropped.has(n)) continue;
    if (opts.decompressed && (n === 'content-encoding' || n === 'content-length')) continue;
    out[n] = value;
  }
  return out;
}

/** A header value Node would refuse to send (CR, LF, NUL and other control characters). */
export function isUnsafeHeaderValue(value: string): boolean {
  return /[\x00-\x08\x0a-\x1f\x7f]/.test(value);
}
