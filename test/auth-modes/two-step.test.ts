/**
 * Auth mode TWO_STEP end to end: import (both endpoints), fetch with the exchange done again before
 * expiry, the Connect UI form in chromium, proxy injection, and a refused exchange recorded with a
 * log_id. The provider is the shipped `docker-hub` manifest with its URLs pointed at a loopback
 * server. That server is a hand-written fake of Docker Hub (no real one can run here): like
 * `POST /v2/auth/token` it checks the JSON body's identifier and secret and answers an access token it
 * honours for 10 minutes; its API accepts only a Bearer token it issued and that is still live.
 */
import { randomBytes } from 'node:crypto';
import { eventually } from '../../dev/cluster.js';
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { catalogSpec, startAuthModeBed, type AuthModeBed } from '../support/auth-mode-bed.js';

const USER = 'moby';
const PAT = 'dckr_pat_' + randomBytes(12).toString('hex');
let t: AuthModeBed;
/** Tokens the fake issued: token → expiry (ms). */
const issued = new Map<string, number>();
let exchanges = 0;

beforeAll(async () => {
  t = await startAuthModeBed('two-step');
  t.up.on('/v2/auth/token', (req, res, body) => {
    exchanges++;
    let json: { identifier?: unknown; secret?: unknown } = {};
    try {
      json = JSON.parse(body.toString()) as typeof json;
    } catch {
      /* refused below */
    }
    if (!String(req.headers['content-type']).startsWith('application/json') || json.identifier !== USER || json.secret !== PAT) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'Incorrect authentication credentials' }));
      return;
    }
    const token = randomBytes(16).toString('hex');
    issued.set(token, Date.now() + 600_000);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: token }));
  });
  t.up.on('/v2/repositories/', (req, res) => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const ok = token !== undefined && (issued.get(token) ?? 0) > Date.now();
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { count: 1, token } : { detail: 'auth required' }));
  });
  const spec = catalogSpec('docker-hub');
  await t.addIntegration('docker', 'docker-hub', {
    ...spec,
    twoStep: { ...spec.twoStep, tokenUrl: `${t.up.origin}/v2/auth/token` },
    proxy: { ...spec.proxy, baseUrl: t.up.origin },
  });
  await t.addIntegration('looker', 'looker', catalogSpec('looker'));
});

afterAll(async () => {
  await t?.close();
});

