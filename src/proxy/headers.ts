/**
 * Which headers cross the proxy. Hop-by-hop headers (RFC 9110 section 7.6.1, plus those the
 * `Connection` header names) never do; the caller's `Authorization` (its Latchkey secret key) and
 * Latchkey's own headers stay behind; everything else passes in both directions.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

export const CONNECTION_ID_HEADER = 'connection-id';
export const PROVIDER_CONFIG_KEY_HEADER = 'provider-config-key';
export const RETRIES_HEADER = 'retries';

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

/** The caller's headers that are forwarded to the provider. */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const dropped = listedInConnection(headers);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const n = name.toLowerCase();
    if (HOP_BY_HOP.has(n) || dropped.has(n) || OWN_REQUEST_HEADERS.has(n) || n.startsWith('latchkey-')) continue;
    out[n] = value;
  }
  return out;
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
