/**
 * Auth mode BILL end to end: import, fetch with the session renewed before it lapses, the Connect UI
 * form in chromium, and proxy injection. The provider is the shipped `bill-sandbox` manifest with its
 * URLs pointed at a loopback server. That server is a hand-written fake of Bill.com's v3 API (no real
 * one can run here): like `POST /v3/login` it checks username, password, organizationId and devKey and
 * answers a sessionId; its API accepts a call only with the devKey header and a live sessionId header
 * (a session lapses 35 minutes after its last use, as Bill.com documents).
 */
import { randomBytes } from 'node:crypto';
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { catalogSpec, startAuthModeBed } from '../support/auth-mode-bed.js';
import { bedForFile } from '../support/file-bed.js';

const SIGN_IN = {
  username: 'ap@acme.test',
  password: 'pw-' + randomBytes(6).toString('hex'),
  organization_id: '00801ABCDEFGHIJ1234',
  dev_key: 'dev-' + randomBytes(8).toString('hex'),
};
/** Sessions the fake opened: sessionId → last use (ms). */
const sessions = new Map<string, number>();
let logins = 0;

const t = bedForFile(
  () => startAuthModeBed('bill'),
  async () => {
    t.up.on('/connect/v3/login', (req, res, body) => {
      logins++;
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body.toString()) as Record<string, unknown>;
      } catch {
        /* refused below */
      }
      const ok =
        json.username === SIGN_IN.username &&
        json.password === SIGN_IN.password &&
        json.organizationId === SIGN_IN.organization_id &&
        json.devKey === SIGN_IN.dev_key;
      if (!ok) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify([{ code: 'BDC_1109', message: 'Invalid username or password' }]));
        return;
      }
      const sessionId = randomBytes(12).toString('hex');
      sessions.set(sessionId, Date.now());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sessionId, organizationId: SIGN_IN.organization_id, userId: '00601USER', trusted: false }));
    });
    t.up.on('/connect/v3/vendors', (req, res) => {
      const sessionId = String(req.headers.sessionid ?? '');
      const last = sessions.get(sessionId);
      const ok = req.headers.devkey === SIGN_IN.dev_key && last !== undefined && Date.now() - last < 35 * 60_000;
      if (ok) sessions.set(sessionId, Date.now());
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? { results: [], sessionId } : [{ code: 'BDC_1361', message: 'Session is invalid' }]));
    });
    const spec = catalogSpec('bill-sandbox');
    await t.addIntegration('bill', 'bill-sandbox', {
      ...spec,
      tokenUrl: `${t.up.origin}/connect/v3/login`,
      proxy: { ...spec.proxy, baseUrl: `${t.up.origin}/connect` },
    });
  },
);

describe('BILL', () => {
  it('an import signs in at once; the proxy sends devKey and sessionId and the fake accepts them', async () => {
    const res = await t.importConnection('bill', 'ap', {
      credentials: { type: 'BILL', ...SIGN_IN },
    });
    expect(res.status).toBe(201);
    expect(Connection.safeParse(res.body).success).toBe(true);
    const creds = res.body.credentials;
    expect(creds).toMatchObject({ type: 'BILL', ...SIGN_IN, user_id: '00601USER' });
    expect(sessions.has(creds.session_id)).toBe(true);
    expect(Math.abs(Date.parse(creds.expires_at) - (Date.now() + 35 * 60_000))).toBeLessThan(60_000);

    const proxied = await t.proxyGet('bill', 'ap', '/v3/vendors');
    expect(proxied.status).toBe(200);
    expect(proxied.body.sessionId).toBe(creds.session_id);
  });

  it('a session about to lapse is renewed by signing in again when the connection is fetched', async () => {
    const before = await t.expireIn('bill', 'ap', 30_000);
    const n = logins;
    const res = await t.rest('GET', '/connections/ap?provider_config_key=bill');
    expect(res.status).toBe(200);
    expect(logins).toBe(n + 1);
    expect(res.body.credentials.session_id).not.toBe(before.session_id);
    expect(t.stored('bill', 'ap')!.session_id).toBe(res.body.credentials.session_id);
  });

  it('a lapsed session: the proxy gets a 401, signs in again and retries with the new session', async () => {
    const before = t.stored('bill', 'ap')!;
    sessions.set(before.session_id as string, Date.now() - 36 * 60_000); // idle for 36 minutes at Bill.com
    const proxied = await t.proxyGet('bill', 'ap', '/v3/vendors');
    expect(proxied.status).toBe(200);
    expect(proxied.body.sessionId).not.toBe(before.session_id);
  });

  it('a refused sign-in is a 400 that never echoes the password; unknown fields and the flat import are refused', async () => {
    const wrong = await t.importConnection('bill', 'wrong', {
      credentials: { type: 'BILL', ...SIGN_IN, password: 'not-the-password' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('invalid_credentials');
    expect(JSON.stringify(wrong.body)).not.toContain('not-the-password');
    expect(t.stored('bill', 'wrong')).toBeUndefined();
    const extra = await t.rest('POST', '/connections', {
      provider_config_key: 'bill',
      credentials: { type: 'BILL', ...SIGN_IN, mfa: '1' },
    });
    expect(extra.status).toBe(400);
    const flat = await t.rest('POST', '/connection', {
      provider_config_key: 'bill',
      username: SIGN_IN.username,
      password: SIGN_IN.password,
    });
    expect(flat.status).toBe(400);
    expect(flat.body.error.message).toContain('POST /connections');
  });

  it('the Connect UI form (chromium) takes the four sign-in fields and stores a session', async () => {
    const connectionId = await t.connectWithForm('bill', SIGN_IN);
    const stored = t.stored('bill', connectionId)!;
    expect(stored).toMatchObject({ type: 'BILL', ...SIGN_IN });
    expect(sessions.has(stored.session_id as string)).toBe(true);
  });
});