describe('TWO_STEP', () => {
  it('an import exchanges the credentials at once; the proxy sends the token as Bearer and the fake accepts it', async () => {
    const res = await t.rest('POST', '/connections', {
      provider_config_key: 'docker',
      connection_id: 'hub',
      credentials: { type: 'TWO_STEP', username: USER, password: PAT },
    });
    expect(res.status).toBe(201);
    expect(Connection.safeParse(res.body).success).toBe(true);
    const creds = res.body.credentials;
    expect(creds).toMatchObject({ type: 'TWO_STEP', username: USER, password: PAT });
    expect(issued.has(creds.token)).toBe(true);
    // Docker Hub's answer has no expiry: the manifest's 10 minutes apply.
    expect(Math.abs(Date.parse(creds.expires_at) - (Date.now() + 600_000))).toBeLessThan(60_000);

    const proxied = await t.proxyGet('docker', 'hub', '/v2/repositories/moby/');
    expect(proxied.status).toBe(200);
    expect(proxied.body.token).toBe(creds.token);
  });

  it('a token about to expire is exchanged again when the connection is fetched, and the new one is stored', async () => {
    const before = t.stored('docker', 'hub')!;
    await t.setStored('docker', 'hub', { ...before, expires_at: new Date(Date.now() + 10_000).toISOString() });
    const n = exchanges;
    const res = await t.rest('GET', '/connections/hub?provider_config_key=docker');
    expect(res.status).toBe(200);
    expect(exchanges).toBe(n + 1);
    expect(res.body.credentials.token).not.toBe(before.token);
    expect(issued.has(res.body.credentials.token)).toBe(true);
    expect(Date.parse(res.body.credentials.expires_at)).toBeGreaterThan(Date.now() + 500_000);
    expect(t.stored('docker', 'hub')!.token).toBe(res.body.credentials.token);
  });

  it('refused, unknown and missing credentials are 400s that never echo the secret; nothing is stored', async () => {
    const wrong = await t.rest('POST', '/connections', {
      provider_config_key: 'docker',
      connection_id: 'wrong',
      credentials: { type: 'TWO_STEP', username: USER, password: 'dckr_pat_wrong-secret-value' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('invalid_credentials');
    expect(JSON.stringify(wrong.body)).not.toContain('wrong-secret-value');
    expect(t.stored('docker', 'wrong')).toBeUndefined();

    const unknown = await t.rest('POST', '/connections', {
      provider_config_key: 'docker',
      credentials: { type: 'TWO_STEP', username: USER, password: PAT, otp: '123' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.errors).toEqual([expect.objectContaining({ path: 'body.credentials.otp' })]);
    const missing = await t.rest('POST', '/connections', {
      provider_config_key: 'docker',
      credentials: { type: 'TWO_STEP', username: USER },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.errors).toEqual([
      expect.objectContaining({ path: 'body.credentials.password', code: 'missing_credentials' }),
    ]);
  });

  it("the token URL's host goes through the provider's host rules: a Looker host off looker.com is a 400 before any request", async () => {
    const res = await t.rest('POST', '/connections', {
      provider_config_key: 'looker',
      credentials: { type: 'TWO_STEP', client_id: 'id', client_secret: 'secret' },
      connection_config: { host: '127.0.0.1' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_connection_config');
  });

  it('the deprecated POST /connection takes the flat username and password', async () => {
    const res = await t.rest('POST', '/connection', {
      provider_config_key: 'docker',
      connection_id: 'flat',
      username: USER,
      password: PAT,
    });
    expect(res.status).toBe(201);
    const stored = t.stored('docker', 'flat')!;
    expect(stored).toMatchObject({ type: 'TWO_STEP', username: USER, password: PAT });
    expect(issued.has(stored.token as string)).toBe(true);
    const apiKey = await t.rest('POST', '/connection', { provider_config_key: 'docker', api_key: 'k' });
    expect(apiKey.status).toBe(400);
  });

  it('credentials the provider no longer accepts: the fetch fails with a log_id and the connection carries an auth error', async () => {
    await t.rest('POST', '/connections', {
      provider_config_key: 'docker',
      connection_id: 'revoked',
      credentials: { type: 'TWO_STEP', username: USER, password: PAT },
    });
    const before = t.stored('docker', 'revoked')!;
    await t.setStored('docker', 'revoked', {
      ...before,
      password: 'dckr_pat_revoked',
      expires_at: new Date(Date.now() - 1000).toISOString(),
    });
    const res = await t.rest('GET', '/connections/revoked?provider_config_key=docker');
    expect(res.status).toBe(424);
    expect(res.body.error.code).toBe('reauthorization_required');
    expect(JSON.stringify(res.body)).not.toContain('dckr_pat_revoked');
    const errors = await eventually(
      () =>
        t.bed.latchkey.ctx.store.getConnection(t.namespace, 'docker', 'revoked')?.resource.status?.errors?.filter((e) => e.type === 'auth'),
      60_000,
    );
    expect(errors[0]!.logId).toBeTruthy();
    expect(errors[0]!.message).not.toContain('dckr_pat_revoked');
    expect(res.body.error.message).toContain(errors[0]!.logId);
  });

  it('the Connect UI form (chromium) shows the manifest fields, exchanges them and stores the connection', async () => {
    const connectionId = await t.connectWithForm('docker', { username: USER, password: PAT });
    const stored = t.stored('docker', connectionId)!;
    expect(stored).toMatchObject({ type: 'TWO_STEP', username: USER, password: PAT });
    expect(issued.has(stored.token as string)).toBe(true);
    const message = await t.formError('docker', { username: USER, password: 'dckr_pat_typo' });
    expect(message).toMatch(/did not accept/);
  });
});
