/**
 * Host injection through connection configuration (issue 11, attack 1) against the real API server:
 * the shipped zoho-crm Provider, its Connect OAuth start and callback, both import endpoints and a
 * reconnect. Zoho names the account's data centre itself (the redirect's `accounts-server`, the token
 * answer's `api_domain`); an accounts server of `accounts.zoho.evil.example` would put the token request
 * (the code, the client secret, every refresh token) there: it must be refused before any URL is built,
 * whether it comes on the callback or from an import. Connections stored with the old typed
 * `domainExtension` keep working after the one-off migration (`latchkey migrate zoho-data-centre`, src/migrations/zoho-data-centre.ts).
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { eventually, createTestNamespace, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { checkConnectionConfig, fillProviderUrl } from '../../src/catalog/connection-config.js';
import { ConnectionRewrites } from '../../src/k8s/connection-rewrites.js';
import { GROUP, VERSION, type ConnectionResource } from '../../src/k8s/resources.js';
import { runMigration } from '../../src/migrations/run-migration.js';
import { zohoDataCentre, zohoDataCentreConfig } from '../../src/migrations/zoho-data-centre.js';
import { readCatalog } from '../support/catalog-files.js';
import { sealSession } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const PROVIDER = `zoho-crm-${process.pid}`;
const CLIENT = { clientId: 'zoho-client-id', clientSecret: 'zoho-client-secret-value' };
const zoho = readCatalog().find((m) => m.metadata.name === 'zoho-crm')!.spec;
const EU = { accountsServer: 'accounts.zoho.eu', apiDomain: 'www.zohoapis.eu' };

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
      latchkey.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      latchkey.ctx.catalog.getProvider(PROVIDER) &&
      latchkey.ctx.catalog.getIntegration(ns.name, 'zoho') &&
      latchkey.ctx.catalog.readSecretValue(ns.name, 'zoho-client', 'clientId'),
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
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { status: res.status, text: await res.text(), cookie };
}

/** An import of a zoho connection: `/connections`, or the deprecated flat `/connection`. */
const importZoho = (fields: Record<string, unknown>, path: '/connections' | '/connection' = '/connections') =>
  latchkey.call('POST', path, { key: env.secretKey, body: { provider_config_key: 'zoho', ...fields } });

const urlOf = (start: { text: string }) => new URL((JSON.parse(start.text) as { data: { url: string } }).data.url);

const session = (reconnect?: { connectionId: string; integration: string }) =>
  sealSession(env.secretKey, {
    namespace: ns.name,
    endUser: { id: 'u1' },
    allowedIntegrations: ['zoho'],
    ...(reconnect ? { reconnect } : {}),
  });

