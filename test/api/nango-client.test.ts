/**
 * Compatibility: the official Nango Node client (@nangohq/node), pointed at Latchkey with an
 * environment's secret key, works unchanged for providers, integrations (read, and write where the
 * Environment allows it), connections (import, get, token with refresh, list, delete), metadata,
 * connect sessions, the proxy (proxy, get, post, put, patch, delete against a loopback upstream),
 * waitForConnection, and webhook verification (verifyIncomingWebhookRequest). Every method of the
 * client that maps to something Latchkey does is called here; docs/migrating-from-nango.md lists the rest.
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Nango } from '@nangohq/node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const client = { clientId: 'latchkey-nango-test', clientSecret: 'nango-test-secret-0123456789' };
const OAUTH = 'rest-nango-oauth';
const KEYS = 'rest-nango-apikey';
const PROXIED = 'rest-nango-proxied';
const PROXY_KEY = 'nango-proxy-key-1';
const LOGO = 'https://logos.example.test/nango-oauth.svg';
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
/** A second namespace whose Environment keeps integration writes off (the CRD's default). */
let readOnlyNs: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let readOnlyEnv: TestEnvironment;
let oidc: OidcTestServer;
let api: Replica;
let nango: Nango;
let receiver: WebhookReceiver;
let dispatcher: Replica;
/** The provider API the proxy calls; `elsewhere` is a host no request may reach. */
let upstream: Upstream;
let elsewhere: Upstream;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'rest-nango');
  readOnlyNs = await createTestNamespace(kc, 'rest-nango-ro');
  oidc = await startOidcServer({ clients: [client], accessTokenTtl: 120 });
  receiver = await webhookReceiver();
  await receiver.listen();
  [upstream, elsewhere] = await Promise.all([startUpstream(), startUpstream()]);
  await applyProvider(kc, PROXIED, {
    displayName: 'Nango Proxied',
    authMode: 'API_KEY',
    proxy: { baseUrl: `${upstream.origin}/api`, headers: { 'x-api-key': '${apiKey}' } },
  });
  await applyProvider(kc, OAUTH, {
    displayName: 'Nango OAuth',
    logoUrl: LOGO,
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    categories: ['test'],
  });
  await applyProvider(kc, KEYS, { displayName: 'Nango Keys', authMode: 'API_KEY' });
  env = await createEnvironment(kc, ns.name, {
    api: { integrationWrites: true },
    webhooks: { url: receiver.url, signatures: ['standard', 'nango'] },
  });
  readOnlyEnv = await createEnvironment(kc, readOnlyNs.name);
  await createIntegration(kc, ns.name, 'oauth', { provider: OAUTH }, { clientId: client.clientId, clientSecret: client.clientSecret });
  await createIntegration(kc, ns.name, 'keys', { provider: KEYS });
  await createIntegration(kc, ns.name, 'proxied', { provider: PROXIED });
  await createIntegration(kc, readOnlyNs.name, 'keys', { provider: KEYS, displayName: 'From Git' });
  api = await startReplica(kc, { namespaces: [ns.name, readOnlyNs.name], key: env.secretKey });
  await eventually(
    () =>
      api.ctx.store.getIntegration(ns.name, 'keys') &&
      api.ctx.store.getIntegration(ns.name, 'oauth') &&
      api.ctx.store.getIntegration(ns.name, 'proxied') &&
      api.ctx.store.getProvider(PROXIED) &&
      api.ctx.store.getIntegration(readOnlyNs.name, 'keys') &&
      api.ctx.store.getProvider(KEYS),
  );
  await eventually(async () => (await api.call('GET', '/providers')).status === 200);
  await eventually(async () => (await api.call('GET', '/providers', { key: readOnlyEnv.secretKey })).status === 200);
  nango = new Nango({ host: api.url, secretKey: env.secretKey });
  dispatcher = await startReplica(kc, { namespaces: [ns.name, readOnlyNs.name], components: ['webhooks'], webhookPollMs: 100 });
});

afterAll(async () => {
  await dispatcher?.stop();
  await api?.stop();
  await oidc?.close();
  await receiver?.close();
  await Promise.all([upstream?.close(), elsewhere?.close()]);
  await Promise.all([deleteProvider(kc, OAUTH), deleteProvider(kc, KEYS), deleteProvider(kc, PROXIED)]);
  await Promise.all([ns?.delete(), readOnlyNs?.delete()]);
});

const integrationObject = (namespace: string, name: string) =>
  custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'integrations', name }) as Promise<{
    metadata: { uid: string };
    spec: Record<string, unknown>;
  }>;
