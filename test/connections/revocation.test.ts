/**
 * Deleting a connection (DELETE /connections/{id}) first revokes its grant where the Provider declares
 * `revocation`: RFC 7009 at a real authorization server (oidc-provider's revocation endpoint, the
 * client authenticated in the body), a provider's own shape (a JSON body with HTTP Basic client auth
 * and DELETE, GitHub's grant deletion) at a loopback peer; and a revocation endpoint that fails or
 * hangs neither blocks nor fails the delete. The operation log says what happened, without a token.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { REVOCATION_TIMEOUT_SECONDS } from '../../src/auth/grant-revocation.js';
import { importOAuth2 } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const kc = testKubeConfig();
const CLIENT = { clientId: 'revoking-client', clientSecret: 'revoking-client-secret-0123456789' };
const P = {
  oidc: `revoke-oidc-${process.pid}`,
  github: `revoke-grant-${process.pid}`,
  failing: `revoke-failing-${process.pid}`,
  hanging: `revoke-hanging-${process.pid}`,
  slack: `revoke-slack-${process.pid}`,
};

let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let replica: Replica;
let oidc: OidcTestServer;
let peer: Upstream;

beforeAll(async () => {
  oidc = await startOidcServer({ clients: [CLIENT], accessTokenTtl: 3600 });
  peer = await startUpstream();
  peer.on('/applications/', (_req, res) => {
    res.writeHead(204).end();
  });
  peer.on('/failing/revoke', (_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
  });
  // Slack's auth.revoke: HTTP 200 either way, {"ok": false, "error": ...} when it did not revoke
  // (https://api.slack.com/methods/auth.revoke).
  peer.on('/api/auth.revoke', (req, res) => {
    const ok = req.headers.authorization === 'Bearer xoxb-revocable-0123456789';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { ok: true, revoked: true } : { ok: false, error: 'invalid_auth' }));
  });
  // Never answers: the delete must go on when the revocation's time is up.
  peer.on('/hanging/revoke', () => undefined);
  ns = await createTestNamespace(kc, 'revocation');
  const oauth = { authMode: 'OAUTH2' as const, authorizationUrl: `${peer.origin}/authorize`, tokenUrl: `${peer.origin}/token` };
  await applyProvider(kc, P.oidc, {
    displayName: 'Acme ID',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    revocation: { url: oidc.revocationUrl },
  });
  await applyProvider(kc, P.github, {
    displayName: 'Code Host',
    ...oauth,
    revocation: {
      url: `${peer.origin}/applications/\${clientId}/grant`,
      method: 'DELETE',
      token: 'access_token',
      tokenIn: 'json',
      tokenField: 'access_token',
      clientAuth: 'basic',
    },
  });
  await applyProvider(kc, P.failing, { displayName: 'Flaky', ...oauth, revocation: { url: `${peer.origin}/failing/revoke` } });
  await applyProvider(kc, P.hanging, { displayName: 'Stuck', ...oauth, revocation: { url: `${peer.origin}/hanging/revoke` } });
  // As the catalog's slack: errors in a 200 answer ({"ok": false}), the access token revoked as a bearer.
  await applyProvider(kc, P.slack, {
    displayName: 'Chatter',
    ...oauth,
    tokenResponse: { errorWhen: { path: 'ok', equals: false } },
    revocation: { url: `${peer.origin}/api/auth.revoke`, token: 'access_token', tokenIn: 'bearer' },
  });
  for (const [id, provider] of Object.entries(P)) await createIntegration(kc, ns.name, id, { provider }, CLIENT);
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  replica = await startReplica(kc, { namespaces: [ns.name], identity: 'revocation', key: env.secretKey });
  await eventually(
    () =>
      replica.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      Object.entries(P).every(
        ([id, p]) => replica.ctx.catalog.getProvider(p) && replica.ctx.catalog.readSecretValue(ns.name, `${id}-client`, 'clientSecret'),
      ),
  );
});

afterAll(async () => {
  await replica?.stop();
  await Promise.all(Object.values(P).map((p) => deleteProvider(kc, p)));
  await oidc?.close();
  await peer?.close();
  await ns?.delete();
});

/** A connection with the given tokens, stored as an import would store it. */
async function connection(integration: keyof typeof P, connectionId: string, tokens: { accessToken: string; refreshToken: string }) {
  await replica.ctx.connections.createConnection({
    namespace: ns.name,
    spec: { integration, provider: P[integration], connectionId, authMode: 'OAUTH2', endUser: { id: 'u1' } },
    credentials: {
      type: 'OAUTH2',
      access_token: tokens.accessToken,
      ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      raw: {},
    },
  });
  await eventually(() => replica.ctx.connections.getConnection(ns.name, integration, connectionId));
}

