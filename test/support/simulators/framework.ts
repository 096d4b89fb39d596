/**
 * Loopback simulators of real providers, written from their public documentation (each provider's file
 * names the page behind every wire shape). One HTTPS server on a random 127.x.y.z address, port 443,
 * answers every simulated provider's hosts (the virtual host decides which provider answers); a test CA
 * made at start signs its certificate. Latchkey reaches it through an egress guard whose resolver maps
 * the providers' hosts to that address and which trusts the test CA (`egressGuard()`); Chromium through
 * `--host-resolver-rules` and the certificate's key pinned (`chromiumArgs()`). Nothing in the shipped
 * manifests is rewritten: the URLs stay the providers' own.
 */
import { createHash, createPublicKey, randomBytes, randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { EgressGuard } from '../../../src/egress/guard.js';
import { LOOPBACK_PEERS } from '../../../dev/egress.js';
import { makeTestCa } from '../test-ca.js';

/** A request as a simulator sees it. */
export interface SimRequest {
  method: string;
  /** The host name the client asked for (no port). */
  host: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body read as `application/x-www-form-urlencoded`. */
  form: URLSearchParams;
  /** The client's TLS certificate, when the server asked for one ({@link ProviderSimulator.clientCertificates}) and it sent one. */
  clientCert?: PeerCertificate;
}

/** An answer: the status, the headers and the body exactly as sent (no content type is added). */
export interface SimAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export type Handler = (req: SimRequest) => SimAnswer | Promise<SimAnswer>;

export interface Route {
  method: string;
  /** A host pattern of the simulator's `hosts` (`*.x.com`: any one label under x.com). */
  host: string;
  /** The path, or a pattern for paths with IDs in them. */
  path: string | RegExp;
  handler: Handler;
}

/** What the end-to-end test does with a provider (test/providers/real-providers.test.ts). */
export interface ProviderCase {
  /** What the end user types in the Connect form (only values they must know: a subdomain, a region). */
  typed?: Record<string, string>;
  /** The connection configuration after connecting: every value the provider handed back. */
  expectConfig: Record<string, string>;
  /** Integration scopes (default: the manifest's defaultScopes). */
  scopes?: string[];
  /** What else the Integration gives that its provider's docs ask of the app (Amazon Selling Partner's `application_id`; a Jira Data Center server's host). */
  integration?: { authorizationParams?: Record<string, string>; redirectUriName?: string; connectionConfig?: Record<string, string> };
  /** Latchkey's callback URL, for a provider that keeps it registered under a name (eBay's RuName and its accepted URL). */
  registerCallback?: (callbackUrl: string) => void;
  /** One documented API call, sent through the proxy: its path as the provider's docs write it. */
  api: {
    method: 'GET' | 'POST';
    path: string;
    body?: string;
    headers?: Record<string, string>;
    /** Part of the documented answer, which the simulator gives only to a valid token (matched with toMatchObject). */
    answer: Record<string, unknown> | unknown[];
  };
  /** Whether the provider refreshes (a refresh token in its answer): the test forces one. */
  refreshes: boolean;
  /** The documented error the test provokes: the end user denies consent, or the token endpoint refuses the code. */
  failure: 'denied' | 'refused-code';
  /** Part of the fetched credentials after connecting and after a refresh (matched with toMatchObject), read when checked. */
  credentials?: () => Record<string, unknown>;
}

/** One simulated provider. Make a fresh one per test file: it keeps its grants in memory. */
export interface ProviderSimulator {
  /** The shipped manifest: config/providers/NAME.yaml. */
  manifest: string;
  /** Host names it answers on (`*.x.com`: one label under x.com, as a certificate wildcard). */
  hosts: string[];
  /** The documentation pages its wire shapes come from. */
  docs: string[];
  routes: Route[];
  /** The OAuth client the Integration is given; the simulator accepts only it. */
  client: { clientId: string; clientSecret: string };
  /** The consent decision of the next authorization (the test sets `refused-code` cases' flag here). */
  state: SimulatorState;
  e2e: ProviderCase;
  /** The server asks every client for a TLS certificate (mutual TLS; not verified there: the simulator checks `req.clientCert`). */
  clientCertificates?: boolean;
}

/** Mutable knobs a test turns, and what the simulator issued. */
export interface SimulatorState {
  /** When set, the token endpoint refuses the next authorization code with the provider's documented error. */
  refuseNextCode: boolean;
  /** Every access token issued, newest last. */
  accessTokens: string[];
  /** Every request received, in order. */
  requests: SimRequest[];
}

export function newState(): SimulatorState {
  return { refuseNextCode: false, accessTokens: [], requests: [] };
}

/** A random opaque value with a provider-like prefix (never a real token). */
export const opaque = (prefix = '', bytes = 18): string => `${prefix}${randomBytes(bytes).toString('hex')}`;

export const hostMatches = (pattern: string, host: string): boolean =>
  pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) && !host.slice(0, -pattern.length + 1).includes('.') : host === pattern;

