/**
 * Auth mode TBA (NetSuite token-based authentication) end to end: the shipped `netsuite-tba`
 * Provider with only `proxy.baseUrl` pointed at loopback, imports through both endpoints, fetch, the
 * Connect UI's form API, and the proxy. The peer is a real OAuth 1.0a server: Debian's
 * python3-oauthlib ResourceEndpoint (test/support/servers/oauth1_server.py) accepting only
 * HMAC-SHA256 signatures by the Integration's consumer and the connection's token, with
 * realm = the account ID (NetSuite's upper-case, underscore form).
 */
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { catalogSpec } from '../support/catalog-files.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxyModeBed } from '../support/proxy-mode-bed.js';
import { startOAuth1Server } from '../support/servers/oauth1-server.js';
import { expectRefused } from '../support/api-clients.js';

const CONSUMER = { clientId: 'netsuite-consumer-key-1', clientSecret: 'netsuite-consumer-secret-1' };
const TOKEN = { tokenId: 'tba-token-id-0123456789abcdef', tokenSecret: 'tba-token-secret-0123456789' };
const ACCOUNT_HOST_FORM = '1234567-sb1';
const REALM = '1234567_SB1';

const h = bedForFile(async () => {
  const peer = await startOAuth1Server(CONSUMER.clientId, CONSUMER.clientSecret, { ...TOKEN, realm: REALM });
  const h = await startProxyModeBed('tba', { peer });
  const spec = catalogSpec('netsuite-tba');
  const provider = await h.addProvider('netsuite-tba', { ...spec, proxy: { ...spec.proxy, baseUrl: `${peer.url}/services/rest` } });
  await h.addIntegration('netsuite', provider, CONSUMER);
  return { ...h, provider, proxy: h.proxyTo('netsuite') };
});

