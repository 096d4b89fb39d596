/**
 * The provider URL a proxied request goes to, with the SSRF rules: the result is always under the
 * provider's base URL (same scheme, host and port; base path as a prefix). A path that could leave
 * it, or that a server could read differently from us, is refused before any request is made.
 */
import { LatchkeyError } from '../domain/errors.js';

const rejectPath = (message: string) => new LatchkeyError('invalid_input', 'invalid_proxy_path', message);

/** How many rounds of percent-decoding are inspected (catches double and triple encoding). */
const DECODE_ROUNDS = 4;

/**
 * Validates the caller's raw path (as it arrived, still percent-encoded, starting with "/") and
 * returns it unchanged. Refused: "." and ".." segments (also percent-encoded, repeatedly, and with ";"
 * path parameters: "..;", "%2e%2e%3b", ".;x"), "\",
 * empty segments ("//"), control characters (CR, LF, NUL...), a literal "@" in the first segment, and scheme-like first
 * segments ("http:", "https:", "javascript:") that make the path look like an absolute URL.
 */
export function checkProxyPath(rawPath: string): string {
  if (rawPath.length === 0) return '';
  if (!rawPath.startsWith('/')) throw rejectPath('The proxied path must start with "/"');
  if (rawPath.length > 8192) throw rejectPath('The proxied path is too long');
  let current = rawPath;
  for (let round = 0; round < DECODE_ROUNDS; round++) {
    inspect(current, round);
    if (!current.includes('%')) break;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      throw rejectPath('The proxied path has malformed percent-encoding');
    }
    if (decoded === current) break;
    current = decoded;
  }
  return rawPath;
}

/** "/a/b" → "a". */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end === -1 ? path.slice(1) : path.slice(1, end);
}

/** A "." or ".." segment, with or without ";" path parameters ("..;", ".;x"). */
const DOT_SEGMENT = /(^|\/)\.{1,2}(;[^/]*)?(\/|$)/;

function inspect(path: string, round: number): void {
  const how = round === 0 ? '' : ' (after percent-decoding)';

  if (/[\x00-\x1f\x7f]/.test(path)) throw rejectPath(`The proxied path contains control characters${how}`);
  if (path.includes('\\')) throw rejectPath(`The proxied path contains a backslash${how}`);
  // A literal "@" in the first segment could be read as user info by a sloppy URL join; past it, behind a
  // "/", it cannot, and providers document such paths (Discord's `/users/@me`). "%40" stays data.
  if (round === 0 && firstSegment(path).includes('@'))
    throw rejectPath('The proxied path\'s first segment contains "@"; send it percent-encoded as %40');
  // Tomcat, Jetty and Spring drop ";" path parameters before resolving dot segments: "..;x" is "..".
  if (DOT_SEGMENT.test(path)) throw rejectPath(`The proxied path contains a "." or ".." segment (with or without ";" parameters)${how}`);
  if (path.includes('//')) throw rejectPath(`The proxied path contains an empty segment ("//")${how}`);
  if (/^\/?[A-Za-z][A-Za-z0-9+.-]*:/.test(path)) throw rejectPath(`The proxied path looks like an absolute URL${how}`);
}

/** Query parameters to set on the target URL, replacing any of the caller's with the same name. */
export type QueryOverrides = Array<[string, string]>;

/** A base URL as targetUrl needs it: origin and path without trailing slashes, and the parts http.request takes. */
interface ParsedBase {
  origin: string;
  path: string;
  protocol: 'http:' | 'https:';
  /** Without the brackets of an IPv6 address (as node's urlToHttpOptions gives it). */
  hostname: string;
  port: number | undefined;
  /** host[:port], the Host header. */
  host: string;
}

/**
 * Where a proxied request goes, as node's http.request takes it (what it would derive from the URL
 * object, without parsing one per request). `url()` builds the URL object for who signs it (OAuth 1, TBA).
 */
export interface UpstreamTarget {
  protocol: 'http:' | 'https:';
  /** Scheme, host and port ("https://api.example.test"). */
  origin: string;
  hostname: string;
  port: number | undefined;
  host: string;
  /** Path and query ("/a/b?x=1"). */
  path: string;
  url(): URL;
}

/**
 * Parsed base URLs by their text (a pure function of it, so safe to share): every proxied request
 * of a connection has the same one. Bounded; cleared when full rather than tracking use.
 */
