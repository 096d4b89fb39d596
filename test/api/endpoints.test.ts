/**
 * Every REST endpoint's success and 4xx paths against a real control plane, environment isolation,
 * and the OpenAPI document: every registered route documented, responses valid against it.
 */
import { z } from 'zod';
import { createApp } from '../../src/http/app.js';
import { openSessionToken } from '../../src/auth/session-tokens.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const OAUTH = 'rest-ep-oauth';
const KEYS = 'rest-ep-apikey';
const BASIC = 'rest-ep-basic';
const TWO_STEP = 'rest-ep-two-step';
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let other: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let otherEnv: TestEnvironment;
let api: Replica;

beforeAll(async () => {
  [ns, other] = await Promise.all([createTestNamespace(kc, 'rest-ep'), createTestNamespace(kc, 'rest-ep-other')]);
  await applyProvider(kc, OAUTH, {
    displayName: 'Endpoint OAuth',
    authMode: 'OAUTH2',
    categories: ['crm', 'testing'],
    authorizationUrl: 'https://${connectionConfig.subdomain}.example.test/oauth/authorize',
    tokenUrl: 'https://${connectionConfig.subdomain}.example.test/oauth/token',
    connectionConfiguration: [{ name: 'subdomain' }],
    docs: 'https://docs.example.test/oauth',
    postConnectionScript: 'after-connect',
    webhookRoutingScript: 'route-webhooks',
    proxy: {
      baseUrl: 'https://api.example.test',
      decompress: true,
      paginate: {
        type: 'cursor',
        cursorPathInResponse: 'meta.next',
        cursorNameInRequest: 'cursor',
        limitNameInRequest: 'limit',
        responsePath: 'data',
      },
    },
  });
  await applyProvider(kc, KEYS, { displayName: 'Endpoint API key', authMode: 'API_KEY', proxy: { baseUrl: 'https://keys.example.test' } });
  await applyProvider(kc, BASIC, { displayName: 'Endpoint Basic', authMode: 'BASIC' });
  await applyProvider(kc, TWO_STEP, {
    displayName: 'Endpoint Two Step',
    authMode: 'TWO_STEP',
    twoStep: {
      tokenUrl: 'https://login.example.test/token',
      headers: { 'x-app-key': 'provider-fixed-app-key' },
      body: { user: '${credentials.username}', password: '${credentials.password}' },
      credentialFields: [
        { name: 'username', secret: false },
        { name: 'password', label: 'Password' },
      ],
      tokenPath: 'token',
    },
    proxy: { baseUrl: 'https://api.two-step.example.test' },
  });
  [env, otherEnv] = await Promise.all([createEnvironment(kc, ns.name), createEnvironment(kc, other.name)]);
  await createIntegration(kc, ns.name, 'crm', { provider: OAUTH }, { clientId: 'id', clientSecret: 'secret' });
  await createIntegration(kc, ns.name, 'keys', { provider: KEYS });
  await createIntegration(kc, ns.name, 'basic', { provider: BASIC });
  await createIntegration(kc, other.name, 'keys', { provider: KEYS });
  api = await startReplica(kc, { namespaces: [ns.name, other.name], key: env.secretKey });
  await eventually(
    () =>
      api.ctx.catalog.getIntegration(other.name, 'keys') &&
      api.ctx.catalog.getProvider(BASIC) &&
      api.ctx.catalog.getProvider(TWO_STEP) &&
      api.ctx.catalog.getIntegration(ns.name, 'basic'),
  );
  await eventually(
    async () =>
      (await api.call('GET', '/providers')).status === 200 &&
      (await api.call('GET', '/providers', { key: otherEnv.secretKey })).status === 200,
  );
});

afterAll(async () => {
  await api?.stop();
  await Promise.all([OAUTH, KEYS, BASIC, TWO_STEP].map((p) => deleteProvider(kc, p)));
  await Promise.all([ns?.delete(), other?.delete()]);
});

