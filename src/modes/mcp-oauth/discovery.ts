/**
 * From an MCP server's URL alone to its authorization server, as MCP's authorization spec (revisions
 * 2025-06-18 and 2025-11-25) and the MCP TypeScript SDK's client (`discoverOAuthServerInfo`) do it:
 *
 * 1. an unauthenticated request to the server: its 401 `WWW-Authenticate` may name the protected
 *    resource metadata (`resource_metadata`) and the scopes wanted (`scope`);
 * 2. else the metadata at `/.well-known/oauth-protected-resource` inserted before the server's path,
 *    then at the root (RFC 9728); its `resource` must be the server (same origin, a prefix of its path);
 * 3. the first of its `authorization_servers`: RFC 8414 metadata, then OpenID discovery, in the spec's
 *    path-insertion order; the `issuer` must be the one asked for (RFC 8414 §3.3).
 *
 * Every URL goes through the guarded fetch the mode is handed (the egress guard: an internal address
 * is refused), every document is read up to {@link METADATA_MAX_BYTES}, and a redirect is not followed.
 * A hostile answer is a {@link discoveryRefused} error naming what was wrong, never a partial result.
 */
import { isLoopback } from '../../auth/oauth2-client.js';
import { LatchkeyError } from '../../domain/errors.js';
import { readAnswerText } from '../../egress/bounded-body.js';
import { egressRefusal } from '../../egress/guard.js';

/** Metadata documents are a few KiB; far past that is a hostile or broken server. */
export const METADATA_MAX_BYTES = 64 * 1024;

/** The MCP protocol revision Latchkey's requests name (the servers' discovery endpoints may read it). */
export const MCP_PROTOCOL_VERSION = '2025-11-25';

export const DISCOVERY_REFUSED = 'mcp_discovery_refused';

/** What discovery refused: the server's (or its authorization server's) fault, said plainly. */
export function discoveryRefused(message: string): LatchkeyError {
  return new LatchkeyError('upstream', DISCOVERY_REFUSED, message);
}

export interface ProtectedResource {
  resource: string;
  authorizationServers: string[];
  scopesSupported?: string[];
}

export interface AuthorizationServerMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint?: string;
  scopesSupported?: string[];
  tokenEndpointAuthMethods?: string[];
  clientIdMetadataDocumentSupported: boolean;
  issParameterSupported: boolean;
}

export interface Discovered {
  /** The server's canonical URI: the `resource` of the token requests (RFC 8707). */
  resource: string;
  protectedResource: ProtectedResource;
  authorizationServer: AuthorizationServerMetadata;
  /** The scope the server's 401 challenge asked for, if any. */
  challengeScope?: string;
}

/** The server's canonical URI (MCP: lower-case scheme and host, no fragment; the path as given). */
export function canonicalServerUri(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.hash = '';
  const s = url.href;
  return url.pathname === '/' && !url.search && !serverUrl.endsWith('/') ? s.slice(0, -1) : s;
}

/** https, or http on the loopback interface (local servers and tests). */
export function usableUrl(value: unknown, what: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw discoveryRefused(`${what} is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.href))) {
    throw discoveryRefused(`${what} (${url.origin}) is not https`);
  }
  if (url.username || url.password) throw discoveryRefused(`${what} carries credentials`);
  return url;
}

/** One parameter of a `WWW-Authenticate: Bearer …` challenge. */
export function challengeParam(header: string | null, name: string): string | undefined {
  if (!header || !/^\s*bearer\b/i.test(header)) return undefined;
  const match = new RegExp(`(?:^|[\\s,])${name}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s,]+))`, 'i').exec(header.replace(/^\s*bearer/i, ' '));
  const value = match?.[1]?.replace(/\\(.)/g, '$1') ?? match?.[2];
  return value || undefined;
}

type Fetch = typeof fetch;

/** A fetch of a discovered URL: the egress guard's refusal said as discovery's (what named the address, and why). */
export async function fetchDiscovered(fetchFn: Fetch, url: URL | string, init: RequestInit, what: string): Promise<Response> {
  try {
    return await fetchFn(url, init);
  } catch (err) {
    const refused = egressRefusal(err);
    if (refused) throw discoveryRefused(`${what} is at an address Latchkey may not reach: ${refused.message}`);
    throw err;
  }
}

/** A GET of a metadata document: its JSON object, undefined when the server has none there (4xx); refused otherwise. */
async function getDocument(fetchFn: Fetch, url: URL, what: string): Promise<Record<string, unknown> | undefined> {
  const res = await fetchDiscovered(
    fetchFn,
    url,
    { headers: { accept: 'application/json', 'mcp-protocol-version': MCP_PROTOCOL_VERSION }, redirect: 'manual' },
    what,
  );
  if (res.status >= 400 && res.status < 500) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => undefined);
    throw discoveryRefused(`${what} at ${url.origin}${url.pathname} answered ${res.status}`);
  }
  const text = await readAnswerText(res, METADATA_MAX_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw discoveryRefused(`${what} at ${url.origin}${url.pathname} is not JSON`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw discoveryRefused(`${what} at ${url.origin}${url.pathname} is not a JSON object`);
  return body as Record<string, unknown>;
}

/** `/.well-known/<name>` inserted before the URL's path (RFC 8414 §3.1, RFC 9728 §3.1). */
function inserted(base: URL, name: string): URL {
  const path = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  return new URL(`/.well-known/${name}${path}`, base.origin);
}

/** Step 1: the server's challenge (its `resource_metadata` and `scope`), from an unauthenticated MCP request. */
async function challenge(fetchFn: Fetch, server: URL): Promise<{ resourceMetadata?: string; scope?: string }> {
  const res = await fetchDiscovered(
    fetchFn,
    server,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MCP_PROTOCOL_VERSION,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'latchkey', version: '1' } },
      }),
      redirect: 'manual',
    },
    'The MCP server',
  );
  await res.body?.cancel().catch(() => undefined);
  if (res.status !== 401) return {};
  const header = res.headers.get('www-authenticate');
  return { resourceMetadata: challengeParam(header, 'resource_metadata'), scope: challengeParam(header, 'scope') };
}

function stringArray(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

/** Step 2: the protected resource metadata, checked against the server. */
async function protectedResource(fetchFn: Fetch, server: URL, named?: string): Promise<ProtectedResource> {
  const candidates = named
    ? [usableUrl(named, 'The resource_metadata the server named')]
    : [
        inserted(server, 'oauth-protected-resource'),
        ...(server.pathname === '/' ? [] : [new URL('/.well-known/oauth-protected-resource', server.origin)]),
      ];
  for (const url of candidates) {
    const doc = await getDocument(fetchFn, url, 'The protected resource metadata');
    if (!doc) continue;
    const resource = doc.resource;
    if (typeof resource !== 'string' || !resourceCovers(resource, server))
      throw discoveryRefused(`The protected resource metadata names another resource than ${server.origin}${server.pathname}`);
    const servers = stringArray(doc.authorization_servers);
    if (!servers?.length) throw discoveryRefused('The protected resource metadata names no authorization server');
    const scopes = stringArray(doc.scopes_supported);
    return { resource, authorizationServers: servers, ...(scopes ? { scopesSupported: scopes } : {}) };
  }
  throw discoveryRefused(`${server.origin} publishes no protected resource metadata (RFC 9728), which MCP's authorization requires`);
}