describe("zoho-crm's data centre", () => {
  it('starts at accounts.zoho.com without asking the end user anything, and refuses a typed data centre', async () => {
    const good = await oauthStart(session(), {});
    expect(good.status).toBe(200);
    expect(urlOf(good).host).toBe('accounts.zoho.com');
    const typed = await oauthStart(session(), { accountsServer: 'accounts.zoho.eu' });
    expect(typed.status).toBe(400);
    expect(JSON.parse(typed.text)).toMatchObject({
      error: { code: 'invalid_connection_config', errors: [{ path: 'connectionConfig.accountsServer' }] },
    });
  });

  it('refuses a callback naming an accounts server outside Zoho before the code is sent anywhere, storing nothing', async () => {
    const start = await oauthStart(session(), {});
    const callback = new URL(`${latchkey.url}/oauth/callback`);
    callback.searchParams.set('code', 'the-code');
    callback.searchParams.set('state', urlOf(start).searchParams.get('state')!);
    callback.searchParams.set('location', 'eu');
    callback.searchParams.set('accounts-server', 'https://accounts.zoho.com.evil.example');
    const res = await fetch(callback, { headers: { cookie: start.cookie } });
    const page = await res.text();
    expect(res.status).toBe(502);
    expect(page).toContain('accountsServer');
    expect(page).not.toContain('evil');
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(0);
  });

  it('refuses it, and missing keys, on both import endpoints, storing nothing', async () => {
    const credentials = { type: 'OAUTH2', access_token: 'at-1', refresh_token: 'rt-1' };
    const evil = { ...EU, accountsServer: 'accounts.zoho.evil.example' };
    const imported = await importZoho({ connection_id: 'c-evil', credentials, connection_config: evil });
    expect(imported.status).toBe(400);
    expect(imported.body.error).toMatchObject({
      code: 'invalid_connection_config',
      errors: [{ path: 'connection_config.accountsServer' }],
    });
    const missing = await importZoho({ connection_id: 'c-missing', credentials });
    expect(missing.status).toBe(400);
    expect(missing.body.error.errors).toContainEqual({ path: 'connection_config.accountsServer', message: '"accountsServer" is required' });
    const deprecated = await importZoho(
      {
        connection_id: 'c-evil-2',
        access_token: 'at-2',
        no_expiration: true,
        connection_config: { ...EU, apiDomain: 'www.zohoapis.evil.example' },
      },
      '/connection',
    );
    expect(deprecated.status).toBe(400);
    expect(deprecated.body.error.code).toBe('invalid_connection_config');
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(0);
  });

  it('re-imports keep the stored configuration unless a valid one is sent', async () => {
    const credentials = { type: 'OAUTH2', access_token: 'at-3', refresh_token: 'rt-3' };
    const fields = { connection_id: 'c-keep', credentials, connection_config: EU };
    expect((await importZoho(fields)).status).toBe(201);
    const again = await importZoho({
      ...fields,
      credentials: { ...credentials, access_token: 'at-4' },
      connection_config: { ...EU, accountsServer: 'accounts.zoho.evil.example' },
    });
    expect(again.status).toBe(400);
    const stored = latchkey.ctx.connections.getConnection(ns.name, 'zoho', 'c-keep')!;
    expect(stored.resource.spec.connectionConfig).toEqual(EU);
    expect(stored.credentials).toMatchObject({ access_token: 'at-3' });
  });

  it('a reconnect uses the stored configuration and may not point the connection at another data centre', async () => {
    const au = { accountsServer: 'accounts.zoho.com.au', apiDomain: 'www.zohoapis.com.au' };
    const credentials = { type: 'OAUTH2', access_token: 'at-5', refresh_token: 'rt-5' };
    expect((await importZoho({ connection_id: 'c-reconnect', credentials, connection_config: au })).status).toBe(201);
    await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'zoho', 'c-reconnect'));
    const token = session({ connectionId: 'c-reconnect', integration: 'zoho' });
    for (const other of ['accounts.zoho.evil.example', 'accounts.zoho.eu']) {
      const moved = await oauthStart(token, { accountsServer: other });
      expect(moved.status).toBe(400);
      expect(JSON.parse(moved.text)).toMatchObject({ error: { code: 'invalid_connection_config' } });
    }
    const kept = await oauthStart(token, {});
    expect(kept.status).toBe(200);
    expect(urlOf(kept).host).toBe('accounts.zoho.com');
    expect((await oauthStart(token, au)).status).toBe(200);
  });

  it('a connection stored with the old typed domainExtension works again after the one-off migration', async () => {
    const credentials = { type: 'OAUTH2', access_token: 'at-6', refresh_token: 'rt-6' };
    expect((await importZoho({ connection_id: 'c-old', credentials, connection_config: EU })).status).toBe(201);
    // As stored before the upgrade: the end user typed the extension.
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ref = { group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections' };
    const name = latchkey.ctx.connections.getConnection(ns.name, 'zoho', 'c-old')!.resource.metadata.name!;
    const current = (await custom.getNamespacedCustomObject({ ...ref, name })) as ConnectionResource;
    await custom.replaceNamespacedCustomObject({
      ...ref,
      name,
      body: { ...current, spec: { ...current.spec, connectionConfig: { domainExtension: 'eu' } } },
    });
    await eventually(
      () => latchkey.ctx.connections.getConnection(ns.name, 'zoho', 'c-old')?.resource.spec.connectionConfig?.domainExtension,
    );
    // Unmigrated, it has no token URL to refresh at: the refresh fails before any request.
    const before = await latchkey.call('GET', '/connections/c-old?provider_config_key=zoho&force_refresh=true', { key: env.secretKey });
    expect(before.status).not.toBe(200);

    const connections = new ConnectionRewrites(kc);
    const migrate = (dryRun: boolean) =>
      runMigration(zohoDataCentre, { connections, oplog: latchkey.ctx.oplog }, { dryRun, namespaces: [ns.name], args: [PROVIDER] });
    expect(await migrate(true)).toEqual({ migration: 'zoho-data-centre', dryRun: true, changed: [`${ns.name}/${name}`], attention: [] });
    expect((await custom.getNamespacedCustomObject({ ...ref, name })) as ConnectionResource).toMatchObject({
      spec: { connectionConfig: { domainExtension: 'eu' } },
    });
    expect(await migrate(false)).toEqual({ migration: 'zoho-data-centre', dryRun: false, changed: [`${ns.name}/${name}`], attention: [] });
    const migrated = await eventually(() => {
      const c = latchkey.ctx.connections.getConnection(ns.name, 'zoho', 'c-old');
      return c?.resource.spec.connectionConfig?.accountsServer ? c : undefined;
    });
    expect(migrated.resource.spec.connectionConfig).toEqual(EU);
    expect(checkConnectionConfig(zoho, migrated.resource.spec.connectionConfig, {})).toEqual(EU);
    expect(fillProviderUrl(zoho, zoho.tokenUrl!, EU)).toBe('https://accounts.zoho.eu/oauth/v2/token');
    expect(fillProviderUrl(zoho, zoho.proxy!.baseUrl!, EU)).toBe('https://www.zohoapis.eu');
    // The change is in the connection's operation log.
    const logs = await latchkey.call('GET', '/logs?connection_id=c-old&operation=migration', { key: env.secretKey });
    expect(logs.status).toBe(200);
    expect(logs.body).toMatchObject({
      logs: [{ operation: 'migration', step: 'zoho-data-centre', outcome: 'success', connection_id: 'c-old', integration: 'zoho' }],
    });
    // Run again: nothing left to do.
    expect(await migrate(false)).toEqual({ migration: 'zoho-data-centre', dryRun: false, changed: [], attention: [] });

    // An extension the table does not know is left as it is and listed.
    const again = (await custom.getNamespacedCustomObject({ ...ref, name })) as ConnectionResource;
    await custom.replaceNamespacedCustomObject({
      ...ref,
      name,
      body: { ...again, spec: { ...again.spec, connectionConfig: { domainExtension: 'mars' } } },
    });
    expect(await migrate(false)).toEqual({
      migration: 'zoho-data-centre',
      dryRun: false,
      changed: [],
      attention: [{ connection: `${ns.name}/${name}`, reason: 'unknown Zoho domain extension "mars": reconnect it' }],
    });
    await connections.close();
  });

  it("maps every extension the old form offered to a data centre the Provider's rules accept", () => {
    for (const ext of ['com', 'eu', 'in', 'com.au', 'jp', 'ca', 'com.cn', 'sa']) {
      const config = zohoDataCentreConfig({ domainExtension: ext })!;
      expect(checkConnectionConfig(zoho, config, {})).toEqual(config);
    }
    expect(zohoDataCentreConfig({ domainExtension: 'ca' })).toEqual({
      accountsServer: 'accounts.zohocloud.ca',
      apiDomain: 'www.zohoapis.ca',
    });
    expect(zohoDataCentreConfig({ domainExtension: 'evil.example' })).toBeUndefined();
    expect(zohoDataCentreConfig(EU)).toBeUndefined();
  });
});
