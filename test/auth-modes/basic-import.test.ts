/**
 * BASIC through the deprecated `POST /connection` (#14's test gap): username and password are stored,
 * GET shows `{ type: 'BASIC', username, password }`, and wrong or missing fields are 400s. The Provider
 * is a test one; no provider is called by an import.
 */
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { type JsonCall, restClient, serverOf } from '../support/api-clients.js';
import { startProxyBed, type ProxyBed } from '../support/proxy-bed.js';

let h: ProxyBed;
let rest: JsonCall;

beforeAll(async () => {
  h = await startProxyBed('basic-import');
  rest = restClient(serverOf(h));
  const provider = await h.addProvider('basic-import', {
    displayName: 'Basic import',
    authMode: 'BASIC',
    proxy: { baseUrl: 'https://api.example.com' },
  });
  await h.addIntegration('basic', provider);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('BASIC through POST /connection', () => {
  it('stores username and password (an empty password too); GET shows { type: BASIC, username, password }', async () => {
    const res = await rest('POST', '/connection', {
      provider_config_key: 'basic',
      connection_id: 'b1',
      username: 'api-user',
      password: 'p@ss:word',
      connection_config: {},
    });
    expect(res.status).toBe(201);
    const got = await rest('GET', '/connections/b1?provider_config_key=basic');
    expect(got.status).toBe(200);
    expect(Connection.safeParse(got.body).success).toBe(true);
    expect(got.body.credentials).toEqual({ type: 'BASIC', username: 'api-user', password: 'p@ss:word' });

    const emptyPassword = await rest('POST', '/connection', {
      provider_config_key: 'basic',
      connection_id: 'b2',
      username: 'key-as-user',
      password: '',
    });
    expect(emptyPassword.status).toBe(201);
    expect((await rest('GET', '/connections/b2?provider_config_key=basic')).body.credentials).toEqual({
      type: 'BASIC',
      username: 'key-as-user',
      password: '',
    });
    // Importing again replaces the credentials.
    const replaced = await rest('POST', '/connection', {
      provider_config_key: 'basic',
      connection_id: 'b1',
      username: 'api-user',
      password: 'new',
    });
    expect(replaced.status).toBe(200);
    expect((await rest('GET', '/connections/b1?provider_config_key=basic')).body.credentials.password).toBe('new');
  });

  it('refuses a missing password or fields of another mode with 400s naming them, and stores nothing', async () => {
    const missing = await rest('POST', '/connection', { provider_config_key: 'basic', connection_id: 'b3', username: 'u' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('missing_credentials');
    expect(missing.body.error.errors.map((e: { path: string }) => e.path)).toEqual(['body.password']);
    const wrong = await rest('POST', '/connection', {
      provider_config_key: 'basic',
      connection_id: 'b4',
      username: 'u',
      password: 'p',
      api_key: 'k',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('credentials_type_mismatch');
    expect(JSON.stringify(wrong.body)).not.toContain('"p"');
    for (const id of ['b3', 'b4']) expect(h.store.connections.getConnection(h.namespace, 'basic', id)).toBeUndefined();
  });
});