/** The metadata's resource is the server or a prefix of it, at the same origin (the SDK's `checkResourceAllowed`). */
function resourceCovers(resource: string, server: URL): boolean {
  let r: URL;
  try {
    r = new URL(resource);
  } catch {
    return false;
  }
  if (r.origin !== server.origin) return false;
  const prefix = r.pathname.endsWith('/') ? r.pathname : `${r.pathname}/`;
  const path = server.pathname.endsWith('/') ? server.pathname : `${server.pathname}/`;
  return path.startsWith(prefix);
}

/** The discovery URLs of an authorization server, in the order MCP's spec gives (and the SDK's `buildDiscoveryUrls`). */
export function authorizationServerMetadataUrls(issuer: URL): URL[] {
  if (issuer.pathname === '/' || issuer.pathname === '')
    return [new URL('/.well-known/oauth-authorization-server', issuer.origin), new URL('/.well-known/openid-configuration', issuer.origin)];
  const path = issuer.pathname.endsWith('/') ? issuer.pathname.slice(0, -1) : issuer.pathname;
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, issuer.origin),
    new URL(`/.well-known/openid-configuration${path}`, issuer.origin),
    new URL(`${path}/.well-known/openid-configuration`, issuer.origin),
  ];
}

/** Issuers compare equal up to one trailing slash (a URL object always has one on a bare origin). */
const sameIssuer = (a: string, b: string) => a === b || a.replace(/\/$/, '') === b.replace(/\/$/, '');

/** Step 3: the authorization server's metadata, its issuer checked and PKCE S256 required. */
async function authorizationServer(fetchFn: Fetch, issuerValue: string): Promise<AuthorizationServerMetadata> {
  const issuer = usableUrl(issuerValue, 'The authorization server');
  for (const url of authorizationServerMetadataUrls(issuer)) {
    const doc = await getDocument(fetchFn, url, 'The authorization server metadata');
    if (!doc) continue;
    if (typeof doc.issuer !== 'string' || !sameIssuer(doc.issuer, issuerValue))
      throw discoveryRefused(`The authorization server metadata at ${url.origin} names another issuer than ${issuerValue}`);
    const authorizationEndpoint = usableUrl(doc.authorization_endpoint, 'The authorization endpoint').href;
    const tokenEndpoint = usableUrl(doc.token_endpoint, 'The token endpoint').href;
    if (!stringArray(doc.code_challenge_methods_supported)?.includes('S256'))
      throw discoveryRefused(`The authorization server ${issuerValue} does not advertise PKCE S256, which MCP's authorization requires`);
    const scopes = stringArray(doc.scopes_supported);
    const methods = stringArray(doc.token_endpoint_auth_methods_supported);
    return {
      issuer: doc.issuer,
      authorizationEndpoint,
      tokenEndpoint,
      ...(doc.registration_endpoint !== undefined
        ? { registrationEndpoint: usableUrl(doc.registration_endpoint, 'The registration endpoint').href }
        : {}),
      ...(scopes ? { scopesSupported: scopes } : {}),
      ...(methods ? { tokenEndpointAuthMethods: methods } : {}),
      clientIdMetadataDocumentSupported: doc.client_id_metadata_document_supported === true,
      issParameterSupported: doc.authorization_response_iss_parameter_supported === true,
    };
  }
  throw discoveryRefused(`The authorization server ${issuerValue} publishes no metadata (RFC 8414 or OpenID discovery)`);
}

/** Everything the flow needs, discovered from the server URL alone (see the module comment). */
export async function discover(fetchFn: Fetch, serverUrl: string): Promise<Discovered> {
  const server = usableUrl(serverUrl, 'The MCP server URL');
  const { resourceMetadata, scope } = await challenge(fetchFn, server);
  const protectedRes = await protectedResource(fetchFn, server, resourceMetadata);
  const as = await authorizationServer(fetchFn, protectedRes.authorizationServers[0]!);
  return {
    resource: canonicalServerUri(server.href),
    protectedResource: protectedRes,
    authorizationServer: as,
    ...(scope ? { challengeScope: scope } : {}),
  };
}