function expectError(res: { status: number; body: any }, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
  expect(Object.keys(res.body.error).every((k) => ['code', 'message', 'errors'].includes(k))).toBe(true);
  if (code) expect(res.body.error.code).toBe(code);
}

const importKey = (connectionId: string, extra: Record<string, unknown> = {}, key?: string) =>
  api.call('POST', '/connections', {
    key,
    body: {
      provider_config_key: 'keys',
      connection_id: connectionId,
      credentials: { type: 'API_KEY', apiKey: `key-${connectionId}` },
      ...extra,
    },
  });

/** POST /connection: the deprecated flat import, `body` as sent. */
const importFlat = (body: Record<string, unknown>) => api.call('POST', '/connection', { body });

describe('authentication', () => {
  it('answers 401 for a missing, malformed or unknown key', async () => {
    expectError(await api.call('GET', '/providers', { key: '' }), 401, 'missing_authorization');
    expectError(await api.call('GET', '/providers', { key: '', headers: { authorization: 'Basic abc' } }), 401, 'malformed_authorization');
    expectError(await api.call('GET', '/providers', { key: 'sk_not_a_key' }), 401, 'unknown_secret_key');
  });
});

describe('providers', () => {
  it("shows a provider in the spec's snake_case shape", async () => {
    const res = await api.call('GET', `/providers/${OAUTH}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: OAUTH,
      display_name: 'Endpoint OAuth',
      categories: ['crm', 'testing'],
      auth_mode: 'OAUTH2',
      authorization_url: 'https://${connectionConfig.subdomain}.example.test/oauth/authorize',
      token_url: 'https://${connectionConfig.subdomain}.example.test/oauth/token',
      connection_configuration: ['subdomain'],
      post_connection_script: 'after-connect',
      webhook_routing_script: 'route-webhooks',
      docs: 'https://docs.example.test/oauth',
      proxy: {
        base_url: 'https://api.example.test',
        decompress: true,
        paginate: {
          type: 'cursor',
          cursor_path_in_response: 'meta.next',
          cursor_name_in_request: 'cursor',
          limit_name_in_request: 'limit',
          response_path: 'data',
        },
      },
    });
  });

  it("shows a mode's own block (TWO_STEP's fields and token URL), never its request templates", async () => {
    const res = await api.call('GET', `/providers/${TWO_STEP}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      auth_mode: 'TWO_STEP',
      two_step: {
        token_url: 'https://login.example.test/token',
        content_type: 'json',
        credential_fields: [
          { name: 'username', secret: false, required: true },
          { name: 'password', label: 'Password', secret: true, required: true },
        ],
        token_path: 'token',
      },
    });
    expect(JSON.stringify(res.body)).not.toMatch(/provider-fixed-app-key|x-app-key|credentials\.password/);
  });

  it('lists and searches the catalog; 404 for an unknown provider', async () => {
    const all = await api.call('GET', '/providers');
    expect(all.body.data.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining([OAUTH, KEYS, BASIC]));
    const found = await api.call('GET', '/providers?search=endpoint%20api');
    expect(found.body.data.map((p: { name: string }) => p.name)).toEqual([KEYS]);
    expectError(await api.call('GET', '/providers/no-such-provider'), 404, 'unknown_provider');
  });
});

