/**
 * Auth mode NONE: a connection with configuration and no credentials. The shipped `unauthenticated`
 * Provider (with a configuration key and a loopback base URL added for the test), imported through
 * both endpoints, fetched, connected through the Connect UI form API with only the configuration, and
 * proxied to a loopback upstream that reports the headers it got (the proxy adds nothing).
 */
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { catalogSpec } from '../support/catalog-files.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxyModeBed } from '../support/proxy-mode-bed.js';
import { startUpstream } from '../support/servers/upstream.js';

const h = bedForFile(async () => {
  const up = await startUpstream();
  up.on('/', (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ headers: req.headers, url: req.url }));
  });
  const h = await startProxyModeBed('none', { up });
  const spec = catalogSpec('unauthenticated');
  const provider = await h.addProvider('unauthenticated', {
    ...spec,
    connectionConfiguration: [{ name: 'region', enum: ['eu', 'us'], required: true }],
    proxy: { baseUrl: up.origin },
  });
  await h.addIntegration('public', provider);
  return h;
});

describe('NONE', () => {
  it('POST /connections with only configuration; fetch shows credentials { type: NONE }; the proxy adds no credential', async () => {
    const imported = await h.importConnection('public', 'eu-feed', {
      credentials: { type: 'NONE' },
      connection_config: { region: 'eu' },
    });
    expect(imported.status).toBe(201);
    const fetched = await h.rest('GET', '/connections/eu-feed?provider_config_key=public');
    expect(fetched.status).toBe(200);
    expect(Connection.safeParse(fetched.body).success).toBe(true);
    expect(fetched.body.credentials).toEqual({ type: 'NONE' });
    expect(fetched.body.connection_config).toEqual({ region: 'eu' });

    const res = await h.proxyTo('public')('eu-feed', '/items?x=1');
    expect(res.status).toBe(200);
    const seen = res.body as { headers: Record<string, string>; url: string };
    expect(seen.url).toBe('/items?x=1');
    expect(seen.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen.headers)).not.toContain(h.env.secretKey);
  });

  it('the deprecated POST /connection takes configuration alone and refuses credential fields; a bad configuration is a 400', async () => {
    const ok = await h.importLegacy('public', 'us-feed', {
      connection_config: { region: 'us' },
    });
    expect(ok.status).toBe(201);
    expect((await h.rest('GET', '/connections/us-feed?provider_config_key=public')).body.credentials).toEqual({ type: 'NONE' });
    const withKey = await h.importLegacy('public', 'x1', { api_key: 'k' });
    expect(withKey.status).toBe(400);
    expect(withKey.body.error.code).toBe('credentials_type_mismatch');
    const badRegion = await h.importConnection('public', 'x2', {
      credentials: { type: 'NONE' },
      connection_config: { region: 'mars' },
    });
    expect(badRegion.status).toBe(400);
    expect(h.store.connections.getConnection(h.namespace, 'public', 'x1')).toBeUndefined();
    expect(h.store.connections.getConnection(h.namespace, 'public', 'x2')).toBeUndefined();
  });

  it('the Connect UI offers a form of configuration only and completes with it', async () => {
    const call = h.connectApi('none-user', ['public']);
    const session = await call('GET', 'session');
    expect(session.body.data.integrations[0]).toMatchObject({
      authMode: 'NONE',
      flow: 'form',
      fields: [],
      configFields: [{ name: 'region' }],
    });
    const done = await call('POST', 'forms', { integration: 'public', values: {}, connectionConfig: { region: 'us' } });
    expect(done.status).toBe(201);
    const created = h.store.connectionScans.listConnections(h.namespace).find((c) => c.spec.endUser?.id === 'none-user')!;
    expect(created.spec.connectionConfig).toEqual({ region: 'us' });
    expect(h.store.connections.getConnection(h.namespace, 'public', created.spec.connectionId)?.credentials).toEqual({ type: 'NONE' });
  });
});
