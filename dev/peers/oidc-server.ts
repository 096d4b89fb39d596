/**
 * A real OAuth 2 / OpenID Connect server for tests: `oidc-provider` in process on 127.0.0.1, with
 * short token lifetimes, refresh-token rotation (reuse of a rotated token revokes the grant, as
 * real providers do), PKCE, client credentials, revocation, and its development login/consent pages
 * for browser tests. The wrapper counts token-endpoint calls and can make the endpoint fail. The
 * end-to-end suite runs it over HTTPS (a CA of the test's) on the local node's address, for pods.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import Provider, { errors as oidcErrors } from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUris?: string[];
  /** How the client authenticates at the token endpoint. */
  tokenEndpointAuthMethod?: 'client_secret_post' | 'client_secret_basic' | 'private_key_jwt' | 'tls_client_auth';
  /** tls_client_auth (RFC 8705 §2.1.2): the subject DN its certificate must carry (`CN=...`). */
  tlsClientAuthSubjectDn?: string;
  /** private_key_jwt: the public keys (JWKs) its client assertions are checked with. */
  jwks?: { keys: Array<Record<string, unknown>> };
}

export interface OidcServerOptions {
  clients: TestClient[];
  /** Access token (and client-credentials token) lifetime in seconds. */
  accessTokenTtl?: number;
  refreshTokenTtl?: number;
  /** Address to listen on (default 127.0.0.1); the issuer's host. */
  host?: string;
  /** Serve HTTPS with this key and certificate (PEM) instead of HTTP. */
  tls?: { key: string; cert: string };
  /**
   * Mutual TLS (RFC 8705, with `tls`): the server asks every client for a certificate and trusts those `ca`
   * signs; tls_client_auth clients are authenticated by it (the subject DN they registered).
   */
  mutualTls?: { ca: string };
  /** Open dynamic client registration (RFC 7591) at `/reg`, no initial access token. */
  dynamicRegistration?: boolean;
  /**
   * Resource indicators (RFC 8707): access tokens for these resources (opaque, audience the resource)
   * carry these scopes; a token request naming another resource is refused.
   */
  resourceIndicators?: { resources: string[]; scopes: string[] };
  /**
   * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): client IDs that are
   * https URLs under `urlPrefix` are fetched (trusting `ca`, a test CA; loopback allowed for them alone).
   */
  clientIdMetadataDocuments?: { urlPrefix: string; ca: string };
}

export interface MetadataDocumentFetch {
  url: string;
  status: number;
  body: unknown;
}

export interface TokenCall {
  grantType: string;
  at: number;
  status: number;
  /** process.hrtime.bigint() when the request arrived and when its answer was written (timelines in benchmarks). */
  arrivedNs: bigint;
  answeredNs?: bigint;
  /** refresh_token grants: the account the grant is for (tests mint one per connection), once oidc-provider read the token. */
  accountId?: string;
  /** refresh_token grants: a hash of the refresh token presented (never the token), to find one presented twice. */
  presentedTokenHash?: string;
  /** oidc-provider's reason when it refused the grant ("refresh token already used", ...). */
  error?: string;
}

export interface OidcTestServer {
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string;
  provider: Provider;
  /** Every POST to the token endpoint, in order. */
  tokenCalls: TokenCall[];
  /** Client ID Metadata Documents oidc-provider fetched, in order. */
  metadataDocumentFetches: MetadataDocumentFetch[];
  refreshCalls(): number;
  /** Makes the next `n` token requests answer with this status (e.g. 503, or 429 with Retry-After). */
  failNext(n: number, status: number, headers?: Record<string, string>): void;
  /** Delays every token response by `ms` (to widen race windows). */
  setTokenDelay(ms: number): void;
  /** Issues tokens through the server's own models, as if an authorization-code grant had happened. */
  mintTokens(opts: {
    clientId: string;
    accountId?: string;
    scope?: string;
  }): Promise<{ accessToken: string; refreshToken: string; expiresIn: number }>;
  /** Revokes a refresh token (and with it the grant) at the real revocation endpoint. */
  revoke(token: string, client: TestClient): Promise<void>;
  close(): Promise<void>;
}

