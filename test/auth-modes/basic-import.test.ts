/**
 * BASIC through the deprecated `POST /connection` (#14's test gap): username and password are stored,
 * GET shows `{ type: 'BASIC', username, password }`, and wrong or missing fields are 400s. The Provider
 * is a test one; no provider is called by an import.
 */
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxyModeBed } from '../support/proxy-mode-bed.js';
import { expectRefused } from '../support/api-clients.js';

const h = bedForFile(async () => {
  const h = await startProxyModeBed('basic-import');
  const provider = await h.addProvider('basic-import', {
    displayName: 'Basic import',
    authMode: 'BASIC',
    proxy: { baseUrl: 'https://api.example.com' },
  });
  await h.addIntegration('basic', provider);
  return h;
});

describe('BASIC through POST /connection', () => {
  it('stores username and password (an empty password too); GET shows { type: BASIC, username, password }', async () => {
    const res = await h.importLegacy('basic', 'b1', {
      username: 'api-user',
      password: 'p@ss:word',
      connection_config: {},
    });
    expect(res.status).toBe(201);
    const got = await h.rest('GET', '/connections/b1?provider_config_key=basic');
    expect(got.status).toBe(200);
    expect(Connection.safeParse(got.body).success).toBe(true);
    expect(got.body.credentials).toEqual({ type: 'BASIC', username: 'api-user', password: 'p@ss:word' });

    const emptyPassword = await h.importLegacy('basic', 'b2', {
      username: 'key-as-user',
      password: '',
    });
    expect(emptyPassword.status).toBe(201);
    expect((await h.rest('GET', '/connections/b2?provider_config_key=basic')).body.credentials).toEqual({
      type: 'BASIC',
      username: 'key-as-user',
      password: '',
    });
    // Importing again replaces the credentials.
    const replaced = await h.importLegacy('basic', 'b1', {
      username: 'api-user',
      password: 'new',
    });
    expect(replaced.status).toBe(200);
    expect((await h.rest('GET', '/connections/b1?provider_config_key=basic')).body.credentials.password).toBe('new');
  });

  it('refuses a missing password or fields of another mode with 400s naming them, and stores nothing', async () => {
    const missing = await h.importLegacy('basic', 'b3', { username: 'u' });
    expectRefused(missing, 'missing_credentials', ['body.password']);
    const wrong = await h.importLegacy('basic', 'b4', { username: 'u', password: 'p', api_key: 'k' });
    expectRefused(wrong, 'credentials_type_mismatch');
    expect(JSON.stringify(wrong.body)).not.toContain('"p"');
    for (const id of ['b3', 'b4']) expect(h.store.connections.getConnection(h.namespace, 'basic', id)).toBeUndefined();
  });
});
