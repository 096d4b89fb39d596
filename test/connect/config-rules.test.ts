/**
 * Host injection through connection configuration (issue 11, attack 1) against the real API server:
 * the shipped zoho-crm Provider, its Connect OAuth start, both import endpoints and a reconnect. A
 * domain extension of `evil.example` would put the token URL (and so the client secret and every
 * refresh token) on accounts.zoho.evil.example; it must be refused before any URL is built.
 */
import { eventually, createTestNamespace, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { readCatalog } from '../support/catalog-files.js';
import { sealSession } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const PROVIDER = `zoho-crm-${process.pid}`;
const CLIENT = { clientId: 'zoho-client-id', clientSecret: 'zoho-client-secret-value' };
const zoho = readCatalog().find((m) => m.metadata.name === 'zoho-crm')!.spec;

let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let latchkey: Replica;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'config-rules');
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  await applyProvider(kc, PROVIDER, zoho);
  await createIntegration(kc, ns.name, 'zoho', { provider: PROVIDER }, CLIENT);
  latchkey = await startReplica(kc, { namespaces: [ns.name], selfBaseUrl: true });
  await eventually(
    () =>
      latchkey.ctx.store.listEnvironments(ns.name).length > 0 &&
      latchkey.ctx.store.getProvider(PROVIDER) &&
      latchkey.ctx.store.getIntegration(ns.name, 'zoho') &&
      latchkey.ctx.store.readSecretValue(ns.name, 'zoho-client', 'clientId'),
  );
});

afterAll(async () => {
  await latchkey?.stop();
  await deleteProvider(kc, PROVIDER);
  await ns?.delete();
});

async function oauthStart(token: string, connectionConfig: Record<string, string>) {
  const res = await fetch(`${latchkey.url}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration: 'zoho', connectionConfig }),
  });
  return { status: res.status, text: await res.text() };
}

const session = (reconnect?: { connectionId: string; integration: string }) =>
  sealSession(env.secretKey, {
    namespace: ns.name,
    endUser: { id: 'u1' },
    allowedIntegrations: ['zoho'],
    ...(reconnect ? { reconnect } : {}),
  });

describe('zoho-crm domain extension', () => {
  it('refuses evil.example at OAuth start, naming the key, and builds the URL for a listed data centre', async () => {
    const bad = await oauthStart(session(), { domainExtension: 'evil.example' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({
      error: { code: 'invalid_connection_config', errors: [{ path: 'connectionConfig.domainExtension' }] },
    });
    expect(bad.text).not.toContain('evil');
    const good = await oauthStart(session(), { domainExtension: 'eu' });
    expect(good.status).toBe(200);
    expect(new URL((JSON.parse(good.text) as { data: { url: string } }).data.url).host).toBe('accounts.zoho.eu');
  });

  it('refuses it, and a missing key, on both import endpoints, storing nothing', async () => {
    const credentials = { type: 'OAUTH2', access_token: 'at-1', refresh_token: 'rt-1' };
    const imported = await latchkey.call('POST', '/connections', {
      key: env.secretKey,
      body: { provider_config_key: 'zoho', connection_id: 'c-evil', credentials, connection_config: { domainExtension: 'evil.example' } },
    });
    expect(imported.status).toBe(400);
    expect(imported.body.error).toMatchObject({
      code: 'invalid_connection_config',
      errors: [{ path: 'connection_config.domainExtension' }],
    });
    const missing = await latchkey.call('POST', '/connections', {
      key: env.secretKey,
      body: { provider_config_key: 'zoho', connection_id: 'c-missing', credentials },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.errors).toEqual([{ path: 'connection_config.domainExtension', message: '"domainExtension" is required' }]);
    const deprecated = await latchkey.call('POST', '/connection', {
      key: env.secretKey,
      body: {
        provider_config_key: 'zoho',
        connection_id: 'c-evil-2',
        access_token: 'at-2',
        no_expiration: true,
        connection_config: { domainExtension: 'evil.example' },
      },
    });
    expect(deprecated.status).toBe(400);
    expect(deprecated.body.error.code).toBe('invalid_connection_config');
    expect(latchkey.ctx.store.listConnections(ns.name)).toHaveLength(0);
  });

  it('re-imports keep the stored configuration unless a valid one is sent', async () => {
    const credentials = { type: 'OAUTH2', access_token: 'at-3', refresh_token: 'rt-3' };
    const body = { provider_config_key: 'zoho', connection_id: 'c-keep', credentials, connection_config: { domainExtension: 'eu' } };
    expect((await latchkey.call('POST', '/connections', { key: env.secretKey, body })).status).toBe(201);
    const again = await latchkey.call('POST', '/connections', {
      key: env.secretKey,
      body: { ...body, credentials: { ...credentials, access_token: 'at-4' }, connection_config: { domainExtension: 'evil.example' } },
    });
    expect(again.status).toBe(400);
    const stored = latchkey.ctx.store.getConnection(ns.name, 'zoho', 'c-keep')!;
    expect(stored.resource.spec.connectionConfig).toEqual({ domainExtension: 'eu' });
    expect(stored.credentials).toMatchObject({ access_token: 'at-3' });
  });

  it('a reconnect uses the stored configuration and may not point the connection at another data centre', async () => {
    const body = {
      provider_config_key: 'zoho',
      connection_id: 'c-reconnect',
      credentials: { type: 'OAUTH2', access_token: 'at-5', refresh_token: 'rt-5' },
      connection_config: { domainExtension: 'com.au' },
    };
    expect((await latchkey.call('POST', '/connections', { key: env.secretKey, body })).status).toBe(201);
    await eventually(() => latchkey.ctx.store.getConnection(ns.name, 'zoho', 'c-reconnect'));
    const token = session({ connectionId: 'c-reconnect', integration: 'zoho' });
    for (const other of ['evil.example', 'com']) {
      const moved = await oauthStart(token, { domainExtension: other });
      expect(moved.status).toBe(400);
      expect(JSON.parse(moved.text)).toMatchObject({ error: { code: 'invalid_connection_config' } });
    }
    const kept = await oauthStart(token, {});
    expect(kept.status).toBe(200);
    expect(new URL((JSON.parse(kept.text) as { data: { url: string } }).data.url).host).toBe('accounts.zoho.com.au');
    const same = await oauthStart(token, { domainExtension: 'com.au' });
    expect(same.status).toBe(200);
  });
});