/** Status of a Nango client call (axios) or a Kubernetes client call (ApiException), 200 when it succeeded. */
const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (err: { response?: { status?: number }; code?: number }) => err.response?.status ?? err.code,
  );
const errorCode = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: { response?: { data?: { error?: { code?: string } } } }) => err.response?.data?.error?.code,
  );

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

  it('lists and gets integrations in the shapes of @nangohq/types', async () => {
    const { configs } = await nango.listIntegrations();
    expect(configs.map((c) => c.unique_key)).toEqual(['keys', 'oauth', 'proxied']);
    const oauth = configs.find((c) => c.unique_key === 'oauth')!;
    expect(oauth).toMatchObject({ provider: OAUTH, display_name: 'Nango OAuth', logo: LOGO, forward_webhooks: false });
    expect(Date.parse(oauth.created_at)).toBeGreaterThan(Date.now() - 600_000);
    expect(oauth).not.toHaveProperty('credentials');
    expect(configs.find((c) => c.unique_key === 'keys')).not.toHaveProperty('logo');

    const plain = await nango.getIntegration({ uniqueKey: 'oauth' });
    expect(plain.data).not.toHaveProperty('credentials');
    expect(plain.data).not.toHaveProperty('webhook_url');
    const withCredentials = await nango.getIntegration({ uniqueKey: 'oauth' }, { include: ['credentials'] });
    expect(withCredentials.data.credentials).toEqual({
      type: 'OAUTH2',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      scopes: null,
      webhook_secret: null,
    });
    const both = await api.call('GET', '/integrations/oauth?include=webhook,credentials');
    expect(both.body.data).toMatchObject({ webhook_url: null, credentials: { client_id: client.clientId } });
    const keys = await nango.getIntegration({ uniqueKey: 'keys' }, { include: ['credentials'] });
    expect(keys.data.credentials).toBeNull();

    expect(await errorCode(nango.getIntegration({ uniqueKey: 'nope' }))).toBe('unknown_integration');
    const badInclude = await api.call('GET', '/integrations/oauth?include=secrets');
    expect([badInclude.status, badInclude.body.error.code]).toEqual([400, 'invalid_query']);
    // Each environment sees its own namespace only.
    const other = await api.call('GET', '/integrations', { key: readOnlyEnv.secretKey });
    expect(other.body.data.map((i: { unique_key: string; display_name: string }) => [i.unique_key, i.display_name])).toEqual([
      ['keys', 'From Git'],
    ]);
  });

  it('creates, updates and deletes an integration and its client Secret, as kubectl sees them', async () => {
    const created = await nango.createIntegration({
      provider: OAUTH,
      unique_key: 'made-by-api',
      display_name: 'Made by the API',
      credentials: { type: 'OAUTH2', client_id: 'cid-1', client_secret: 'csecret-1', scopes: 'openid,email' },
    });
    expect(created.data).toMatchObject({ unique_key: 'made-by-api', provider: OAUTH, display_name: 'Made by the API', logo: LOGO });
    expect(created.data).not.toHaveProperty('credentials');

    const object = await integrationObject(ns.name, 'made-by-api');
    expect(object.spec).toEqual({
      provider: OAUTH,
      displayName: 'Made by the API',
      scopes: ['openid', 'email'],
      clientSecretRef: { name: 'latchkey-integration-made-by-api' },
    });
    const secret = await core.readNamespacedSecret({ namespace: ns.name, name: 'latchkey-integration-made-by-api' });
    expect(secret.metadata?.labels?.['latchkey.dev/watch']).toBe('true');
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Integration', uid: object.metadata.uid });
    expect(Buffer.from(secret.data!.clientSecret!, 'base64').toString()).toBe('csecret-1');

    const updated = await nango.updateIntegration(
      { uniqueKey: 'made-by-api' },
      { display_name: 'Renamed', credentials: { type: 'OAUTH2', client_id: 'cid-2', client_secret: 'csecret-2' } },
    );
    expect(updated.data.display_name).toBe('Renamed');
    expect(Date.parse(updated.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(updated.data.created_at));
    const read = await nango.getIntegration({ uniqueKey: 'made-by-api' }, { include: ['credentials'] });
    expect(read.data.credentials).toMatchObject({ client_id: 'cid-2', client_secret: 'csecret-2', scopes: 'openid,email' });
    const secret2 = await core.readNamespacedSecret({ namespace: ns.name, name: 'latchkey-integration-made-by-api' });
    expect(Buffer.from(secret2.data!.clientId!, 'base64').toString()).toBe('cid-2');

    // The ID is the object's name: it cannot change.
    expect(await errorCode(nango.updateIntegration({ uniqueKey: 'made-by-api' }, { unique_key: 'other' }))).toBe('unique_key_immutable');

    const deleted = await nango.deleteIntegration('made-by-api');
    expect(deleted.status).toBe(200);
    expect(await status(integrationObject(ns.name, 'made-by-api'))).toBe(404);
    await expect(nango.getIntegration({ uniqueKey: 'made-by-api' })).rejects.toMatchObject({ response: { status: 404 } });
    // Deleting through the API deletes the client Secret it made with the Integration.
    await eventually(
      () => status(core.readNamespacedSecret({ namespace: ns.name, name: 'latchkey-integration-made-by-api' })).then((s) => s === 404),
      30_000,
    );
  });

  it('refuses bad integration writes with a clear 4xx and changes nothing', async () => {
    const codeOf = (body: unknown) => errorCode(nango.createIntegration(body as Parameters<Nango['createIntegration']>[0]));
    expect(await codeOf({ provider: OAUTH, unique_key: 'Not_A_Name' })).toBe('invalid_body');
    expect(await codeOf({ provider: 'no-such-provider', unique_key: 'ghost' })).toBe('unknown_provider');
    expect(await codeOf({ provider: KEYS, unique_key: 'keys' })).toBe('integration_exists');
    expect(await codeOf({ provider: OAUTH, unique_key: 'x1', forward_webhooks: true })).toBe('invalid_body');
    expect(await codeOf({ provider: KEYS, unique_key: 'x2', credentials: { type: 'OAUTH2', client_id: 'a', client_secret: 'b' } })).toBe(
      'invalid_credentials',
    );
    expect(await status(integrationObject(ns.name, 'x2'))).toBe(404);
    expect(await status(integrationObject(ns.name, 'ghost'))).toBe(404);

    // Credentials in a Secret the API did not make (say, from Git) are not the API's to change.
    expect(
      await errorCode(
        nango.updateIntegration({ uniqueKey: 'oauth' }, { credentials: { type: 'OAUTH2', client_id: 'z', client_secret: 'z' } }),
      ),
    ).toBe('credentials_managed_elsewhere');
    const kept = await nango.getIntegration({ uniqueKey: 'oauth' }, { include: ['credentials'] });
    expect(kept.data.credentials).toMatchObject({ client_secret: client.clientSecret });

    // An integration with connections keeps them: deleting it is refused.
    await importWithClient({ provider_config_key: 'keys', connection_id: 'keeps-keys', credentials: { type: 'API_KEY', apiKey: 'k' } });
    expect(await errorCode(nango.deleteIntegration('keys'))).toBe('integration_has_connections');
    expect(await status(integrationObject(ns.name, 'keys'))).toBe(200);
  });

  it('refuses integration writes with 403 where the Environment turns them off', async () => {
    const readOnly = new Nango({ host: api.url, secretKey: readOnlyEnv.secretKey });
    const refused = readOnly.createIntegration({ provider: KEYS, unique_key: 'not-allowed' });
    await expect(refused).rejects.toMatchObject({
      response: {
        status: 403,
        data: { error: { code: 'integration_writes_disabled', message: expect.stringContaining('integrationWrites') } },
      },
    });
    expect(await status(readOnly.updateIntegration({ uniqueKey: 'keys' }, { display_name: 'x' }))).toBe(403);
    expect(await status(readOnly.deleteIntegration('keys'))).toBe(403);
    expect(await status(integrationObject(readOnlyNs.name, 'not-allowed'))).toBe(404);
    expect((await readOnly.getIntegration({ uniqueKey: 'keys' })).data.display_name).toBe('From Git');
  });

  it("delivers auth webhooks that the SDK's verifyIncomingWebhookRequest accepts", async () => {
    const session = await nango.createConnectSession({ end_user: { id: 'hook-user' }, allowed_integrations: ['keys'] });
    const res = await fetch(`${api.url}/connect/api/forms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session.data.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ integration: 'keys', values: { apiKey: 'hook-key' } }),
    });
    expect(res.status).toBe(201);
    const hook = await eventually(
      () => receiver.delivered().find((w) => (w.json.endUser as { endUserId?: string }).endUserId === 'hook-user'),
      30_000,
    );
    expect(hook.json).toMatchObject({
      from: 'latchkey',
      type: 'auth',
      operation: 'creation',
      success: true,
      providerConfigKey: 'keys',
      provider: KEYS,
      environment: env.name,
      authMode: 'API_KEY',
    });
    const headers = Object.fromEntries(Object.entries(hook.headers).map(([k, v]) => [k, String(v)]));
    expect(headers['x-nango-hmac-sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,/);
    const verifier = new Nango({ host: api.url, secretKey: env.secretKey, webhookSigningKey: env.webhookSigningKey });
    expect(verifier.verifyIncomingWebhookRequest(hook.body, headers)).toBe(true);
    expect(verifier.verifyIncomingWebhookRequest(hook.body.replace('hook-user', 'evil-user'), headers)).toBe(false);
    const wrongKey = new Nango({ host: api.url, secretKey: env.secretKey, webhookSigningKey: 'whsec_d3Jvbmc=' });
    expect(wrongKey.verifyIncomingWebhookRequest(hook.body, headers)).toBe(false);
  });

  describe('the proxy (nango.proxy, get, post, put, patch, delete)', () => {
    const target = { connectionId: 'proxied-1', providerConfigKey: 'proxied' };
    const last = () => upstream.requests[upstream.requests.length - 1]!;
    const echoed = (data: unknown) => data as { method: string; url: string; headers: Record<string, string>; body: string };

    beforeAll(async () => {
      await importWithClient({
        provider_config_key: 'proxied',
        connection_id: target.connectionId,
        credentials: { type: 'API_KEY', apiKey: PROXY_KEY },
      });
    });

    it("get: the upstream receives the injected key, the path under the base URL, the query and the caller's headers", async () => {
      const res = await nango.get({ ...target, endpoint: '/items', params: { q: 'a b', page: '2' }, headers: { 'X-Request-Id': 'req-1' } });
      expect(res.status).toBe(200);
      expect(res.headers['x-upstream']).toBe('yes');
      const seen = last();
      expect([seen.method, seen.url]).toEqual(['GET', '/api/items?q=a+b&page=2']);
      expect(seen.headers['x-api-key']).toBe(PROXY_KEY);
      // Nango's SDK wraps the caller's headers as Nango-Proxy-<name>: they arrive under their own name.
      expect(seen.headers['x-request-id']).toBe('req-1');
      // Nothing addressed to the proxy reaches the provider: not the secret key, the connection headers or Nango's options.
      for (const h of [
        'authorization',
        'connection-id',
        'provider-config-key',
        'base-url-override',
        'nango-activity-log-id',
        'nango-proxy-x-request-id',
      ])
        expect(seen.headers).not.toHaveProperty(h);
      expect(JSON.stringify(seen.headers)).not.toContain(env.secretKey);
      expect(echoed(res.data).url).toBe('/api/items?q=a+b&page=2');
    });

    it('post, put, patch and delete send their method and body; proxy() takes the method from its config', async () => {
      const responses = await Promise.all([
        nango.post({ ...target, endpoint: '/items', data: { name: 'new' } }),
        nango.put({ ...target, endpoint: '/items/1', data: { name: 'put' } }),
        nango.patch({ ...target, endpoint: '/items/1', data: { name: 'patched' } }),
        nango.delete({ ...target, endpoint: '/items/1', data: { reason: 'gone' } }),
        nango.proxy({ ...target, method: 'PATCH', endpoint: 'items/2', data: { via: 'proxy' } }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      for (const [method, url, body] of [
        ['POST', '/api/items', '{"name":"new"}'],
        ['PUT', '/api/items/1', '{"name":"put"}'],
        ['PATCH', '/api/items/1', '{"name":"patched"}'],
        ['DELETE', '/api/items/1', '{"reason":"gone"}'],
        ['PATCH', '/api/items/2', '{"via":"proxy"}'],
      ] as const) {
        const seen = upstream.requests.find((r) => r.method === method && r.url === url && r.body.toString() === body);
        expect(seen).toBeDefined();
        expect(seen!.headers['x-api-key']).toBe(PROXY_KEY);
        expect(seen!.headers['content-type']).toMatch(/^application\/json/);
      }
    });

    it('retries: N retries a 5xx N times; without it the 5xx goes back to the SDK', async () => {
      const failFirst = (path: string, failures: number) => {
        let seen = 0;
        upstream.on(path, (_req, res) => {
          seen += 1;
          res.writeHead(seen <= failures ? 503 : 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ attempt: seen }));
        });
      };
      failFirst('/api/flaky-retried', 2);
      const res = await nango.get({ ...target, endpoint: '/flaky-retried', retries: 2 });
      expect([res.status, res.data]).toEqual([200, { attempt: 3 }]);
      expect(upstream.requests.filter((r) => r.url === '/api/flaky-retried')).toHaveLength(3);

      failFirst('/api/flaky-once', 1);
      await expect(nango.get({ ...target, endpoint: '/flaky-once' })).rejects.toMatchObject({ response: { status: 503 } });
      expect(upstream.requests.filter((r) => r.url === '/api/flaky-once')).toHaveLength(1);

      await expect(nango.get({ ...target, endpoint: '/items', retries: 11 })).rejects.toMatchObject({
        response: { status: 400, data: { error: { code: 'invalid_retries' } } },
      });
    });

    it('baseUrlOverride is refused with 400 and nothing is sent anywhere', async () => {
      const before = upstream.requests.length;
      await expect(nango.get({ ...target, endpoint: '/items', baseUrlOverride: elsewhere.origin })).rejects.toMatchObject({
        response: { status: 400, data: { error: { code: 'base_url_override_unsupported' } } },
      });
      expect(elsewhere.requests).toHaveLength(0);
      expect(upstream.requests.length).toBe(before);
    });

    it('an unknown connection is a 404 from the proxy itself', async () => {
      await expect(nango.get({ ...target, connectionId: 'no-such', endpoint: '/items' })).rejects.toMatchObject({
        response: { status: 404, data: { error: { code: 'unknown_connection' } } },
      });
    });
  });

  it('waitForConnection resolves with a connection imported while it waits, and times out for an end user who never connects', async () => {
    // The SDK polls listConnections({ endUserId }) (10 s, then every 2 s, 30 times): its responses are counted here.
    const listed: string[] = [];
    const watched = new Nango(
      { host: api.url, secretKey: env.secretKey },
      { interceptors: { response: { onFulfilled: (r) => (listed.push(String(r.config.url)), r) } } },
    );
    const polls = (user: string) => listed.filter((u) => u.includes(`endUserId=${user}`)).length;
    // Same integration, another end user (whose ID starts the same): not the one waited for.
    await importWithClient({
      provider_config_key: 'keys',
      connection_id: 'waited-decoy',
      credentials: { type: 'API_KEY', apiKey: 'd' },
      end_user: { id: 'wait-never-2' },
    });
    const never = watched.waitForConnection('keys', 'wait-never').then(
      () => 'resolved',
      (err: Error) => err.message,
    );
    const found = watched.waitForConnection('keys', 'wait-user');
    await eventually(() => polls('wait-user') >= 1, 30_000);
    const created = await importWithClient({
      provider_config_key: 'keys',
      connection_id: 'waited-1',
      credentials: { type: 'API_KEY', apiKey: 'w' },
      end_user: { id: 'wait-user' },
    });
    expect(created.status).toBe(201);
    const connection = await found;
    expect(connection).toMatchObject({ connection_id: 'waited-1', provider_config_key: 'keys', end_user: { id: 'wait-user' } });
    expect(polls('wait-user')).toBeGreaterThanOrEqual(2);

    expect(await never).toBe('Timeout waiting for connection to be created');
    expect(polls('wait-never')).toBe(30);
  }, 240_000);

  it('listConnections() without paging parameters answers every connection (up to 10,000); with limit it pages', async () => {
    const ids = Array.from({ length: 105 }, (_, i) => `bulk-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 15) {
      await Promise.all(
        ids
          .slice(i, i + 15)
          .map((id) => importWithClient({ provider_config_key: 'keys', connection_id: id, credentials: { type: 'API_KEY', apiKey: id } })),
      );
    }
    const newest = 'bulk-newest';
    await importWithClient({ provider_config_key: 'keys', connection_id: newest, credentials: { type: 'API_KEY', apiKey: 'n' } });

    const { connections } = await nango.listConnections();
    const listed = connections.map((c) => c.connection_id);
    expect(listed.length).toBeGreaterThan(106);
    expect(listed).toEqual(expect.arrayContaining([...ids, newest]));
    expect(listed[listed.length - 1]).toBe(newest); // oldest first, the newest last
    expect((await nango.listConnections()).connections.map((c) => c.connection_id)).toEqual(listed); // a stable order

    const first = await api.call('GET', '/connections?limit=50');
    expect(first.body.connections).toHaveLength(50);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await api.call('GET', `/connections?cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.connections).toHaveLength(Math.min(100, listed.length - 50));
    expect(second.body.connections[0].connection_id).toBe(listed[50]);
  });
});