async function deleteAndLog(integration: string, connectionId: string) {
  const res = await replica.call('DELETE', `/connections/${connectionId}?provider_config_key=${integration}`);
  expect([res.status, res.body]).toEqual([200, { success: true }]);
  expect(replica.ctx.connections.getConnection(ns.name, integration, connectionId)).toBeUndefined();
  return eventually(async () => {
    const logs = await replica.call('GET', `/logs?integration=${integration}&operation=deletion`);
    return (logs.body.logs as Array<{ connection_id: string; outcome: string; messages: string[] }> | undefined)?.find(
      (e) => e.connection_id === connectionId,
    );
  });
}

const refreshStatus = async (refreshToken: string) =>
  (
    await fetch(oidc.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        ...{ client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret },
      }),
    })
  ).status;

describe('grants revoked on delete', () => {
  it('revokes the grant at an RFC 7009 endpoint before deleting: the refresh and access tokens stop working', async () => {
    const { refreshToken, accessToken, conn } = await importOAuth2(replica.ctx, oidc, CLIENT, ns.name, 'oidc', P.oidc, {
      connectionId: 'rfc7009',
    });
    expect(conn.resource.spec.connectionId).toBe('rfc7009');
    await eventually(() => replica.ctx.connections.getConnection(ns.name, 'oidc', 'rfc7009'));
    expect((await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(200);
    const entry = await deleteAndLog('oidc', 'rfc7009');
    expect(entry.outcome).toBe('success');
    expect(entry.messages[0]).toBe('Grant revoked at Acme ID (refresh token)');
    expect(await refreshStatus(refreshToken)).toBe(400);
    expect((await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(401);
    expect(JSON.stringify(entry)).not.toContain(refreshToken);
  });

  it("sends a provider's own shape as declared: DELETE with a JSON body and the client's HTTP Basic", async () => {
    await connection('github', 'own-shape', { accessToken: 'gho_access_0123456789', refreshToken: 'ghr_refresh_0123456789' });
    const before = peer.requests.length;
    const entry = await deleteAndLog('github', 'own-shape');
    const [seen] = peer.requests.slice(before).filter((r) => r.url.startsWith('/applications/'));
    expect(seen).toBeDefined();
    expect(seen!.method).toBe('DELETE');
    expect(seen!.url).toBe(`/applications/${CLIENT.clientId}/grant`);
    expect(seen!.headers.authorization).toBe(`Basic ${Buffer.from(`${CLIENT.clientId}:${CLIENT.clientSecret}`).toString('base64')}`);
    expect(JSON.parse(seen!.body.toString('utf8'))).toEqual({ access_token: 'gho_access_0123456789' });
    expect(entry.messages[0]).toBe('Grant revoked at Code Host (access token)');
  });

  it('deletes anyway when the revocation endpoint fails, and says so in the log without the token', async () => {
    await connection('failing', 'flaky', { accessToken: 'at-flaky-0123456789', refreshToken: 'rt-flaky-0123456789' });
    const before = peer.requests.length;
    const entry = await deleteAndLog('failing', 'flaky');
    const [seen] = peer.requests.slice(before).filter((r) => r.url === '/failing/revoke');
    // RFC 7009 form with the client in the body (tokenRequestAuthMethod unset).
    expect(Object.fromEntries(new URLSearchParams(seen!.body.toString('utf8')))).toEqual({
      token: 'rt-flaky-0123456789',
      token_type_hint: 'refresh_token',
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
    });
    expect(entry.outcome).toBe('success');
    expect(entry.messages[0]).toBe('Flaky did not revoke the grant (HTTP 500); the connection was deleted anyway');
    expect(JSON.stringify(entry)).not.toContain('rt-flaky');
  });

  it('reads a 200 answer as token answers are read: {"ok": false} is not revoked, {"ok": true} is', async () => {
    await connection('slack', 'not-revoked', { accessToken: 'xoxb-stale-0123456789', refreshToken: '' });
    const refused = await deleteAndLog('slack', 'not-revoked');
    expect(refused.outcome).toBe('success');
    expect(refused.messages[0]).toBe('Chatter did not revoke the grant (it answered invalid_auth); the connection was deleted anyway');
    expect(JSON.stringify(refused)).not.toContain('xoxb-stale');
    await connection('slack', 'revoked', { accessToken: 'xoxb-revocable-0123456789', refreshToken: '' });
    const revoked = await deleteAndLog('slack', 'revoked');
    expect(revoked.messages[0]).toBe('Grant revoked at Chatter (access token)');
  });

  it('deletes anyway when the revocation endpoint never answers (bounded)', async () => {
    expect(REVOCATION_TIMEOUT_SECONDS).toBeLessThanOrEqual(10);
    await connection('hanging', 'stuck', { accessToken: 'at-stuck-0123456789', refreshToken: 'rt-stuck-0123456789' });
    const entry = await deleteAndLog('hanging', 'stuck');
    expect(entry.messages[0]).toBe('Revoking the grant at Stuck timed out; the connection was deleted anyway');
  });
});
