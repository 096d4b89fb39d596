/**
 * Auth mode SIGNATURE (WSSE) end to end with the shipped `emarsys` Provider, only `proxy.baseUrl`
 * pointed at loopback. The peer is a hand-written fake of Emarsys' WSSE check (no real server
 * exists to run): it parses X-WSSE, recomputes PasswordDigest = base64(hex(sha1(nonce + created +
 * secret))) with the user's secret, refuses a nonce it has seen, and refuses a Created more than 5
 * minutes old or in the future.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { catalogSpec } from '../support/catalog-files.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxyModeBed } from '../support/proxy-mode-bed.js';
import { startUpstream } from '../support/servers/upstream.js';
import { expectRefused } from '../support/api-clients.js';

const USER = 'acme_api001';
const SECRET = 'J4jc6Vrp8BCFrYvCIrWx';
const WINDOW_MS = 5 * 60_000;

const nonces = new Set<string>();
const seen: Array<{ ok: boolean; why?: string; nonce?: string }> = [];

/** What the fake Emarsys checks; undefined when the header is acceptable. */
function verdict(header: string | undefined): { why?: string; nonce?: string } {
  const m = /^UsernameToken Username="([^"]+)", PasswordDigest="([^"]+)", Nonce="([^"]+)", Created="([^"]+)"$/.exec(header ?? '');
  if (!m) return { why: 'no X-WSSE UsernameToken' };
  const [, user, digest, nonce, created] = m as unknown as [string, string, string, string, string];
  if (user !== USER) return { why: 'unknown user', nonce };
  const expected = Buffer.from(createHash('sha1').update(`${nonce}${created}${SECRET}`).digest('hex')).toString('base64');
  if (digest !== expected) return { why: 'bad digest', nonce };
  const t = Date.parse(created);
  if (!Number.isFinite(t) || Date.now() - t > WINDOW_MS || t - Date.now() > 60_000) return { why: 'Created out of window', nonce };
  if (nonces.has(nonce)) return { why: 'nonce reused', nonce };
  nonces.add(nonce);
  return { nonce };
}

function fakeEmarsys(req: IncomingMessage, res: ServerResponse) {
  const v = verdict(req.headers['x-wsse'] as string | undefined);
  seen.push({ ok: !v.why, ...v });
  res.writeHead(v.why ? 401 : 200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(v.why ? { replyCode: 1, replyText: v.why } : { replyCode: 0, replyText: 'OK', data: { path: req.url } }));
}

const h = bedForFile(async () => {
  const up = await startUpstream();
  up.on('/api/v2/', fakeEmarsys);
  const h = await startProxyModeBed('signature', { up });
  const spec = catalogSpec('emarsys');
  const provider = await h.addProvider('emarsys', { ...spec, proxy: { ...spec.proxy, baseUrl: up.origin } });
  await h.addIntegration('emarsys', provider);
  return { ...h, proxy: h.proxyTo('emarsys') };
});

describe('SIGNATURE (WSSE) through the REST API and the proxy', () => {
  it('an import stores username and secret only; each proxied request carries a new X-WSSE value the fake Emarsys accepts', async () => {
    const imported = await h.importConnection('emarsys', 'shop', {
      credentials: { type: 'SIGNATURE', username: USER, password: SECRET },
    });
    expect(imported.status).toBe(201);
    expect(h.store.connections.getConnection(h.namespace, 'emarsys', 'shop')?.credentials).toEqual({
      type: 'SIGNATURE',
      username: USER,
      password: SECRET,
    });

    seen.length = 0;
    for (let i = 0; i < 3; i++) {
      const res = await h.proxy('shop', '/api/v2/settings');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ replyCode: 0, data: { path: '/api/v2/settings' } });
    }
    expect(seen.map((s) => s.ok)).toEqual([true, true, true]);
    expect(new Set(seen.map((s) => s.nonce)).size).toBe(3);
  });

  it('fetch returns a freshly computed value with its expiry, accepted once by the peer; a replay of it is refused', async () => {
    const a = await h.rest('GET', '/connections/shop?provider_config_key=emarsys');
    expect(a.status).toBe(200);
    expect(Connection.safeParse(a.body).success).toBe(true);
    const creds = a.body.credentials;
    expect(creds).toMatchObject({ type: 'SIGNATURE', username: USER, password: SECRET });
    const expiresIn = Date.parse(creds.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(0);
    expect(expiresIn).toBeLessThanOrEqual(WINDOW_MS);
    const b = await h.rest('GET', '/connections/shop?provider_config_key=emarsys');
    expect(b.body.credentials.token).not.toBe(creds.token);
    // Nothing of it is stored.
    expect(h.store.connections.getConnection(h.namespace, 'emarsys', 'shop')?.credentials.token).toBeUndefined();

    expect(verdict(creds.token).why).toBeUndefined();
    expect(verdict(creds.token).why).toBe('nonce reused');
    // What the peer refuses: another secret, an old Created.
    const wrong = creds.token.replace(/PasswordDigest="[^"]+"/, 'PasswordDigest="AAAA"');
    expect(verdict(wrong).why).toBe('bad digest');
  });

  it('the deprecated POST /connection takes username and password; a wrong secret is the provider 401, passed through', async () => {
    const res = await h.importLegacy('emarsys', 'legacy', {
      username: USER,
      password: 'not-the-secret',
    });
    expect(res.status).toBe(201);
    seen.length = 0;
    expect((await h.proxy('legacy', '/api/v2/settings')).status).toBe(401);
    expect(seen[0]?.why).toBe('bad digest');
    const missing = await h.importLegacy('emarsys', 'bad', { username: USER });
    expectRefused(missing, 'missing_credentials');
    expect(h.store.connections.getConnection(h.namespace, 'emarsys', 'bad')).toBeUndefined();
  });

  it('the Connect UI form asks for the API user and secret (labels from the manifest) and makes a working connection', async () => {
    const call = h.connectApi('wsse-user', ['emarsys']);
    const session = await call('GET', 'session');
    expect(session.body.data.integrations[0]).toMatchObject({
      authMode: 'SIGNATURE',
      flow: 'form',
      fields: [
        { name: 'username', label: 'API user name', secret: false, required: true },
        { name: 'password', label: 'API secret', secret: true, required: true },
      ],
    });
    const done = await call('POST', 'forms', { integration: 'emarsys', values: { username: USER, password: SECRET } });
    expect(done.status).toBe(201);
    const created = h.store.connectionScans.listConnections(h.namespace).find((c) => c.spec.endUser?.id === 'wsse-user')!;
    expect((await h.proxy(created.spec.connectionId, '/api/v2/settings')).status).toBe(200);
  });
});