// ----- answers -----

export function json(status: number, body: unknown, contentType = 'application/json'): SimAnswer {
  return { status, headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

/** A 302 to `url` with `query` appended (the redirect back to the client's callback). */
export function redirect(url: string, query: Record<string, string>): SimAnswer {
  const target = new URL(url);
  for (const [k, v] of Object.entries(query)) target.searchParams.append(k, v);
  return { status: 302, headers: { location: target.href } };
}

/**
 * A consent page (the provider's own UI is not a wire shape): two links the test clicks, `#allow` and
 * `#deny`, each the redirect back to the client with the query the provider documents.
 */
export function consentPage(provider: string, allow: string, deny: string): SimAnswer {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<!doctype html><html><head><meta charset="utf-8"><title>${provider} consent</title></head><body>
<h1>${provider}: allow access?</h1><a id="allow" href="${esc(allow)}">Allow</a> <a id="deny" href="${esc(deny)}">Cancel</a></body></html>`,
  };
}

/** The client a token request authenticates as: HTTP Basic, or client_id/client_secret in the form. */
export function clientOf(req: SimRequest): { clientId?: string; clientSecret?: string; via: 'basic' | 'body' | 'none' } {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Basic ')) {
    const [id, ...secret] = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':');
    return { clientId: decodeURIComponent(id!), clientSecret: decodeURIComponent(secret.join(':')), via: 'basic' };
  }
  const clientId = req.form.get('client_id') ?? undefined;
  const clientSecret = req.form.get('client_secret') ?? undefined;
  return { clientId, clientSecret, via: clientId ? 'body' : 'none' };
}

/**
 * A request's parameters from a JSON object body (as some providers' docs send them) or else its form body; a
 * POST without a body, from its query (Bullhorn's docs put a token request's parameters there).
 */
export function paramsOf(req: SimRequest): URLSearchParams {
  if (req.method === 'POST' && req.body === '') return req.query;
  if (!String(req.headers['content-type'] ?? '').includes('json')) return req.form;
  const body = JSON.parse(req.body || '{}') as Record<string, unknown>;
  return new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)]));
}

/** The bearer token of a request (`scheme` for providers with their own, e.g. `Zoho-oauthtoken`). */
export function bearerOf(req: SimRequest, scheme = 'Bearer'): string | undefined {
  const auth = req.headers.authorization;
  return auth && auth.toLowerCase().startsWith(`${scheme.toLowerCase()} `) ? auth.slice(scheme.length + 1) : undefined;
}

// ----- an authorization server's memory -----

export interface PendingCode {
  clientId: string;
  redirectUri: string;
  scope: string;
  codeChallenge?: string;
  /** Anything the provider ties to the grant (a user, an account). */
  extra: Record<string, string>;
}

/** Codes (single use), refresh tokens and access tokens of one simulated authorization server. */
export class Grants {
  private readonly codes = new Map<string, PendingCode>();
  private readonly refreshTokens = new Map<string, PendingCode>();
  private readonly accessTokens = new Set<string>();

  constructor(private readonly state: SimulatorState) {}

  issueCode(grant: PendingCode, prefix = ''): string {
    const code = opaque(prefix, 16);
    this.codes.set(code, grant);
    return code;
  }

  /** The code's grant, once: a second use (or an unknown code) is undefined. */
  takeCode(code: string | null): PendingCode | undefined {
    if (!code) return undefined;
    const grant = this.codes.get(code);
    this.codes.delete(code);
    if (grant && this.state.refuseNextCode) {
      this.state.refuseNextCode = false;
      return undefined;
    }
    return grant;
  }

  /** A new access token (and refresh token when `refresh`), remembered as valid. */
  issueTokens(grant: PendingCode, opts: { accessPrefix?: string; refreshPrefix?: string; refresh?: boolean } = {}) {
    const accessToken = opaque(opts.accessPrefix ?? '', 24);
    this.accessTokens.add(accessToken);
    this.state.accessTokens.push(accessToken);
    let refreshToken: string | undefined;
    if (opts.refresh) {
      refreshToken = opaque(opts.refreshPrefix ?? '', 24);
      this.refreshTokens.set(refreshToken, grant);
    }
    return { accessToken, refreshToken };
  }

  /** The grant of a refresh token; `rotate`: the old one stops working (providers that rotate). */
  takeRefresh(token: string | null, rotate: boolean): PendingCode | undefined {
    if (!token) return undefined;
    const grant = this.refreshTokens.get(token);
    if (grant && rotate) this.refreshTokens.delete(token);
    return grant;
  }

  validAccess(token: string | undefined): boolean {
    return token !== undefined && this.accessTokens.has(token);
  }
}

/** A simulated authorization server's state (what the test sees) and its grants. */
export function authServer(): { state: SimulatorState; grants: Grants } {
  const state = newState();
  return { state, grants: new Grants(state) };
}

/** RFC 7636 S256 check (a grant without a challenge passes: PKCE is the client's choice where providers allow it). */
export function pkceMatches(grant: PendingCode, verifier: string | null): boolean {
  if (!grant.codeChallenge) return true;
  if (!verifier) return false;
  return createHash('sha256').update(verifier).digest('base64url') === grant.codeChallenge;
}

/** The authorization request's parameters a simulator keeps for its code. */
export function pendingFrom(req: SimRequest, extra: Record<string, string> = {}): PendingCode {
  return {
    clientId: req.query.get('client_id') ?? '',
    redirectUri: req.query.get('redirect_uri') ?? '',
    scope: req.query.get('scope') ?? '',
    ...(req.query.get('code_challenge') ? { codeChallenge: req.query.get('code_challenge')! } : {}),
    extra,
  };
}

// ----- the server -----

export interface SimulatorHost {
  /** The loopback address every simulated host resolves to. */
  address: string;
  /** The test CA (PEM), trusted by {@link egressGuard}. */
  ca: string;
  simulators: ServedSimulator[];
  /** An egress guard for the replica: provider hosts resolve here, the test CA is trusted, loopback peers allowed. */
  egressGuard(): EgressGuard;
  /** Chromium flags: provider hosts resolve here, the server's key is trusted. */
  chromiumArgs(): string[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function pathMatches(route: Route, path: string): boolean {
  return typeof route.path === 'string' ? route.path === path : route.path.test(path);
}

async function answer(simulators: ServedSimulator[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  const url = new URL(req.url ?? '/', `https://${host}`);
  const body = await readBody(req);
  const sreq: SimRequest = {
    method: req.method ?? 'GET',
    host,
    path: url.pathname,
    query: url.searchParams,
    headers: req.headers,
    body,
    form: new URLSearchParams(String(req.headers['content-type'] ?? '').includes('x-www-form-urlencoded') ? body : ''),
  };
  const peer = (req.socket as TLSSocket).getPeerCertificate?.();
  if (peer?.raw) sreq.clientCert = peer;
  const onHost = simulators.filter((sim) => sim.hosts.some((h) => hostMatches(h, host)));
  if (onHost.length === 0) {
    res.writeHead(421, { 'content-type': 'text/plain' }).end(`no simulated provider answers on ${host}`);
    return;
  }
  const routed = onHost.flatMap((sim) => {
    const route = sim.routes.find((r) => r.method === sreq.method && hostMatches(r.host, host) && pathMatches(r, sreq.path));
    return route ? [{ sim, route }] : [];
  });
  // Providers sharing hosts (Google's, Microsoft's, Atlassian's products): the request's client or token picks one.
  const chosen = routed.find(({ sim }) => owns(sim, sreq)) ?? routed[0];
  const sim = chosen?.sim ?? onHost[0]!;
  sim.state.requests.push(sreq);
  const a = chosen ? await chosen.route.handler(sreq) : json(404, { simulator: `no route for ${sreq.method} ${host}${sreq.path}` });
  res.writeHead(a.status, a.headers ?? {}).end(a.body ?? '');
}

/** Whether a request is this simulator's: it names its client (query, form, JSON body, Basic) or carries one of its tokens. */
function owns(sim: ServedSimulator, req: SimRequest): boolean {
  const id = sim.client.clientId;
  if (req.query.get('client_id') === id || clientOf(req).clientId === id) return true;
  if (req.body.includes(JSON.stringify(id))) return true;
  const auth = req.headers.authorization ?? '';
  const token = auth.slice(auth.indexOf(' ') + 1);
  return sim.state.accessTokens.includes(token) || sim.state.accessTokens.some((t) => req.query.get('access_token') === t);
}

async function listenOn443(server: Server): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const address = `127.${randomInt(1, 255)}.${randomInt(0, 255)}.${randomInt(1, 255)}`;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(443, address, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return address;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES')
        throw new Error(
          'simulated providers listen on port 443 of a 127.x.y.z address: run the tests as root (or with CAP_NET_BIND_SERVICE)',
          {
            cause: err,
          },
        );
      if (attempt > 20 || code !== 'EADDRINUSE') throw err;
    }
  }
}

