/**
 * OAuth 1 import (#14's test gap): `POST /connections` and the deprecated `POST /connection` both
 * store an OAUTH1 connection, and GET answers `{ type: 'OAUTH1', oauth_token, oauth_token_secret, raw }`
 * (the spec's table). The Provider is a test one; no provider is called (an import stores what it is given).
 */
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxyModeBed } from '../support/proxy-mode-bed.js';
import { expectRefused } from '../support/api-clients.js';

const h = bedForFile(async () => {
  const h = await startProxyModeBed('oauth1-import');
  const provider = await h.addProvider('oauth1-import', {
    displayName: 'OAuth 1 import',
    authMode: 'OAUTH1',
    requestTokenUrl: 'https://api.example.com/oauth/request_token',
    authorizationUrl: 'https://api.example.com/oauth/authorize',
    tokenUrl: 'https://api.example.com/oauth/access_token',
    proxy: { baseUrl: 'https://api.example.com' },
  });
  await h.addIntegration('trello-like', provider, { clientId: 'consumer-key', clientSecret: 'consumer-secret' });
  return h;
});

const shape = (token: string, secret: string) => ({
  type: 'OAUTH1',
  oauth_token: token,
  oauth_token_secret: secret,
  raw: { oauth_token: token, oauth_token_secret: secret },
});

describe('OAuth 1 import', () => {
  it('POST /connections stores it; the answer and GET have the spec shape { type, oauth_token, oauth_token_secret, raw }', async () => {
    const res = await h.importConnection('trello-like', 'o1', {
      credentials: { type: 'OAUTH1', oauth_token: 'tok-1', oauth_token_secret: 'sec-1' },
    });
    expect(res.status).toBe(201);
    expect(res.body.credentials).toEqual(shape('tok-1', 'sec-1'));
    const got = await h.rest('GET', '/connections/o1?provider_config_key=trello-like');
    expect(got.status).toBe(200);
    expect(Connection.safeParse(got.body).success).toBe(true);
    expect(got.body.credentials).toEqual(shape('tok-1', 'sec-1'));
    // A second import replaces the credentials of the same connection.
    const again = await h.importConnection('trello-like', 'o1', {
      credentials: { type: 'OAUTH1', oauth_token: 'tok-2', oauth_token_secret: 'sec-2' },
    });
    expect(again.status).toBe(200);
    expect((await h.rest('GET', '/connections/o1?provider_config_key=trello-like')).body.credentials).toEqual(shape('tok-2', 'sec-2'));
  });

  it('the deprecated POST /connection takes oauth_token and oauth_token_secret; GET shows the same shape', async () => {
    const res = await h.importLegacy('trello-like', 'o2', {
      oauth_token: 'tok-3',
      oauth_token_secret: 'sec-3',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({});
    const got = await h.rest('GET', '/connections/o2?provider_config_key=trello-like');
    expect(got.body.credentials).toEqual(shape('tok-3', 'sec-3'));
  });

  it('refuses incomplete or mismatched OAuth 1 imports with 400s naming the fields, and stores nothing', async () => {
    const missing = await h.importLegacy('trello-like', 'o3', { oauth_token: 'tok' });
    expectRefused(missing, 'missing_credentials', ['body.oauth_token_secret']);
    const wrongField = await h.importLegacy('trello-like', 'o4', { oauth_token: 'tok', oauth_token_secret: 'sec', access_token: 'at' });
    expectRefused(wrongField, 'credentials_type_mismatch');
    const emptyToken = await h.importConnection('trello-like', 'o5', {
      credentials: { type: 'OAUTH1', oauth_token: '', oauth_token_secret: 'sec' },
    });
    expect(emptyToken.status).toBe(400);
    const wrongType = await h.importConnection('trello-like', 'o6', {
      credentials: { type: 'OAUTH2', access_token: 'at' },
    });
    expect(wrongType.body.error.code).toBe('credentials_type_mismatch');
    for (const id of ['o3', 'o4', 'o5', 'o6']) expect(h.store.connections.getConnection(h.namespace, 'trello-like', id)).toBeUndefined();
  });
});
