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

/** Adds the header names a `Connection` value lists (lower-cased) to `names`. */
function addConnectionNames(value: string, names: Set<string>): Set<string> {
  for (const n of value.split(',')) if (n.trim()) names.add(n.trim().toLowerCase());
  return names;
}

function listedInConnection(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  const names = new Set<string>();
  for (const v of Array.isArray(value) ? value : value ? [value] : []) addConnectionNames(v, names);
  return names;
}

/** A header addressed to Latchkey (or to Nango's proxy) or to this hop only: never sent to the provider. */
function staysBehind(n: string, dropped: Set<string>): boolean {
  return HOP_BY_HOP.has(n) || dropped.has(n) || OWN_REQUEST_HEADERS.has(n) || n.startsWith('latchkey-') || n.startsWith('nango-');
}

/**
 * The caller's headers that are forwarded to the provider. `Nango-Proxy-<name>` goes out as
 * `<name>` (replacing an unprefixed header of that name, as with Nango), under the same rules as a
 * header sent as is; other `Nango-*` headers and Nango's proxy options stay behind. `added` (the
 * credentials' headers) goes in last, replacing the caller's header of the same name: one object
 * built per request, not a copy merged into another.
 */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders, added?: Readonly<Record<string, string>>): OutgoingHttpHeaders {
  const dropped = listedInConnection(headers);
  const out: OutgoingHttpHeaders = {};
  let prefixed: Array<[string, string | string[]]> | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    // node's names are lower-case already; a plain object passed by a caller may not be.
    const n = name.toLowerCase();
    if (n.startsWith(NANGO_PROXY_PREFIX)) (prefixed ??= []).push([n.slice(NANGO_PROXY_PREFIX.length), value]);
    else if (!staysBehind(n, dropped) && !NANGO_OPTION_HEADERS.has(n)) out[n] = value;
  }
  if (prefixed) for (const [n, value] of prefixed) if (n && !staysBehind(n, dropped)) out[n] = value;
  if (added) for (const n in added) out[n] = added[n];
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

/**
 * The provider's response headers that are returned to the caller, as node's flat list of names and
 * values (`IncomingMessage.rawHeaders` in, `writeHead`'s array form out): names as the provider sent
 * them and repeated headers line by line, and no headers object built on the way (node builds
 * `IncomingMessage.headers` only when it is read).
 */
export function returnedResponseHeaders(rawHeaders: readonly string[], opts: { decompressed: boolean }): string[] {
  let dropped: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === 10 && rawHeaders[i]!.toLowerCase() === 'connection')
      dropped = addConnectionNames(rawHeaders[i + 1]!, dropped ?? new Set());
  }
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const n = rawHeaders[i]!.toLowerCase();
    if (HOP_BY_HOP.has(n) || dropped?.has(n)) continue;
    if (opts.decompressed && (n === 'content-encoding' || n === 'content-length')) continue;
    out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return out;
}

/** The value of a header in node's flat list of raw names and values (the first, names compared without case). */
export function rawHeaderValue(rawHeaders: readonly string[], name: string): string | undefined {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === name.length && rawHeaders[i]!.toLowerCase() === name) return rawHeaders[i + 1];
  }
  return undefined;
}

/** A header value Node would refuse to send (CR, LF, NUL and other control characters): the domain's rule. */
export { isUnsafeHeaderValue } from '../domain/header-value.js';