/** What the server needs of a simulator (a test driving one itself needs no end-to-end case). */
export type ServedSimulator = Omit<ProviderSimulator, 'e2e'>;

/** Starts one HTTPS server on 127.x.y.z:443 for all the given simulators. */
export async function startSimulators(simulators: ServedSimulator[]): Promise<SimulatorHost> {
  const hosts = [...new Set(simulators.flatMap((s) => s.hosts))];
  const testCa = makeTestCa(hosts);
  testCa.remove();
  const { caCert: ca, serverKey: key, serverCert: cert } = testCa;
  // Asked, not required: a simulator answers a missing or unknown certificate with its provider's documented error.
  const mutual = simulators.some((s) => s.clientCertificates) ? { requestCert: true, rejectUnauthorized: false } : {};
  const server = createServer({ key, cert, ...mutual }, (req, res) => {
    answer(simulators, req, res).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`simulator failed: ${err.message}`);
    });
  });
  const address = await listenOn443(server);
  const spki = createHash('sha256')
    .update(createPublicKey(key).export({ type: 'spki', format: 'der' }))
    .digest('base64');
  const simulated = (host: string) => hosts.some((h) => hostMatches(h, host.toLowerCase()));
  return {
    address,
    ca,
    simulators,
    egressGuard: () =>
      new EgressGuard({
        allow: [...LOOPBACK_PEERS.split(','), `${address}/32`],
        ca,
        resolve: async (host) => {
          if (simulated(host)) return [{ address, family: 4 }];
          throw Object.assign(new Error(`${host} is not a simulated provider host`), { code: 'ENOTFOUND' });
        },
      }),
    chromiumArgs: () => [
      `--host-resolver-rules=${hosts.map((h) => `MAP ${h} ${address}`).join(', ')}`,
      `--ignore-certificate-errors-spki-list=${spki}`,
    ],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ----- an RFC 6749 token endpoint, as most providers run one -----

export interface TokenEndpointOptions {
  grants: Grants;
  client: { clientId: string; clientSecret: string };
  /** How the provider documents client authentication (`none`: a public client, client_id alone, with PKCE). */
  auth: 'basic' | 'body' | 'either' | 'none';
  /** The success answer for issued tokens (`refreshToken` set when one was issued). */
  answer(
    tokens: { accessToken: string; refreshToken?: string },
    grant: PendingCode,
    grantType: 'authorization_code' | 'refresh_token',
  ): SimAnswer;
  /** The documented error answer (RFC 6749 error code, a description, and which check failed). */
  error(code: string, description: string, why: TokenFailure): SimAnswer;
  /** Whether a code grant returns a refresh token; `rotate`: a refresh returns a new one and the old one stops working. */
  refresh:
    false | { rotate: boolean; /** a refresh answer carries a refresh token (even when it does not rotate) */ returnsToken?: boolean };
  accessPrefix?: string;
  refreshPrefix?: string;
  /** The provider also reads a JSON body (Atlassian documents JSON). */
  acceptsJson?: boolean;
  /** A code grant must carry a `code_verifier` (providers requiring PKCE). */
  pkceRequired?: boolean;
}

/** Which check of a token request failed. */
export type TokenFailure = 'client' | 'code' | 'redirect' | 'pkce' | 'refresh' | 'grant_type';

/** RFC 6749 §5.2's own descriptions of its token errors, which some providers send word for word. */
export const RFC6749_DESCRIPTIONS: Partial<Record<TokenFailure, string>> = {
  client: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  ...Object.fromEntries(
    (['code', 'redirect', 'pkce', 'refresh'] as const).map((why) => [
      why,
      'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
    ]),
  ),
};

/**
 * The usual RFC 6749 error answer, `{"error": code, "error_description": ...}` (status 400 unless `status` names
 * another for that code). With `descriptions`, each failure's documented message (none where it names none);
 * without, the framework's own.
 */
export function oauthError(
  opts: { status?: Record<string, number>; descriptions?: Partial<Record<TokenFailure, string>> } = {},
): TokenEndpointOptions['error'] {
  return (code, description, why) => {
    const text = opts.descriptions ? opts.descriptions[why] : description;
    return json(opts.status?.[code] ?? 400, { error: code, ...(text !== undefined ? { error_description: text } : {}) });
  };
}

/** `refresh_token` for a token answer, when one was issued. */
export const refreshField = (t: { refreshToken?: string }): { refresh_token?: string } =>
  t.refreshToken ? { refresh_token: t.refreshToken } : {};

/** An API route's handler: `unauthorized` without a valid access token (`scheme`: the provider's own, default Bearer), else `ok`. */
export function withToken(grants: Grants, unauthorized: SimAnswer | (() => SimAnswer), ok: Handler, scheme?: string): Handler {
  return (req) =>
    grants.validAccess(bearerOf(req, scheme)) ? ok(req) : typeof unauthorized === 'function' ? unauthorized() : unauthorized;
}

/** A token endpoint (authorization_code and refresh_token grants) checking client, code, redirect URI and PKCE. */
export function tokenEndpoint(o: TokenEndpointOptions): Handler {
  return (req) => {
    const form = o.acceptsJson ? paramsOf(req) : req.form;
    const basic = clientOf({ ...req, form: new URLSearchParams() });
    const c =
      basic.via === 'basic'
        ? basic
        : { clientId: form.get('client_id') ?? undefined, clientSecret: form.get('client_secret') ?? undefined, via: 'body' as const };
    if ((o.auth === 'basic' && basic.via !== 'basic') || (o.auth === 'body' && basic.via === 'basic'))
      return o.error('invalid_client', 'client authentication method not accepted', 'client');
    if (o.auth === 'none' && (basic.via === 'basic' || c.clientSecret !== undefined))
      return o.error('invalid_client', 'a public client sends no secret', 'client');
    if (c.clientId !== o.client.clientId || (o.auth !== 'none' && c.clientSecret !== o.client.clientSecret))
      return o.error('invalid_client', 'invalid client', 'client');
    const grantType = form.get('grant_type');
    const issue = (grant: PendingCode, kind: 'authorization_code' | 'refresh_token', oldRefresh?: string) => {
      const withRefresh = o.refresh !== false && (kind === 'authorization_code' || o.refresh.rotate);
      const t = o.grants.issueTokens(grant, {
        refresh: withRefresh,
        ...(o.accessPrefix ? { accessPrefix: o.accessPrefix } : {}),
        ...(o.refreshPrefix ? { refreshPrefix: o.refreshPrefix } : {}),
      });
      const refreshToken = t.refreshToken ?? (o.refresh !== false && o.refresh.returnsToken ? oldRefresh : undefined);
      return o.answer({ accessToken: t.accessToken, ...(refreshToken ? { refreshToken } : {}) }, grant, kind);
    };
    if (grantType === 'authorization_code') {
      const grant = o.grants.takeCode(form.get('code'));
      if (!grant) return o.error('invalid_grant', 'invalid authorization code', 'code');
      if (grant.clientId !== c.clientId || form.get('redirect_uri') !== grant.redirectUri)
        return o.error('invalid_grant', 'redirect_uri mismatch', 'redirect');
      if ((o.pkceRequired && !form.get('code_verifier')) || !pkceMatches(grant, form.get('code_verifier')))
        return o.error('invalid_grant', 'code_verifier mismatch', 'pkce');
      return issue(grant, 'authorization_code');
    }
    if (grantType === 'refresh_token' && o.refresh !== false) {
      const old = form.get('refresh_token') ?? undefined;
      const grant = o.grants.takeRefresh(old ?? null, o.refresh.rotate);
      if (!grant) return o.error('invalid_grant', 'invalid refresh token', 'refresh');
      return issue(grant, 'refresh_token', old);
    }
    return o.error('unsupported_grant_type', 'unsupported grant type', 'grant_type');
  };
}

/** The authorize endpoint's usual consent page: `#allow` returns `code` and `state` (plus `extra`), `#deny` the documented error. */
export function authorizePage(provider: string, grants: Grants, client: { clientId: string }, opts: AuthorizeOptions = {}): Handler {
  return (req) => {
    const redirectUri = req.query.get('redirect_uri');
    if (req.query.get('client_id') !== client.clientId || !redirectUri || req.query.get('response_type') !== 'code')
      return opts.invalid
        ? opts.invalid(req)
        : { status: 400, headers: { 'content-type': 'text/plain' }, body: 'invalid authorization request' };
    const state = req.query.get('state') ?? '';
    const refused = opts.check?.(req, redirectUri, state);
    if (refused) return refused;
    const extra = typeof opts.extra === 'function' ? opts.extra(req) : (opts.extra ?? {});
    const code = grants.issueCode(pendingFrom(req, extra), opts.codePrefix ?? '');
    const back = (q: Record<string, string>) => redirect(redirectUri, q).headers!.location!;
    return consentPage(provider, back({ code, state, ...extra }), back({ ...(opts.denied ?? { error: 'access_denied' }), state }));
  };
}

/** What an authorize page does beyond RFC 6749's checks. */
export interface AuthorizeOptions {
  /** Values the redirect back carries beside `code` and `state` (and the grant keeps), fixed or read from the request. */
  extra?: Record<string, string> | ((req: SimRequest) => Record<string, string>);
  denied?: Record<string, string>;
  codePrefix?: string;
  /** The documented answer to a request with an unknown client or no redirect URI. */
  invalid?: Handler;
  /** A provider's own checks of the request: an answer refuses it. */
  check?: (req: SimRequest, redirectUri: string, state: string) => SimAnswer | undefined;
}

// ----- the usual OAuth 2 provider: a consent page, an RFC 6749 token endpoint and an API -----

/** Where a provider's endpoint answers (`https://host/path`, as its docs write it); `wrap`: its own handling around the usual. */
interface Endpoint {
  url: string;
  wrap?: (usual: Handler) => Handler;
}

export interface OAuth2ProviderOptions extends Pick<ProviderSimulator, 'manifest' | 'docs' | 'client' | 'e2e'> {
  /** GET: the consent page ({@link authorizePage}), titled with `provider`. */
  authorize: Endpoint & AuthorizeOptions & { provider: string };
  /** POST: the token endpoint ({@link tokenEndpoint}); its answers are `answer` and `error`. */
  token: Endpoint & Omit<TokenEndpointOptions, 'grants' | 'client' | 'answer' | 'error'>;
  /** The token endpoint's success answer. */
  answer: TokenEndpointOptions['answer'];
  /** The token endpoint's documented error answer. */
  error: TokenEndpointOptions['error'];
  /** The API's routes, which answer the tokens the token endpoint issued: a function of the grants, or {@link getRoute}s. */
  api: ((grants: Grants) => Route[]) | ApiDeclaration[];
}

/** A route's host (a pattern of the simulator's hosts) and path from an endpoint's URL. */
function hostAndPath(url: string): { host: string; path: string } {
  const [, host, path] = /^https:\/\/([^/]+)(\/.*)$/.exec(url) ?? [];
  if (!host || !path) throw new Error(`not an https URL with a path: ${url}`);
  return { host, path };
}

/**
 * A provider whose authorize and token endpoints are the usual ones (each file still cites its provider's docs).
 * It answers on the hosts of its routes.
 */
export function oauth2Provider(o: OAuth2ProviderOptions): ProviderSimulator {
  const { state, grants } = authServer();
  const { url: authorizeUrl, wrap: wrapAuthorize, provider, ...authorizeOptions } = o.authorize;
  const { url: tokenUrl, wrap: wrapToken, ...tokenOptions } = o.token;
  const consent = authorizePage(provider, grants, o.client, authorizeOptions);
  const token = tokenEndpoint({ ...tokenOptions, answer: o.answer, error: o.error, grants, client: o.client });
  const routes: Route[] = [
    { method: 'GET', ...hostAndPath(authorizeUrl), handler: wrapAuthorize ? wrapAuthorize(consent) : consent },
    { method: 'POST', ...hostAndPath(tokenUrl), handler: wrapToken ? wrapToken(token) : token },
    ...(Array.isArray(o.api) ? o.api.map((declare) => declare(grants)) : o.api(grants)),
  ];
  return {
    manifest: o.manifest,
    hosts: [...new Set(routes.map((r) => r.host))],
    docs: o.docs,
    client: o.client,
    state,
    routes,
    e2e: o.e2e,
  };
}

/** An API route: `ok` for a valid access token (`scheme`: the provider's own, default Bearer), else `unauthorized`. */
export function apiRoute(
  grants: Grants,
  at: { method?: string; host: string; path: string | RegExp; scheme?: string },
  unauthorized: SimAnswer | (() => SimAnswer),
  ok: Handler,
): Route {
  return { method: at.method ?? 'GET', host: at.host, path: at.path, handler: withToken(grants, unauthorized, ok, at.scheme) };
}

/** A request's JSON object body (`Content-Type: application/json`), or undefined for anything else. */
export function jsonObjectBody(req: SimRequest): Record<string, unknown> | undefined {
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return undefined;
  try {
    const body: unknown = JSON.parse(req.body);
    return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A client credentials token endpoint that takes the client as HTTP Basic only and a form body (Certn, Databricks);
 * its error answers are RFC 6749's (`invalid_client` 401, `invalid_request` and `unsupported_grant_type` 400).
 */
export function basicClientCredentials(
  grants: Grants,
  client: { clientId: string; clientSecret: string },
  answer: (accessToken: string) => Record<string, unknown>,
): Handler {
  return (req) => {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return json(400, { error: 'invalid_request' });
    const c = clientOf({ ...req, form: new URLSearchParams() });
    if (c.via !== 'basic' || c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
      return json(401, { error: 'invalid_client' });
    if (req.form.get('grant_type') !== 'client_credentials') return json(400, { error: 'unsupported_grant_type' });
    const { accessToken } = grants.issueTokens({ clientId: client.clientId, redirectUri: '', scope: '', extra: {} });
    return json(200, answer(accessToken));
  };
}

// ----- short declarations -----
// What most simulators declare the same way, each in one line: the client, the token answer (its keys in the
// provider's documented order), the error texts, API routes by URL, and the end-to-end case.

/** An HTML page (a provider's own error page for a browser). */
export const html = (status: number, body: string): SimAnswer => ({ status, headers: { 'content-type': 'text/html' }, body });

/** A client of random hex values (a number: that many random bytes) or given ones. */
export const opaqueClient = (id: string | number, secret: string | number): { clientId: string; clientSecret: string } => ({
  clientId: typeof id === 'number' ? opaque('', id) : id,
  clientSecret: typeof secret === 'number' ? opaque('', secret) : secret,
});

/** What a token answer is made of: the tokens issued, the scope the authorization asked for, the grant and its type. */
export interface Issued {
  access: string;
  /** Undefined when none was issued: a key with it is left out of the answer. */
  refresh?: string;
  scope: string;
  grant: PendingCode;
  kind: 'authorization_code' | 'refresh_token';
}

/** The time in seconds (a token answer's `created_at`). */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * A 200 JSON token answer: `keys` in the provider's documented order; `access_token`, `refresh_token` and `scope`
 * are what was issued and asked for unless `values` gives them, every other key is in `values` (a function: read from
 * what was issued). A key whose value is undefined (no refresh token issued) is left out.
 */
export function tokenAnswer(keys: string, values: Record<string, TokenValue> = {}, contentType?: string): TokenEndpointOptions['answer'] {
  const order = keys.split(' ');
  const unknown = [
    ...order.filter((k) => !(k in values) && !ISSUED_KEYS.includes(k)),
    ...Object.keys(values).filter((k) => !order.includes(k)),
  ];
  if (unknown.length) throw new Error(`tokenAnswer: ${unknown.join(', ')} not both listed and given`);
  return (t, grant, kind) => {
    const i: Issued = { access: t.accessToken, refresh: t.refreshToken, scope: grant.scope, grant, kind };
    const issued: Record<string, unknown> = { access_token: i.access, refresh_token: i.refresh, scope: i.scope };
    const valueOf = (k: string) =>
      k in values ? (typeof values[k] === 'function' ? (values[k] as (i: Issued) => unknown)(i) : values[k]) : issued[k];
    return json(200, Object.fromEntries(order.map((k) => [k, valueOf(k)])), contentType);
  };
}
const ISSUED_KEYS = ['access_token', 'refresh_token', 'scope'];
/** A value of a token answer: as written, or read from what was issued. */
type TokenValue = string | number | boolean | null | unknown[] | { [key: string]: unknown } | ((i: Issued) => unknown);

/** A provider's token error texts per failure; `grant` stands for `code`, `redirect` and `pkce` where they are not named. */
export type ErrorTexts = Partial<Record<TokenFailure | 'grant', string>>;

/** {@link oauthError} with the provider's texts (`{}`: none) and `invalid_client`'s status when it is not 400. */
export function oauthErrors(texts: ErrorTexts, invalidClientStatus?: number): TokenEndpointOptions['error'] {
  const { grant, ...named } = texts;
  return oauthError({
    ...(invalidClientStatus ? { status: { invalid_client: invalidClientStatus } } : {}),
    descriptions: grant === undefined ? named : { code: grant, redirect: grant, pkce: grant, ...named },
  });
}

/** {@link oauthErrors} with RFC 6749's own texts ({@link RFC6749_DESCRIPTIONS}), `more` added. */
export const rfc6749Errors = (invalidClientStatus?: number, more: ErrorTexts = {}): TokenEndpointOptions['error'] =>
  oauthErrors({ ...RFC6749_DESCRIPTIONS, ...more }, invalidClientStatus);

/** A route from `METHOD https://host/path` as the provider's docs write it. */
export function route(call: string, handler: Handler): Route {
  const [method, url] = call.split(' ') as [string, string];
  return { method, ...hostAndPath(url), handler };
}

/** An API route of {@link oauth2Provider}'s `api` list, given the simulator's grants. */
export type ApiDeclaration = (grants: Grants) => Route;

const answerOf = (a: SimAnswer | Handler, req: SimRequest) => (typeof a === 'function' ? a(req) : a);

/** An API route at `url` (as the docs write it): `ok` for a valid token, else `unauthorized` (`scheme`: the provider's own). */
export function getRoute(
  url: string,
  unauthorized: SimAnswer | (() => SimAnswer),
  ok: SimAnswer | Handler,
  scheme?: string,
): ApiDeclaration {
  return (grants) => apiRoute(grants, { ...hostAndPath(url), ...(scheme ? { scheme } : {}) }, unauthorized, (req) => answerOf(ok, req));
}

/** {@link getRoute} for a POST. */
export function postRoute(url: string, unauthorized: SimAnswer | (() => SimAnswer), ok: SimAnswer | Handler): ApiDeclaration {
  return (grants) => apiRoute(grants, { method: 'POST', ...hostAndPath(url) }, unauthorized, (req) => answerOf(ok, req));
}

/**
 * The end-to-end case: `call` is `METHOD /path` as the provider's docs write it, `answer` part of its documented
 * answer; the connection configuration is empty unless `expectConfig` says otherwise.
 */
export function e2eCase(
  call: string,
  answer: ProviderCase['api']['answer'],
  rest: Omit<ProviderCase, 'api' | 'expectConfig'> &
    Partial<Pick<ProviderCase, 'expectConfig'>> &
    Pick<ProviderCase['api'], 'body' | 'headers'>,
): ProviderCase {
  const [method, path] = call.split(' ') as [ProviderCase['api']['method'], string];
  const { body, headers, expectConfig = {}, ...c } = rest;
  return { ...c, expectConfig, api: { method, path, ...(headers ? { headers } : {}), ...(body ? { body } : {}), answer } };
}