const parsedBases = new Map<string, ParsedBase>();
const PARSED_BASES_MAX = 1024;

function parseBase(baseUrl: string): ParsedBase {
  const known = parsedBases.get(baseUrl);
  if (known) return known;
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new LatchkeyError(
      'invalid_input',
      'invalid_base_url',
      'The provider base URL is not a valid URL once the connection configuration is filled in',
    );
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:')
    throw new LatchkeyError('invalid_input', 'invalid_base_url', 'The provider base URL must be http(s)');
  if (base.username || base.password)
    throw new LatchkeyError('invalid_input', 'invalid_base_url', 'The provider base URL must not carry user info');
  const parsed: ParsedBase = {
    path: base.pathname.replace(/\/+$/, ''),
    ...connectionParts(base),
  };
  if (parsedBases.size >= PARSED_BASES_MAX) parsedBases.clear();
  parsedBases.set(baseUrl, parsed);
  return parsed;
}

/**
 * Joins the provider's base URL (placeholders already filled), the checked path and the caller's
 * raw query, adds the provider's query parameters, and verifies that the result is still under
 * the base URL.
 */
export function targetUrl(baseUrl: string, rawPath: string, rawQuery: string, overrides: QueryOverrides = []): URL {
  const base = parseBase(baseUrl);
  const basePath = base.path;
  checkProxyPath(rawPath);

  const url = new URL(base.origin);
  url.pathname = `${basePath}${rawPath}` || '/';
  const query = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;
  if (overrides.length) {
    const params = new URLSearchParams(query);
    for (const [name] of overrides) params.delete(name);
    for (const [name, value] of overrides) params.append(name, value);
    url.search = params.toString();
  } else {
    // Keep the caller's query byte-for-byte when nothing was added (signatures and cursors depend on it).
    url.search = query;
  }

  if (url.origin !== base.origin || url.username || url.password) throw rejectPath('The proxied request would leave the provider base URL');
  if (basePath && url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) {
    throw rejectPath('The proxied path would leave the provider base path');
  }
  return url;
}

/**
 * Path and query characters the URL setters leave as they are: with only these (and no leading "?"
 * left in the query), the joined path and query are the text itself, and no URL object is needed.
 */
const PLAIN_PATH = /^[A-Za-z0-9\-._~!$&()*+,;=:@%/]*$/;
const PLAIN_QUERY = /^[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*$/;

/**
 * What targetUrl returns, in the form http.request takes, for a path already passed through
 * checkProxyPath. The same result and the same refusals as targetUrl: a path or query with
 * characters the URL setters would change goes through targetUrl itself.
 */
export function upstreamTarget(baseUrl: string, checkedPath: string, rawQuery: string, overrides: QueryOverrides = []): UpstreamTarget {
  const base = parseBase(baseUrl);
  const query = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;
  let search: string;
  if (overrides.length) {
    const params = new URLSearchParams(query);
    for (const [name] of overrides) params.delete(name);
    for (const [name, value] of overrides) params.append(name, value);
    // Form encoding: only characters the search setter keeps.
    search = params.toString();
  } else search = query;
  if (!PLAIN_PATH.test(checkedPath) || (search !== '' && (search.startsWith('?') || !PLAIN_QUERY.test(search)))) {
    return upstreamTargetOf(targetUrl(baseUrl, checkedPath, rawQuery, overrides));
  }
  const path = `${base.path}${checkedPath}` || '/';
  const pathAndQuery = search === '' ? path : `${path}?${search}`;
  return {
    protocol: base.protocol,
    origin: base.origin,
    hostname: base.hostname,
    port: base.port,
    host: base.host,
    path: pathAndQuery,
    url: () => new URL(`${base.origin}${pathAndQuery}`),
  };
}

/** What node's urlToHttpOptions takes from a URL, as an {@link UpstreamTarget}. */
export function upstreamTargetOf(url: URL): UpstreamTarget {
  return { ...connectionParts(url), path: `${url.pathname}${url.search}`, url: () => url };
}

/** Protocol, host name (IPv6 without its brackets), port and Host header of a URL. */
function connectionParts(url: URL): Pick<UpstreamTarget, 'protocol' | 'origin' | 'hostname' | 'port' | 'host'> {
  return {
    protocol: url.protocol as UpstreamTarget['protocol'],
    origin: url.origin,
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    host: url.host,
  };
}