describe('import', () => {
  it('imports each credential type and answers the full Connection object', async () => {
    const res = await api.call('POST', '/connections', {
      body: {
        provider_config_key: 'crm',
        connection_id: 'crm-1',
        metadata: { a: 1 },
        connection_config: { subdomain: 'acme' },
        end_user: { id: 'u1', email: 'u1@example.test', display_name: 'User One', tags: { org: 'acme' } },
        credentials: { type: 'OAUTH2', access_token: 'at-1', refresh_token: 'rt-1', expires_at: '2099-01-01T00:00:00Z' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.any(Number),
      connection_id: 'crm-1',
      provider_config_key: 'crm',
      provider: OAUTH,
      errors: [],
      end_user: { id: 'u1', email: 'u1@example.test', display_name: 'User One', tags: { org: 'acme' }, organization: null },
      metadata: { a: 1 },
      connection_config: { subdomain: 'acme' },
      credentials: { type: 'OAUTH2', access_token: 'at-1', expires_at: '2099-01-01T00:00:00.000Z' },
    });
    expect(res.body.credentials).not.toHaveProperty('refresh_token');
    expect(Number.isFinite(Date.parse(res.body.created_at))).toBe(true);
    expect(Number.isFinite(Date.parse(res.body.updated_at))).toBe(true);

    const basic = await api.call('POST', '/connections', {
      body: { provider_config_key: 'basic', credentials: { type: 'BASIC', username: 'u', password: 'p' } },
    });
    expect(basic.status).toBe(201);
    expect(basic.body.connection_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(basic.body.credentials).toEqual({ type: 'BASIC', username: 'u', password: 'p' });
  });

  it('replaces the credentials of an existing connection and keeps its metadata and configuration', async () => {
    expect((await importKey('re-1', { metadata: { keep: true }, connection_config: { region: 'eu' } })).status).toBe(201);
    const again = await importKey('re-1', { credentials: { type: 'API_KEY', apiKey: 'rotated' } });
    expect(again.status).toBe(200);
    expect(again.body.credentials).toEqual({ type: 'API_KEY', apiKey: 'rotated' });
    expect(again.body.metadata).toEqual({ keep: true });
    expect(again.body.connection_config).toEqual({ region: 'eu' });
  });

  it('rejects bad imports with 4xx and the error body', async () => {
    expectError(await api.call('POST', '/connections', { rawBody: '{"provider_config_key": ' }), 400, 'invalid_json');
    expectError(await api.call('POST', '/connections', { rawBody: '' }), 400, 'invalid_body');
    expectError(await api.call('POST', '/connections', { body: [] }), 400, 'invalid_body');
    const unknownField = await importKey('bad-1', { surprise: 1 });
    expectError(unknownField, 400, 'invalid_body');
    expect(unknownField.body.error.errors[0].code).toBe('unrecognized_keys');
    expectError(
      await api.call('POST', '/connections', { body: { provider_config_key: 'keys', credentials: { type: 'API_KEY', apiKey: 42 } } }),
      400,
      'invalid_body',
    );
    expectError(
      await api.call('POST', '/connections', { body: { provider_config_key: 'keys', credentials: { type: 'MAGIC' } } }),
      400,
      'invalid_body',
    );
    expectError(
      await api.call('POST', '/connections', {
        body: { provider_config_key: 'keys', credentials: { type: 'API_KEY', apiKey: 'k', extra: 1 } },
      }),
      400,
      'invalid_body',
    );
    expectError(
      await api.call('POST', '/connections', { body: { provider_config_key: 'nope', credentials: { type: 'API_KEY', apiKey: 'k' } } }),
      404,
      'unknown_integration',
    );
    expectError(
      await api.call('POST', '/connections', {
        body: { provider_config_key: 'keys', credentials: { type: 'BASIC', username: 'u', password: 'p' } },
      }),
      400,
      'credentials_type_mismatch',
    );
    expectError(await importKey('x'.repeat(300)), 400, 'invalid_body');
    expectError(await importKey('bad-2', { end_user: { email: 'no-id@example.test' } }), 400, 'invalid_body');
    expectError(
      await api.call('POST', '/connections', {
        body: { provider_config_key: 'crm', credentials: { type: 'OAUTH2', access_token: 't', expires_at: 'tomorrow' } },
      }),
      400,
      'invalid_body',
    );
  });

  it('supports the deprecated POST /connection with a Deprecation header', async () => {
    const res = await api.call('POST', '/connection', {
      body: {
        provider_config_key: 'crm',
        connection_id: 'old-1',
        access_token: 'at',
        refresh_token: 'rt',
        expires_in: 3600,
        oauth_client_id_override: 'other-client',
        oauth_client_secret_override: 'other-secret',
        connection_config: { subdomain: 'x' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({});
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    const got = await api.call('GET', '/connections/old-1?provider_config_key=crm&refresh_token=true');
    expect(got.body.credentials).toMatchObject({ type: 'OAUTH2', access_token: 'at', refresh_token: 'rt' });
    expect(got.body.credentials).not.toHaveProperty('config_override');
    expect(JSON.stringify(got.body)).not.toContain('other-secret');
    expect(Date.parse(got.body.credentials.expires_at)).toBeGreaterThan(Date.now() + 3000_000);
    // The override is stored privately, for refreshes.
    expect(api.ctx.connections.getConnection(ns.name, 'crm', 'old-1')!.credentials.config_override).toEqual({
      client_id: 'other-client',
      client_secret: 'other-secret',
    });

    expect((await importFlat({ provider_config_key: 'keys', api_key: 'k1', connection_id: 'old-2' })).status).toBe(201);
    expectError(await importFlat({ provider_config_key: 'crm', access_token: 'at' }), 400, 'missing_expiration');
    // The provider's required configuration key is enforced (a 400 that names it, nothing stored).
    expectError(
      await importFlat({ provider_config_key: 'crm', access_token: 'at', no_expiration: true }),
      400,
      'invalid_connection_config',
    );
    expect(
      (await importFlat({ provider_config_key: 'crm', access_token: 'at', no_expiration: true, connection_config: { subdomain: 'acme' } }))
        .status,
    ).toBe(201);
    expectError(await importFlat({ provider_config_key: 'keys', username: 'u', password: 'p' }), 400, 'credentials_type_mismatch');
    expectError(await importFlat({ provider_config_key: 'basic', username: 'u' }), 400, 'missing_credentials');
    expectError(await importFlat({ provider_config_key: 'keys', api_key: 'k', bogus: true }), 400, 'invalid_body');
  });
});

describe('get, list, delete', () => {
  it('validates the query and path of GET /connections/{id}', async () => {
    await importKey('get-1');
    expect((await api.call('GET', '/connections/get-1?provider_config_key=keys')).body.credentials).toEqual({
      type: 'API_KEY',
      apiKey: 'key-get-1',
    });
    expectError(await api.call('GET', '/connections/get-1'), 400, 'invalid_query');
    expectError(await api.call('GET', '/connections/get-1?provider_config_key=keys&force_refresh=maybe'), 400, 'invalid_query');
    expectError(await api.call('GET', '/connections/get-1?provider_config_key=nope'), 404, 'unknown_integration');
    expectError(await api.call('GET', '/connections/missing?provider_config_key=keys'), 404, 'unknown_connection');
    expectError(await api.call('GET', `/connections/${'y'.repeat(300)}?provider_config_key=keys`), 400, 'invalid_path');
  });

  it('answers a fetch before express exactly as the REST router answers it (paths, query, HEAD, errors, metric)', async () => {
    await importKey('get-direct');
    const direct = await api.call('GET', '/connections/get-direct?provider_config_key=keys');
    expect(direct.status).toBe(200);
    expect(direct.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // The paths express's non-strict, case-insensitive route matched, and an escaped ID.
    for (const path of [
      '/connections/get-direct/?provider_config_key=keys',
      '/CONNECTIONS/get-direct?provider_config_key=keys',
      '/connections/get%2Ddirect?provider_config_key=keys',
    ])
      expect((await api.call('GET', path)).body.connection_id).toBe('get-direct');
    // HEAD is left to express: the same headers, no body.
    const head = await api.call('HEAD', '/connections/get-direct?provider_config_key=keys');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    expect(head.body).toBeUndefined();
    // The query parsed as express's "simple" parser does: a repeated key is an array, which the schema refuses.
    expectError(await api.call('GET', '/connections/get-direct?provider_config_key=keys&provider_config_key=keys'), 400, 'invalid_query');
    expectError(
      await api.call('GET', '/connections/get-direct?provider_config_key=keys', { key: 'sk-unknown' }),
      401,
      'unknown_secret_key',
    );
    expectError(await api.call('GET', '/connections/get-direct?provider_config_key=keys', { key: '' }), 401, 'missing_authorization');
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).toMatch(
      /latchkey_http_request_duration_seconds_count\{route="\/connections\/:connectionId",method="GET",status="200"\} \d+/,
    );
    expect(metrics).toMatch(
      /latchkey_http_request_duration_seconds_count\{route="\/connections\/:connectionId",method="GET",status="401"\} \d+/,
    );
  });

  it("keeps environments apart: another environment's key cannot see a connection (404)", async () => {
    await importKey('mine-1');
    expectError(
      await api.call('GET', '/connections/mine-1?provider_config_key=keys', { key: otherEnv.secretKey }),
      404,
      'unknown_connection',
    );
    expectError(
      await api.call('DELETE', '/connections/mine-1?provider_config_key=keys', { key: otherEnv.secretKey }),
      404,
      'unknown_connection',
    );
    expectError(
      await api.call('POST', '/connections/metadata', {
        key: otherEnv.secretKey,
        body: { provider_config_key: 'keys', connection_id: 'mine-1', metadata: {} },
      }),
      404,
      'unknown_connection',
    );
    const list = await api.call('GET', '/connections', { key: otherEnv.secretKey });
    expect(list.body.connections.map((c: { connection_id: string }) => c.connection_id)).not.toContain('mine-1');
    expectError(
      await api.call('GET', '/connections/mine-1?provider_config_key=crm', { key: otherEnv.secretKey }),
      404,
      'unknown_integration',
    );
    expect((await api.call('GET', '/connections/mine-1?provider_config_key=keys')).status).toBe(200);
  });

  it('lists with filters and pages with a cursor or an offset', async () => {
    for (let i = 0; i < 5; i++) {
      await importKey(`page-${i}`, { end_user: { id: 'pager', email: `Pager${i}@Example.test`, tags: { team: i % 2 ? 'odd' : 'even' } } });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: any } = await api.call(
        'GET',
        `/connections?endUserId=pager&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.connections.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.connections.map((c: { connection_id: string }) => c.connection_id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    const offset = await api.call('GET', '/connections?endUserId=pager&limit=2&offset=4');
    expect(offset.body.connections).toHaveLength(1);
    expect(offset.body.next_cursor).toBeNull();
    const byEmail = await api.call('GET', '/connections?end_user_email=pager3@example.test');
    expect(byEmail.body.connections.map((c: { connection_id: string }) => c.connection_id)).toEqual(['page-3']);
    const byTag = await api.call('GET', '/connections?endUserId=pager&tags[team]=odd');
    expect(byTag.body.connections.map((c: { connection_id: string }) => c.connection_id).sort()).toEqual(['page-1', 'page-3']);
    const search = await api.call('GET', '/connections?search=PAGE-2');
    expect(search.body.connections.map((c: { connection_id: string }) => c.connection_id)).toEqual(['page-2']);
    const byIntegration = await api.call('GET', '/connections?integrationId=basic,crm');
    expect(
      byIntegration.body.connections.every((c: { provider_config_key: string }) => ['basic', 'crm'].includes(c.provider_config_key)),
    ).toBe(true);
    const entry = search.body.connections[0];
    expect(entry).not.toHaveProperty('credentials');
    expect(entry).toMatchObject({ provider: KEYS, tags: { team: 'even' }, created: entry.created_at });
    expectError(await api.call('GET', '/connections?limit=0'), 400, 'invalid_query');
    expectError(await api.call('GET', '/connections?limit=abc'), 400, 'invalid_query');
    expectError(await api.call('GET', '/connections?cursor=not-a-cursor'), 400, 'invalid_cursor');
  });

  it('deletes a connection; deleting again is 404', async () => {
    await importKey('del-1');
    expectError(await api.call('DELETE', '/connections/del-1'), 400, 'invalid_query');
    const res = await api.call('DELETE', '/connections/del-1?provider_config_key=keys');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expectError(await api.call('GET', '/connections/del-1?provider_config_key=keys'), 404, 'unknown_connection');
    expectError(await api.call('DELETE', '/connections/del-1?provider_config_key=keys'), 404, 'unknown_connection');
  });
});

describe('metadata', () => {
  it('replaces and merges metadata of one or many connections', async () => {
    await importKey('meta-1', { metadata: { a: 1, b: 2 } });
    await importKey('meta-2', { metadata: { z: 0 } });
    const merged = await api.call('PATCH', '/connections/metadata', {
      body: { provider_config_key: 'keys', connection_id: 'meta-1', metadata: { b: 3, c: 4 } },
    });
    expect(merged.status).toBe(200);
    expect(merged.body).toEqual({ connection_id: 'meta-1', provider_config_key: 'keys', metadata: { a: 1, b: 3, c: 4 } });
    const replaced = await api.call('POST', '/connections/metadata', {
      body: { provider_config_key: 'keys', connection_id: ['meta-1', 'meta-2'], metadata: { only: true } },
    });
    expect(replaced.status).toBe(200);
    for (const id of ['meta-1', 'meta-2']) {
      expect((await api.call('GET', `/connections/${id}?provider_config_key=keys`)).body.metadata).toEqual({ only: true });
    }
    const legacy = await api.call('PATCH', '/connection/meta-2/metadata?provider_config_key=keys', { body: { more: 'yes' } });
    expect(legacy.body.metadata).toEqual({ only: true, more: 'yes' });
    const legacyHeader = await api.call('POST', '/connection/meta-2/metadata', {
      headers: { 'provider-config-key': 'keys' },
      body: { fresh: 1 },
    });
    expect(legacyHeader.body.metadata).toEqual({ fresh: 1 });
  });

  it('rejects bad metadata requests and writes nothing when one connection is unknown', async () => {
    await importKey('meta-3', { metadata: { before: true } });
    expectError(
      await api.call('POST', '/connections/metadata', {
        body: { provider_config_key: 'keys', connection_id: ['meta-3', 'ghost'], metadata: { after: true } },
      }),
      404,
      'unknown_connection',
    );
    expect((await api.call('GET', '/connections/meta-3?provider_config_key=keys')).body.metadata).toEqual({ before: true });
    expectError(
      await api.call('POST', '/connections/metadata', { body: { provider_config_key: 'keys', connection_id: 'meta-3', metadata: 'text' } }),
      400,
      'invalid_body',
    );
    expectError(
      await api.call('POST', '/connections/metadata', { body: { provider_config_key: 'keys', connection_id: [], metadata: {} } }),
      400,
      'invalid_body',
    );
    expectError(
      await api.call('PATCH', '/connections/metadata', {
        body: { provider_config_key: 'keys', connection_id: 'meta-3', metadata: {}, extra: 1 },
      }),
      400,
      'invalid_body',
    );
    expectError(
      await api.call('PATCH', '/connections/metadata', { body: { provider_config_key: 'nope', connection_id: 'meta-3', metadata: {} } }),
      404,
      'unknown_integration',
    );
    expectError(await api.call('POST', '/connection/meta-3/metadata', { body: { a: 1 } }), 400, 'invalid_query');
    expectError(await api.call('POST', '/connection/meta-3/metadata?provider_config_key=keys', { body: [1, 2] }), 400, 'invalid_body');
  });
});

describe('connect sessions', () => {
  it('issues sealed, short-lived session tokens with a connect link', async () => {
    const res = await api.call('POST', '/connect/sessions', {
      body: {
        end_user: { id: 'eu-1', email: 'eu@example.test', display_name: 'E U', tags: { org: 'o1' } },
        organization: { id: 'org-1', display_name: 'Org' },
        allowed_integrations: ['crm', 'keys'],
      },
    });
    expect(res.status).toBe(201);
    const { token, expires_at, connect_link } = res.body.data;
    expect(connect_link).toBe(`https://latchkey.example.test/connect?session_token=${encodeURIComponent(token)}`);
    const ttl = Date.parse(expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(29 * 60_000);
    expect(ttl).toBeLessThanOrEqual(30 * 60_000);
    const opened = openSessionToken(token, env.secretKey, Date.now());
    expect(opened.ok && opened.claims).toMatchObject({
      namespace: ns.name,
      allowedIntegrations: ['crm', 'keys'],
      endUser: { id: 'eu-1', tags: { org: 'o1' }, organization: { id: 'org-1' } },
    });
    expect(openSessionToken(token, otherEnv.secretKey, Date.now()).ok).toBe(false);
  });

  it('issues reconnect tokens for existing connections', async () => {
    await importKey('recon-1', { end_user: { id: 'eu-2' } });
    const res = await api.call('POST', '/connect/sessions/reconnect', { body: { connection_id: 'recon-1', integration_id: 'keys' } });
    expect(res.status).toBe(201);
    const opened = openSessionToken(res.body.data.token, env.secretKey, Date.now());
    expect(opened.ok && opened.claims).toMatchObject({
      allowedIntegrations: ['keys'],
      reconnect: { connectionId: 'recon-1', integration: 'keys' },
      endUser: { id: 'eu-2' },
    });
  });

  it('rejects bad session requests', async () => {
    expectError(await api.call('POST', '/connect/sessions', { body: { allowed_integrations: ['crm'] } }), 400, 'invalid_body');
    expectError(
      await api.call('POST', '/connect/sessions', { body: { end_user: { email: 'x@example.test' }, allowed_integrations: ['crm'] } }),
      400,
      'invalid_body',
    );
    expectError(
      await api.call('POST', '/connect/sessions', { body: { end_user: { id: 'x' }, allowed_integrations: ['crm', 'ghost'] } }),
      400,
      'unknown_integration',
    );
    expectError(
      await api.call('POST', '/connect/sessions', { body: { end_user: { id: 'x' }, allowed_integrations: 'crm' } }),
      400,
      'invalid_body',
    );
    expectError(await api.call('POST', '/connect/sessions', { body: { end_user: { id: 'x' }, unknown: true } }), 400, 'invalid_body');
    expectError(
      await api.call('POST', '/connect/sessions/reconnect', { body: { connection_id: 'ghost', integration_id: 'keys' } }),
      404,
      'unknown_connection',
    );
    expectError(
      await api.call('POST', '/connect/sessions/reconnect', { body: { connection_id: 'recon-1', integration_id: 'ghost' } }),
      400,
      'unknown_integration',
    );
    expectError(await api.call('POST', '/connect/sessions/reconnect', { body: { connection_id: 'recon-1' } }), 400, 'invalid_body');
  });
});

describe('OpenAPI document', () => {
  let doc: any;
  beforeAll(async () => {
    const res = await fetch(`${api.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = await res.json();
  });

  it('documents every registered REST route, and the deprecated import as deprecated', () => {
    expect(doc.openapi).toBe('3.1.0');
    const documented = new Set(
      Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`)),
    );
    // Every route on the secret-key router, walked from express's own stack (the proxy's catch-all excepted).
    const registered = secretKeyRoutes(createApp(api.ctx)).filter((r) => !r.includes(' /proxy'));
    expect(registered.length).toBeGreaterThanOrEqual(13);
    for (const r of registered) expect(documented).toContain(r);
    const expected = [
      'get /providers',
      'get /providers/{provider}',
      'post /connections',
      'post /connection',
      'get /connections',
      'get /connections/{connectionId}',
      'delete /connections/{connectionId}',
      'post /connections/metadata',
      'patch /connections/metadata',
      'post /connection/{connectionId}/metadata',
      'patch /connection/{connectionId}/metadata',
      'post /connect/sessions',
      'post /connect/sessions/reconnect',
    ];
    for (const e of expected) expect(documented).toContain(e);
    expect(doc.paths['/connection'].post.deprecated).toBe(true);
    expect(doc.paths['/connections'].post.deprecated).toBeUndefined();
    const getParams = doc.paths['/connections/{connectionId}'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(getParams).toEqual(
      expect.arrayContaining([
        'path:connectionId',
        'query:provider_config_key',
        'query:force_refresh',
        'query:refresh_token',
        'query:refresh_codehost_app_jwt_token',
      ]),
    );
    expect(doc.paths['/connections/{connectionId}'].get.responses['424'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/Error',
    );
  });

  it('answers match the documented schemas', async () => {
    const validate = (path: string, method: string, status: number, body: unknown) => {
      const schema = doc.paths[path][method].responses[String(status)].content['application/json'].schema;
      const result = z.fromJSONSchema(schema).safeParse(body);
      if (!result.success) throw new Error(`${method} ${path} ${status}: ${result.error.message}`);
    };
    await importKey('doc-1', { end_user: { id: 'doc-user' }, metadata: { k: 'v' } });
    validate('/connections/{connectionId}', 'get', 200, (await api.call('GET', '/connections/doc-1?provider_config_key=keys')).body);
    validate('/connections', 'get', 200, (await api.call('GET', '/connections?limit=3')).body);
    validate('/providers/{provider}', 'get', 200, (await api.call('GET', `/providers/${OAUTH}`)).body);
    validate('/providers', 'get', 200, (await api.call('GET', '/providers')).body);
    validate(
      '/connect/sessions',
      'post',
      201,
      (await api.call('POST', '/connect/sessions', { body: { end_user: { id: 'd' }, allowed_integrations: ['keys'] } })).body,
    );
    validate(
      '/connections/metadata',
      'patch',
      200,
      (
        await api.call('PATCH', '/connections/metadata', {
          body: { provider_config_key: 'keys', connection_id: 'doc-1', metadata: { x: 1 } },
        })
      ).body,
    );
    const errorSchema = z.fromJSONSchema(doc.components.schemas.Error);
    expect(errorSchema.safeParse((await api.call('GET', '/connections/none?provider_config_key=keys')).body).success).toBe(true);
    // A response that does not fit is caught (the check can fail).
    expect(() => validate('/connections/{connectionId}', 'get', 200, { id: 'not-a-number' })).toThrow();
  });
});

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** `method /path` of every route of the router that serves /providers (the secret-key router), in OpenAPI path syntax. */
function secretKeyRoutes(app: unknown): string[] {
  const routesOf = (stack: Layer[]): string[] =>
    stack.flatMap((l) =>
      l.route
        ? Object.keys(l.route.methods)
            .filter((m) => l.route!.methods[m])
            .map((m) => `${m} ${l.route!.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`)
        : l.handle?.stack
          ? routesOf(l.handle.stack)
          : [],
    );
  const routers = (stack: Layer[]): Layer[][] =>
    stack.flatMap((l) => (l.handle?.stack ? [l.handle.stack, ...routers(l.handle.stack)] : []));
  const root = (app as { router: { stack: Layer[] } }).router.stack;
  const apiRouter = routers(root).find((stack) => stack.some((l) => l.route?.path === '/providers'));
  if (!apiRouter) throw new Error('secret-key router not found');
  return routesOf(apiRouter);
}
