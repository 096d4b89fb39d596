/**
 * The proxy and token refresh, with the shared single-flight TokenRefresher (as createApp wires it) and a real OAuth 2
 * server (oidc-provider) as the provider's token endpoint: an expired token is refreshed before
 * the request; a 401 from the provider triggers one forced refresh and one retry.
 */
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { proxyHeaders, rawRequest, startProxyBed, type ProxyBed } from '../support/proxy-bed.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const CLIENT = { clientId: 'proxy-client', clientSecret: 'proxy-client-secret' };
let oidc: OidcTestServer;
let h: ProxyBed;
let up: Upstream;
/** Access tokens the upstream API accepts: only the ones the OAuth server issued most recently. */
const revoked = new Set<string>();

beforeAll(async () => {
  oidc = await startOidcServer({ clients: [CLIENT] });
  up = await startUpstream();
  h = await startProxyBed('proxy-refresh');
  up.on('/api/', (req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || revoked.has(token)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
      res.end('{"error":"invalid_token"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true }));
  });
  const provider = await h.addProvider('oauth2-refresh', {
    displayName: 'Refreshing',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    proxy: { baseUrl: `${up.origin}/api` },
  });
  await h.addIntegration('refreshing', provider, CLIENT);
});

afterAll(async () => {
  await h?.close();
  await up?.close();
  await oidc?.close();
});

async function connectionWith(connectionId: string, expiresAt: Date): Promise<{ accessToken: string }> {
  const minted = await oidc.mintTokens({ clientId: CLIENT.clientId });
  await h.addConnection(
    { integration: 'refreshing', provider: `oauth2-refresh-${h.suffix}`, connectionId, authMode: 'OAUTH2' },
    { type: 'OAUTH2', access_token: minted.accessToken, refresh_token: minted.refreshToken, expires_at: expiresAt.toISOString(), raw: {} },
  );
  return { accessToken: minted.accessToken };
}

const storedToken = (connectionId: string) =>
  h.store.connections.getConnection(h.namespace, 'refreshing', connectionId)?.credentials.access_token;

describe('proxy and token refresh', () => {
  it('a 401 from the provider: one forced refresh, one retry with the new token, then success', async () => {
    const { accessToken } = await connectionWith('revoked', new Date(Date.now() + 3600_000));
    revoked.add(accessToken); // the provider no longer accepts it, though it has not expired
    const before = oidc.refreshCalls();
    up.requests.length = 0;

    const res = await rawRequest(h.server.port, {
      method: 'POST',
      path: '/proxy/things',
      body: 'replayed',
      headers: proxyHeaders(h, 'refreshing', 'revoked'),
    });
    expect(res.status).toBe(200);
    expect(oidc.refreshCalls() - before).toBe(1);
    const sent = up.requests.map((r) => r.headers.authorization);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toBe(`Bearer ${accessToken}`);
    const fresh = storedToken('revoked');
    expect(fresh).not.toBe(accessToken);
    expect(sent[1]).toBe(`Bearer ${fresh}`);
    expect(up.requests.map((r) => r.body.toString())).toEqual(['replayed', 'replayed']);
  });

  it('a second 401 after the refresh goes back to the caller (no loop)', async () => {
    await connectionWith('always-401', new Date(Date.now() + 3600_000));
    const before = oidc.refreshCalls();
    up.on('/api/never', (_req, res) => {
      res.writeHead(401);
      res.end('no');
    });
    up.requests.length = 0;
    const res = await rawRequest(h.server.port, { path: '/proxy/never', headers: proxyHeaders(h, 'refreshing', 'always-401') });
    expect(res.status).toBe(401);
    expect(res.body.toString()).toBe('no');
    expect(up.requests).toHaveLength(2);
    expect(oidc.refreshCalls() - before).toBe(1);
  });

  it('an expired token is refreshed before the request (once, for concurrent requests)', async () => {
    const { accessToken } = await connectionWith('expired', new Date(Date.now() - 60_000));
    revoked.add(accessToken);
    const before = oidc.refreshCalls();
    up.requests.length = 0;
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        rawRequest(h.server.port, { path: '/proxy/list', headers: proxyHeaders(h, 'refreshing', 'expired') }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(oidc.refreshCalls() - before).toBe(1);
    const fresh = storedToken('expired');
    expect(up.requests.map((r) => r.headers.authorization)).toEqual(Array(4).fill(`Bearer ${fresh}`));
  });

  it('an expired token whose refresh the provider refuses is still sent: the provider decides', async () => {
    const minted = await oidc.mintTokens({ clientId: CLIENT.clientId });
    await h.addConnection(
      { integration: 'refreshing', provider: `oauth2-refresh-${h.suffix}`, connectionId: 'refresh-refused', authMode: 'OAUTH2' },
      {
        type: 'OAUTH2',
        access_token: minted.accessToken,
        refresh_token: 'a-refresh-token-the-server-never-issued',
        expires_at: new Date(Date.now() - 60_000).toISOString(),
        raw: {},
      },
    );
    up.requests.length = 0;
    const res = await rawRequest(h.server.port, { path: '/proxy/list', headers: proxyHeaders(h, 'refreshing', 'refresh-refused') });
    // The refresher's refusal (a 424 on the fetch route) is not the proxy's answer: the stored token went out.
    expect(res.status).toBe(200);
    expect(up.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${minted.accessToken}`]);
    expect(storedToken('refresh-refused')).toBe(minted.accessToken);
  });
});