export async function startOidcServer(opts: OidcServerOptions): Promise<OidcTestServer> {
  const accessTokenTtl = opts.accessTokenTtl ?? 60;
  const cimd = opts.clientIdMetadataDocuments;
  const metadataDocumentFetches: MetadataDocumentFetch[] = [];
  const cimdAgent = cimd ? new Agent({ connect: { ca: cimd.ca } }) : undefined;
  async function fetchMetadataDocument(url: string, init?: RequestInit): Promise<Response> {
    const res = await undiciFetch(url, { headers: init?.headers as Record<string, string>, redirect: 'manual', dispatcher: cimdAgent });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text
    }
    metadataDocumentFetches.push({ url, status: res.status, body });
    return new Response(text, { status: res.status, headers: res.headers as unknown as Headers });
  }
  const host = opts.host ?? '127.0.0.1';
  // https.Server answers requests as http.Server does; the wrapper needs only that.
  const mutual = opts.mutualTls ? { requestCert: true, rejectUnauthorized: false, ca: opts.mutualTls.ca } : {};
  const server: Server = opts.tls
    ? (createTlsServer({ key: opts.tls.key, cert: opts.tls.cert, ...mutual }) as unknown as Server)
    : createServer();
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as { port: number };
  const issuer = `${opts.tls ? 'https' : 'http'}://${host}:${port}`;

  const provider = new Provider(issuer, {
    clients: opts.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris ?? ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      response_types: ['code'],
      token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? 'client_secret_post',
      // Served by this wrapper and fetched by oidc-provider: inline JWKs must be plain objects of its own realm.
      ...(c.jwks ? { jwks_uri: `${issuer}/test-jwks/${encodeURIComponent(c.clientId)}` } : {}),
      ...(c.tlsClientAuthSubjectDn ? { tls_client_auth_subject_dn: c.tlsClientAuthSubjectDn } : {}),
    })),
    scopes: ['openid', 'offline_access', 'profile', 'email', 'read', 'write', ...(opts.resourceIndicators?.scopes ?? [])],
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      ...(opts.dynamicRegistration ? { registration: { enabled: true } } : {}),
      ...(opts.mutualTls ? { mTLS: mutualTlsFeature() } : {}),
      ...(opts.resourceIndicators ? { resourceIndicators: resourceIndicators(opts.resourceIndicators) } : {}),
      ...(cimd
        ? {
            clientIdMetadataDocument: {
              enabled: true,
              ack: 'draft-02',
              allowFetch: async (_ctx: unknown, clientId: string) => clientId.startsWith(cimd.urlPrefix),
            },
          }
        : {}),
    },
    ...(opts.mutualTls
      ? { clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt', 'tls_client_auth'] }
      : {}),
    pkce: { required: () => true },
    rotateRefreshToken: () => true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: accessTokenTtl,
      ClientCredentials: accessTokenTtl,
      RefreshToken: opts.refreshTokenTtl ?? 24 * 3600,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 24 * 3600,
      IdToken: 3600,
    },
    // Its own test-jwks/ URL is on loopback, which oidc-provider's SSRF guard refuses: that one URL goes without it;
    // so do the metadata documents under the allowed prefix (over TLS with the test CA).
    fetch: (url, init) => {
      if (typeof url === 'string' && url.startsWith(`${issuer}/test-jwks/`))
        return fetch(url, { ...init, dispatcher: undefined } as RequestInit);
      if (cimd && typeof url === 'string' && url.startsWith(cimd.urlPrefix)) return fetchMetadataDocument(url, init);
      return fetch(url, init);
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, email: `${sub}@example.test` }) }),
    // Quiet: the provider's own error renderer, without its console noise.
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><title>error</title><pre>${String(out.error)}: ${String(out.error_description ?? '')}</pre>`;
    },
  });
  provider.proxy = false;

  const clientJwks = (clientId: string) => opts.clients.find((c) => c.clientId === clientId)?.jwks;
  const tokenCalls: TokenCall[] = [];
  let failures: Array<{ status: number; headers: Record<string, string> }> = [];
  let delayMs = 0;
  const callback = provider.callback();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const jwks = req.method === 'GET' && req.url?.startsWith('/test-jwks/') ? clientJwks(decodeURIComponent(req.url.slice(11))) : undefined;
    if (jwks) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
      return;
    }
    if (req.method === 'POST' && req.url?.startsWith('/token') && !req.url.startsWith('/token/')) {
      void handleToken(req, res);
      return;
    }
    void callback(req, res);
  });

  // Grant type comes from oidc-provider's own events, so the request body reaches it untouched.
  const pending = new Map<IncomingMessage, TokenCall>();
  type GrantContext = {
    req: IncomingMessage;
    oidc?: { params?: { grant_type?: unknown; refresh_token?: unknown }; entities?: { RefreshToken?: { accountId?: string } } };
  };
  const noteGrant = (ctx: GrantContext, err?: Error) => {
    const call = pending.get(ctx.req);
    if (!call) return;
    call.grantType = String(ctx.oidc?.params?.grant_type ?? 'unknown');
    const presented = ctx.oidc?.params?.refresh_token;
    if (call.grantType === 'refresh_token' && typeof presented === 'string') {
      call.presentedTokenHash = createHash('sha256').update(presented).digest('hex').slice(0, 16);
      call.accountId = ctx.oidc?.entities?.RefreshToken?.accountId;
    }
    if (err) call.error = (err as Error & { error_description?: string }).error_description ?? err.message;
  };
  provider.on('grant.success', (ctx: GrantContext) => noteGrant(ctx));
  provider.on('grant.error', (ctx: GrantContext, err: Error) => noteGrant(ctx, err));

  async function handleToken(req: IncomingMessage, res: ServerResponse) {
    const call: TokenCall = { grantType: 'unknown', at: Date.now(), status: 0, arrivedNs: process.hrtime.bigint() };
    tokenCalls.push(call);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    const failure = failures.shift();
    if (failure) {
      req.resume();
      call.grantType = 'failed-before-parse';
      call.status = failure.status;
      res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
      res.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: 'injected by the test' }));
      return;
    }
    pending.set(req, call);
    res.on('finish', () => {
      call.answeredNs = process.hrtime.bigint();
      call.status = res.statusCode;
      pending.delete(req);
    });
    void callback(req, res);
  }

  return {
    issuer,
    authorizationUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revocationUrl: `${issuer}/token/revocation`,
    provider,
    tokenCalls,
    metadataDocumentFetches,
    /** Token requests that were refresh_token grants (injected failures count too: they reached the endpoint). */
    refreshCalls: () => tokenCalls.filter((c) => c.grantType === 'refresh_token' || c.grantType === 'failed-before-parse').length,
    failNext(n, status, headers = {}) {
      failures = Array.from({ length: n }, () => ({ status, headers }));
    },
    setTokenDelay(ms) {
      delayMs = ms;
    },
    async mintTokens({ clientId, accountId = 'end-user-1', scope = 'openid offline_access read' }) {
      const oidcClient = await provider.Client.find(clientId);
      if (!oidcClient) throw new Error(`unknown client ${clientId}`);
      const grant = new provider.Grant({ accountId, clientId });
      grant.addOIDCScope(scope);
      const grantId = await grant.save();
      const common = { accountId, client: oidcClient, grantId, scope, gty: 'authorization_code' };
      const at = new provider.AccessToken(common);
      const accessToken = await at.save();
      const rt = new provider.RefreshToken({ ...common, rotations: 0, iat: Math.floor(Date.now() / 1000) });
      const refreshToken = await rt.save();
      return { accessToken, refreshToken, expiresIn: accessTokenTtl };
    },
    async revoke(token, c) {
      const res = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: c.clientId, client_secret: c.clientSecret }),
      });
      if (res.status !== 200) throw new Error(`revocation failed: ${res.status} ${await res.text()}`);
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
        void cimdAgent?.close();
      }),
  };
}

/** oidc-provider's resource indicators: the listed resources are resource servers with these scopes. */
function resourceIndicators(ri: { resources: string[]; scopes: string[] }) {
  return {
    enabled: true,
    // A request without `resource` gets no resource-server token (tokens are for the named resource only).
    defaultResource: () => undefined,
    useGrantedResource: () => true,
    getResourceServerInfo: (_ctx: unknown, resource: string) => {
      if (!ri.resources.includes(resource)) throw new oidcErrors.InvalidTarget();
      return { scope: ri.scopes.join(' '), audience: resource, accessTokenFormat: 'opaque' as const, accessTokenTTL: undefined };
    },
  };
}

/** oidc-provider's mTLS feature over node's TLS socket: the peer's certificate, verified against the server's `ca`. */
function mutualTlsFeature() {
  const peer = (ctx: { socket: unknown }) => {
    const cert = (ctx.socket as TLSSocket).getPeerCertificate();
    return cert?.raw ? new X509Certificate(cert.raw) : undefined;
  };
  return {
    enabled: true,
    tlsClientAuth: true,
    getCertificate: peer,
    certificateAuthorized: (ctx: { socket: unknown }) => (ctx.socket as TLSSocket).authorized,
    certificateSubjectMatches: (ctx: { socket: unknown }, property: string, expected: string) =>
      property === 'tls_client_auth_subject_dn' && peer(ctx)?.subject === expected,
  };
}
