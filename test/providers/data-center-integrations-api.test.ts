/**
 * A Data Center Integration made through the REST integrations API (issue #57): `connection_config`, Latchkey's
 * extension of Nango's `POST /integrations` and `PATCH /integrations/{key}` bodies, sets the Integration's
 * `spec.connectionConfig` (the Provider's `setBy: integration` keys), checked by the Provider's rules (400 naming the
 * key, never the value), and `GET /integrations/{key}` shows it. An Integration so made connects in Chromium against
 * the Confluence Data Center simulator (test/support/simulators/confluence-data-center.ts) and proxies
 * GET /rest/api/user/current on the host the API set; one made without it answers 409 until a PATCH sets it.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { startSimulatedProvidersBed, type SimulatedProvidersBed } from '../support/simulated-providers-bed.js';
import { CONFLUENCE_DC_HOST, confluenceDataCenter } from '../support/simulators/confluence-data-center.js';

const kc = testKubeConfig();
const sim = confluenceDataCenter();
const PROVIDER = 'confluence-data-center';
let providers: SimulatedProvidersBed;

beforeAll(async () => {
  providers = await startSimulatedProvidersBed(kc, 'dc-integrations-api', [sim]);
  const { bed } = providers;
  await kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: bed.ns.name,
    plural: 'environments',
    name: bed.env.name,
    body: [{ op: 'add', path: '/spec/api', value: { integrationWrites: true } }],
  });
  await bed.synced((store) => store.catalog.listEnvironments(bed.ns.name)[0]?.spec.api?.integrationWrites === true);
}, 180_000);

afterAll(async () => {
  await providers?.close();
});

const call = (method: string, path: string, body?: unknown) => providers.callJson(method, path, body);
const credentials = () => ({ type: 'OAUTH2', client_id: sim.client.clientId, client_secret: sim.client.clientSecret, scopes: 'READ' });
const stored = (key: string) => providers.bed.latchkey.ctx.catalog.getIntegration(providers.bed.ns.name, key);

const connectStart = (integration: string) => providers.connectStart(integration);

describe('connection_config through the integrations API', () => {
  it('POST sets the host, GET shows it, and the Integration connects in Chromium and proxies on that host', async () => {
    const created = await call('POST', '/integrations', {
      provider: PROVIDER,
      unique_key: 'wiki',
      credentials: credentials(),
      connection_config: { host: ` ${CONFLUENCE_DC_HOST} ` },
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ unique_key: 'wiki', provider: PROVIDER, connection_config: { host: CONFLUENCE_DC_HOST } });
    expect(stored('wiki')?.spec.connectionConfig).toEqual({ host: CONFLUENCE_DC_HOST });
    const fetched = await call('GET', '/integrations/wiki');
    expect(fetched.status).toBe(200);
    expect(fetched.body.data.connection_config).toEqual({ host: CONFLUENCE_DC_HOST });
    // The list shows it too; the client secret is not in either answer.
    const listed = await call('GET', '/integrations');
    expect(listed.body.data.find((i: { unique_key: string }) => i.unique_key === 'wiki').connection_config).toEqual({
      host: CONFLUENCE_DC_HOST,
    });
    expect(JSON.stringify([created.body, fetched.body, listed.body])).not.toContain(sim.client.clientSecret);

    const before = sim.state.requests.length;
    const connectionId = await providers.connectInPopup('wiki', 'grace', CONFLUENCE_DC_HOST);
    const exchange = sim.state.requests.slice(before).find((r) => r.path === '/rest/oauth2/latest/token')!;
    expect(exchange.host).toBe(CONFLUENCE_DC_HOST);
    await eventually(() => providers.bed.latchkey.ctx.connections.getConnection(providers.bed.ns.name, 'wiki', connectionId));
    const connection = await call('GET', `/connections/${connectionId}?provider_config_key=wiki`);
    expect(connection.body.connection_config).toEqual({ host: CONFLUENCE_DC_HOST });
    const proxied = await providers.call('GET', '/proxy/rest/api/user/current', {
      headers: { 'connection-id': connectionId, 'provider-config-key': 'wiki' },
    });
    expect({ status: proxied.status, body: proxied.body }).toMatchObject({ status: 200, body: sim.e2e.api.answer });
    const api = sim.state.requests.filter((r) => r.path === '/rest/api/user/current').at(-1)!;
    expect(api.host).toBe(CONFLUENCE_DC_HOST);
    expect(api.headers.authorization).toBe(`Bearer ${connection.body.credentials.access_token}`);
  });

  it('refuses a key the Provider does not let the Integration set, or a value its rule refuses (400, never the value), creating nothing', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ region: 'eu' }, 'connection_config.region', /"region" is not a key this provider lets the integration set/],
      [{ host: '10.20.30.40' }, 'connection_config.host', /"host" must be a host name/],
      [{ host: 'wiki.secret-corp.example:8443' }, 'connection_config.host', /"host" must be a host name/],
      [{ host: 'https://wiki.secret-corp.example/path' }, 'connection_config.host', /"host" must be a host name/],
    ];
    for (const [connection_config, path, message] of cases) {
      const res = await call('POST', '/integrations', {
        provider: PROVIDER,
        unique_key: 'refused',
        credentials: credentials(),
        connection_config,
      });
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'invalid_connection_config' });
      expect(res.body.error.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
      const text = JSON.stringify(res.body);
      for (const value of Object.values(connection_config)) expect(text).not.toContain(String(value));
      expect(text).not.toContain('secret-corp');
    }
    // A key that is no configuration key name, or an empty value, is refused by the body's shape.
    for (const connection_config of [{ 'bad-key': 'x' }, { host: '' }, { host: 42 }]) {
      const res = await call('POST', '/integrations', { provider: PROVIDER, unique_key: 'refused', connection_config });
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'invalid_body' });
    }
    expect(stored('refused')).toBeUndefined();
    expect((await call('GET', '/integrations/refused')).status).toBe(404);
  });

  it('an Integration made without it answers 409 until a PATCH sets it; a refused PATCH keeps the value; null removes it', async () => {
    const created = await call('POST', '/integrations', { provider: PROVIDER, unique_key: 'wiki-later', credentials: credentials() });
    expect(created.status).toBe(200);
    expect(created.body.data.connection_config).toBeUndefined();
    await providers.bed.synced((store) => store.catalog.getIntegration(providers.bed.ns.name, 'wiki-later'));
    expect((await connectStart('wiki-later')).body.error?.code).toBe('integration_not_configured');

    const patched = await call('PATCH', '/integrations/wiki-later', { connection_config: { host: CONFLUENCE_DC_HOST } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.connection_config).toEqual({ host: CONFLUENCE_DC_HOST });
    expect(stored('wiki-later')?.spec.connectionConfig).toEqual({ host: CONFLUENCE_DC_HOST });
    // The Connect start now reaches the server's authorize endpoint.
    expect((await connectStart('wiki-later')).status).toBe(200);

    const refused = await call('PATCH', '/integrations/wiki-later', { display_name: 'Wiki', connection_config: { host: '127.0.0.1' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_connection_config');
    expect(JSON.stringify(refused.body)).not.toContain('127.0.0.1');
    // Nothing of the refused PATCH is stored.
    expect(stored('wiki-later')?.spec).toMatchObject({ connectionConfig: { host: CONFLUENCE_DC_HOST } });
    expect(stored('wiki-later')?.spec.displayName).toBeUndefined();
    // A key the Provider does not let the Integration set, and a context path that is no plain path, are refused.
    expect((await call('PATCH', '/integrations/wiki-later', { connection_config: { space: 'ENG' } })).status).toBe(400);
    for (const contextPath of ['/..', '//attacker.example', '/wiki%2F..', 'wiki'])
      expect((await call('PATCH', '/integrations/wiki-later', { connection_config: { contextPath } })).status).toBe(400);
    // The context path (urlPath): set beside the host, then removed with "".
    const under = await call('PATCH', '/integrations/wiki-later', { connection_config: { contextPath: '/wiki' } });
    expect(under.status).toBe(200);
    expect(under.body.data.connection_config).toEqual({ host: CONFLUENCE_DC_HOST, contextPath: '/wiki' });
    expect(
      (await call('PATCH', '/integrations/wiki-later', { connection_config: { contextPath: '' } })).body.data.connection_config,
    ).toEqual({
      host: CONFLUENCE_DC_HOST,
    });

    // A PATCH without connection_config leaves it; null removes the key.
    expect((await call('PATCH', '/integrations/wiki-later', { display_name: 'Wiki' })).body.data.connection_config).toEqual({
      host: CONFLUENCE_DC_HOST,
    });
    const removed = await call('PATCH', '/integrations/wiki-later', { connection_config: { host: null } });
    expect(removed.status).toBe(200);
    expect(removed.body.data.connection_config).toBeUndefined();
    expect(stored('wiki-later')?.spec.connectionConfig).toBeUndefined();
    await providers.bed.synced((store) => !store.catalog.getIntegration(providers.bed.ns.name, 'wiki-later')?.spec.connectionConfig);
    expect((await connectStart('wiki-later')).body.error?.code).toBe('integration_not_configured');
  });

  it('is documented in the OpenAPI document as the extension of both bodies and of the integration shown', async () => {
    const doc = (await (await fetch(`${providers.bed.latchkey.url}/openapi.json`)).json()) as any;
    const schemaOf = (s: any): any => (s?.$ref ? doc.components.schemas[String(s.$ref).split('/').at(-1)!] : s);
    const body = (method: 'post' | 'patch', path: string) =>
      schemaOf(doc.paths[path][method].requestBody.content['application/json'].schema).properties.connection_config;
    expect(body('post', '/integrations').description).toContain("Latchkey's extension");
    expect(body('patch', '/integrations/{uniqueKey}').description).toContain('null or "" removes a key');
    const shown = schemaOf(doc.paths['/integrations/{uniqueKey}'].get.responses['200'].content['application/json'].schema);
    expect(JSON.stringify(shown)).toContain("Latchkey's extension: the Integration's spec.connectionConfig");
  });
});
