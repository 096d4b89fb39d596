/**
 * Compatibility: the official Nango Node client (@nangohq/node), pointed at Latchkey with an
 * environment's secret key, works unchanged for providers, connections (import, get, token with
 * refresh, list, delete), metadata and connect sessions.
 */
import { Nango } from '@nangohq/node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const client = { clientId: 'latchkey-nango-test', clientSecret: 'nango-test-secret-0123456789' };
const OAUTH = 'rest-nango-oauth';
const KEYS = 'rest-nango-apikey';
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let oidc: OidcTestServer;
let api: Replica;
let nango: Nango;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'rest-nango');
  oidc = await startOidcServer({ clients: [client], accessTokenTtl: 120 });
  await applyProvider(kc, OAUTH, {
    displayName: 'Nango OAuth',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    categories: ['test'],
  });
  await applyProvider(kc, KEYS, { displayName: 'Nango Keys', authMode: 'API_KEY' });
  env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'oauth', { provider: OAUTH }, { clientId: client.clientId, clientSecret: client.clientSecret });
  await createIntegration(kc, ns.name, 'keys', { provider: KEYS });
  api = await startReplica(kc, { namespaces: [ns.name], key: env.secretKey });
  await eventually(
    () =>
      api.ctx.store.getIntegration(ns.name, 'keys') && api.ctx.store.getIntegration(ns.name, 'oauth') && api.ctx.store.getProvider(KEYS),
  );
  await eventually(async () => (await api.call('GET', '/providers')).status === 200);
  nango = new Nango({ host: api.url, secretKey: env.secretKey });
});

afterAll(async () => {
  await api?.stop();
  await oidc?.close();
  await Promise.all([deleteProvider(kc, OAUTH), deleteProvider(kc, KEYS)]);
  await ns?.delete();
});

/** The client has no import method: its own HTTP instance and headers post the documented body. */
async function importWithClient(body: Record<string, unknown>) {
  const internals = nango as unknown as {
    http: { post(url: string, body: unknown, opts: unknown): Promise<{ status: number; data: any }> };
    enrichHeaders(h?: object): object;
  };
  return internals.http.post(`${api.url}/connections`, body, { headers: internals.enrichHeaders({}) });
}

describe('@nangohq/node against Latchkey', () => {
  it('reads providers', async () => {
    const one = await nango.getProvider({ provider: OAUTH });
    expect(one.data).toMatchObject({ name: OAUTH, display_name: 'Nango OAuth', auth_mode: 'OAUTH2', token_url: oidc.tokenUrl });
    const list = await nango.listProviders({ search: 'nango keys' });
    expect(list.data.map((p) => p.name)).toEqual([KEYS]);
  });

  it('imports, gets, lists and deletes connections', async () => {
    const created = await importWithClient({
      provider_config_key: 'keys',
      connection_id: 'nango-1',
      credentials: { type: 'API_KEY', apiKey: 'k-1' },
      end_user: { id: 'nango-user', email: 'n@example.test' },
      metadata: { plan: 'free' },
    });
    expect(created.status).toBe(201);
    expect(created.data.connection_id).toBe('nango-1');

    const conn = await nango.getConnection('keys', 'nango-1');
    expect(conn.credentials).toEqual({ type: 'API_KEY', apiKey: 'k-1' });
    expect(conn.end_user).toMatchObject({ id: 'nango-user', email: 'n@example.test' });
    expect(await nango.getToken('keys', 'nango-1')).toEqual({ type: 'API_KEY', apiKey: 'k-1' });

    const listed = await nango.listConnections({ userId: 'nango-user', integrationId: 'keys' });
    expect(listed.connections.map((c) => c.connection_id)).toEqual(['nango-1']);
    const legacy = await nango.listConnections('nango-1');
    expect(legacy.connections).toHaveLength(1);
    expect(legacy.connections[0]!.created).toEqual(expect.any(String));
    // waitForConnection's own query (end user ID) finds it too.
    const waiting = await nango.listConnections(undefined, undefined, { endUserId: 'nango-user' });
    expect(waiting.connections.find((c) => c.provider_config_key === 'keys')?.connection_id).toBe('nango-1');

    const deleted = await nango.deleteConnection('keys', 'nango-1');
    expect(deleted.status).toBe(200);
    await expect(nango.getConnection('keys', 'nango-1')).rejects.toMatchObject({ response: { status: 404 } });
  });

  it('gets a fresh OAuth 2 token (refresh on fetch) and the raw token response', async () => {
    const tokens = await oidc.mintTokens({ clientId: client.clientId });
    await importWithClient({
      provider_config_key: 'oauth',
      connection_id: 'nango-oauth',
      credentials: {
        type: 'OAUTH2',
        access_token: tokens.accessToken,
        refresh_token: tokens.refreshToken,
        expires_at: new Date(Date.now() - 1000).toISOString(),
      },
    });
    const token = await nango.getToken('oauth', 'nango-oauth');
    expect(typeof token).toBe('string');
    expect(token).not.toBe(tokens.accessToken);
    const raw = (await nango.getRawTokenResponse('oauth', 'nango-oauth')) as Record<string, unknown>;
    expect(raw.access_token).toBe(token);
    expect(raw).not.toHaveProperty('refresh_token');
    const withRefresh = await nango.getConnection('oauth', 'nango-oauth', false, true);
    expect((withRefresh.credentials as { refresh_token?: string }).refresh_token).toEqual(expect.any(String));
    const forced = await nango.getToken('oauth', 'nango-oauth', true);
    expect(forced).not.toBe(token);
  });

  it('sets and updates metadata of one or many connections', async () => {
    await importWithClient({ provider_config_key: 'keys', connection_id: 'meta-a', credentials: { type: 'API_KEY', apiKey: 'a' } });
    await importWithClient({ provider_config_key: 'keys', connection_id: 'meta-b', credentials: { type: 'API_KEY', apiKey: 'b' } });
    await nango.setMetadata('keys', 'meta-a', { one: 1, two: 2 });
    await nango.updateMetadata('keys', 'meta-a', { two: 'deux' });
    expect(await nango.getMetadata('keys', 'meta-a')).toEqual({ one: 1, two: 'deux' });
    await nango.setMetadata('keys', ['meta-a', 'meta-b'], { shared: true });
    expect(await nango.getMetadata('keys', 'meta-b')).toEqual({ shared: true });
    await expect(nango.setMetadata('keys', 'ghost', { x: 1 })).rejects.toMatchObject({ response: { status: 404 } });
  });

  it('creates connect and reconnect sessions', async () => {
    const session = await nango.createConnectSession({
      end_user: { id: 'cs-user', email: 'cs@example.test' },
      allowed_integrations: ['oauth'],
    });
    expect(session.data.token).toEqual(expect.any(String));
    expect(session.data.connect_link).toContain(encodeURIComponent(session.data.token));
    expect(Date.parse(session.data.expires_at)).toBeGreaterThan(Date.now());
    const reconnect = await nango.createReconnectSession({ connection_id: 'nango-oauth', integration_id: 'oauth' });
    expect(reconnect.data.token).toEqual(expect.any(String));
    await expect(nango.createConnectSession({ end_user: { id: 'x' }, allowed_integrations: ['nope'] })).rejects.toMatchObject({
      response: { status: 400 },
    });
  });
});