describe('TBA through the REST API and the proxy', () => {
  it('POST /connections stores token ID and secret; fetch shows them (never the consumer override); the proxy signs GETs oauthlib accepts', async () => {
    const imported = await h.importConnection('netsuite', 'acct', {
      credentials: { type: 'TBA', token_id: TOKEN.tokenId, token_secret: TOKEN.tokenSecret },
      connection_config: { accountId: ACCOUNT_HOST_FORM },
    });
    expect(imported.status).toBe(201);
    const fetched = await h.rest('GET', '/connections/acct?provider_config_key=netsuite');
    expect(fetched.status).toBe(200);
    expect(Connection.safeParse(fetched.body).success).toBe(true);
    expect(fetched.body.credentials).toEqual({ type: 'TBA', token_id: TOKEN.tokenId, token_secret: TOKEN.tokenSecret });

    const res = await h.proxy('acct', '/record/v1/customer?limit=5&q=name%20IS%20x');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      client: CONSUMER.clientId,
      token: TOKEN.tokenId,
      realm: REALM,
      signature_method: 'HMAC-SHA256',
      path: '/services/rest/record/v1/customer',
      query: { limit: '5', q: 'name IS x' },
    });
    // Each request has its own nonce: the same call again is accepted, not refused as a replay.
    expect((await h.proxy('acct', '/record/v1/customer?limit=5&q=name%20IS%20x')).status).toBe(200);
  });

  it('signs form bodies too (RESTlets take POSTs); a token oauthlib does not know is the provider 401, passed through', async () => {
    const form = await h.proxy('acct', '/record/v1/search', {
      method: 'POST',
      body: 'type=customer&name=A%26B',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(200);
    expect(form.body).toMatchObject({ ok: true, method: 'POST', realm: REALM });

    await h.importConnection('netsuite', 'revoked', {
      credentials: { type: 'TBA', token_id: 'tba-token-id-revoked-000000', token_secret: 'whatever-secret' },
      connection_config: { accountId: ACCOUNT_HOST_FORM },
    });
    expect((await h.proxy('revoked', '/record/v1/customer')).status).toBe(401);
  });

  it('the realm is the account ID: a connection configured for another account is refused by the peer', async () => {
    await h.importConnection('netsuite', 'other-account', {
      credentials: { type: 'TBA', token_id: TOKEN.tokenId, token_secret: TOKEN.tokenSecret },
      connection_config: { accountId: '7654321' },
    });
    expect((await h.proxy('other-account', '/record/v1/customer')).status).toBe(401);
  });

  it('the deprecated POST /connection takes token_id / token_secret and a consumer override, which signs instead of the Integration', async () => {
    const res = await h.importLegacy('netsuite', 'legacy', {
      token_id: TOKEN.tokenId,
      token_secret: TOKEN.tokenSecret,
      oauth_client_id_override: 'some-other-consumer-key',
      oauth_client_secret_override: 'some-other-consumer-secret',
      connection_config: { accountId: ACCOUNT_HOST_FORM },
    });
    expect(res.status).toBe(201);
    const fetched = await h.rest('GET', '/connections/legacy?provider_config_key=netsuite');
    expect(fetched.body.credentials).toEqual({ type: 'TBA', token_id: TOKEN.tokenId, token_secret: TOKEN.tokenSecret });
    expect(JSON.stringify(fetched.body)).not.toContain('some-other-consumer-secret');
    // oauthlib knows only the Integration's consumer: the override is really what signed.
    expect((await h.proxy('legacy', '/record/v1/customer')).status).toBe(401);
  });

  it('refuses what does not fit with 400s naming the fields, and stores nothing', async () => {
    const missing = await h.importLegacy('netsuite', 'bad1', { token_id: 'x' });
    expectRefused(missing, 'missing_credentials', ['body.token_secret']);
    const wrong = await h.importLegacy('netsuite', 'bad2', { api_key: 'k' });
    expectRefused(wrong, 'credentials_type_mismatch');
    const extra = await h.importConnection('netsuite', 'bad3', {
      credentials: { type: 'TBA', token_id: 'a', token_secret: 'b', oauth_token: 'c' },
    });
    expect(extra.status).toBe(400);
    const noAccount = await h.importConnection('netsuite', 'bad4', {
      credentials: { type: 'TBA', token_id: 'a', token_secret: 'b' },
    });
    expect(noAccount.status).toBe(400);
    expect(JSON.stringify(noAccount.body)).toContain('accountId');
    for (const id of ['bad1', 'bad2', 'bad3', 'bad4'])
      expect(h.store.connections.getConnection(h.namespace, 'netsuite', id)).toBeUndefined();
  });
});

describe('TBA in the Connect UI form API', () => {
  const connect = (method: 'GET' | 'POST', path: string, body?: unknown) => h.connectApi('tba-user', ['netsuite'])(method, path, body);

  it('offers token ID and secret plus the account ID; a submitted form makes a connection the proxy signs for', async () => {
    const session = await connect('GET', 'session');
    expect(session.body.data.integrations[0]).toMatchObject({
      authMode: 'TBA',
      flow: 'form',
      fields: [
        { name: 'tokenId', label: 'Token ID', secret: false, required: true },
        { name: 'tokenSecret', label: 'Token secret', secret: true, required: true },
      ],
      configFields: [{ name: 'accountId', required: true }],
    });
    const done = await connect('POST', 'forms', {
      integration: 'netsuite',
      values: TOKEN,
      connectionConfig: { accountId: ACCOUNT_HOST_FORM },
    });
    expect(done.status).toBe(201);
    const created = h.store.connectionScans.listConnections(h.namespace).find((c) => c.spec.endUser?.id === 'tba-user')!;
    expect(h.store.connections.getConnection(h.namespace, 'netsuite', created.spec.connectionId)?.credentials).toEqual({
      type: 'TBA',
      token_id: TOKEN.tokenId,
      token_secret: TOKEN.tokenSecret,
    });
    expect((await h.proxy(created.spec.connectionId, '/record/v1/customer')).body).toMatchObject({ ok: true, realm: REALM });
  });
});
