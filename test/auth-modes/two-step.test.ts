/**
 * Auth mode TWO_STEP end to end: import (both endpoints), fetch with the exchange done again before
 * expiry, the Connect UI form in chromium, proxy injection, and a refused exchange recorded with a
 * log_id. The provider is the shipped `docker-hub` manifest with its URLs pointed at a loopback
 * server. That server is a hand-written fake of Docker Hub (no real one can run here): like
 * `POST /v2/auth/token` it checks the JSON body's identifier and secret and answers an access token it
 * honours for 10 minutes; its API accepts only a Bearer token it issued and that is still live.
 *
 * The shipped `looker` and `tableau` manifests are run too, each as a copy whose only change is the
 * origin of its URLs (`https://${connectionConfig.host}` → the loopback server; their configuration
 * takes public host names only, which cannot reach loopback). Hand-written fakes
 * again, checking the request shapes the providers document: Looker's `POST /api/4.0/login` takes
 * `client_id` and `client_secret` form-encoded in the body and answers `access_token` + `expires_in`;
 * its API wants `Authorization: token <access_token>`. Tableau's `POST /api/3.21/auth/signin` takes
 * `{"credentials":{"personalAccessTokenName","personalAccessTokenSecret","site":{"contentUrl"}}}` as
 * JSON and answers JSON only when asked with `Accept: application/json` (XML otherwise); the token
 * is at `credentials.token` and goes in `X-Tableau-Auth`.
 */
import { randomBytes } from 'node:crypto';
import { eventually } from '../../dev/cluster.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Connection } from '../../src/http/rest/schemas/connections.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { catalogSpec, startAuthModeBed } from '../support/auth-mode-bed.js';
import { bedForFile } from '../support/file-bed.js';

const USER = 'moby';
const PAT = 'dckr_pat_' + randomBytes(12).toString('hex');
/** Tokens the fake issued: token → expiry (ms). */
const issued = new Map<string, number>();
let exchanges = 0;

const t = bedForFile(
  () => startAuthModeBed('two-step'),
  async () => {
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
    fakeLooker();
    fakeTableau();
    await t.addIntegration('looker-peer', 'looker-peer', atPeer('looker', 'host'));
    await t.addIntegration('tableau-peer', 'tableau-peer', atPeer('tableau', 'serverUrl'));
  },
);

/**
 * A shipped manifest whose only change is where its URLs go: `https://${connectionConfig.KEY}` (the
 * customer's instance) becomes the loopback server. Checked: the copy differs in nothing else.
 */
function atPeer(name: string, hostKey: string): ProviderSpec {
  const shipped = JSON.stringify(catalogSpec(name));
  const instance = `https://\${connectionConfig.${hostKey}}`;
  const moved = shipped.split(instance).join(t.up.origin);
  expect(moved.split(t.up.origin).join(instance)).toBe(shipped);
  const spec = JSON.parse(moved) as ProviderSpec;
  expect(String(spec.twoStep?.tokenUrl)).toMatch(new RegExp(`^${t.up.origin}/`));
  expect(String(spec.proxy?.baseUrl)).toMatch(new RegExp(`^${t.up.origin}/`));
  return spec;
}

/** What a fake token endpoint received, for the body assertions. */
interface Exchange {
  contentType: string | undefined;
  accept: string | undefined;
  query: string;
  body: string;
}
const lookerExchanges: Exchange[] = [];
const tableauExchanges: Exchange[] = [];
const exchangeOf = (req: IncomingMessage, body: Buffer): Exchange => ({
  contentType: req.headers['content-type'],
  accept: req.headers.accept,
  query: new URL(req.url ?? '/', 'http://x').search,
  body: body.toString('utf8'),
});
const LOOKER = { clientId: 'gQ7xTn3kCwP9', clientSecret: 'Zt+4/w&k=9 %qR' };
const TABLEAU = { name: 'ci-reporting', secret: 'Hs0D9wYQTvK6mq5J3x/g==:pQ7e2LkVn4XUzRfA8aWb1cNt' };
/** Token → [expiry (ms), which fake issued it]. */
const live = new Map<string, [number, 'looker' | 'tableau']>();
const isLive = (token: string | undefined, who: 'looker' | 'tableau') =>
  token !== undefined && (live.get(token)?.[0] ?? 0) > Date.now() && live.get(token)?.[1] === who;
const reply = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

function fakeLooker() {
  t.up.on('/api/4.0/login', (req, res, body) => {
    const seen = exchangeOf(req, body);
    lookerExchanges.push(seen);
    const form = new URLSearchParams(seen.body);
    const ok =
      req.method === 'POST' &&
      seen.contentType === 'application/x-www-form-urlencoded' &&
      form.get('client_id') === LOOKER.clientId &&
      form.get('client_secret') === LOOKER.clientSecret;
    if (!ok) return reply(res, 404, { message: 'Not found', documentation_url: 'https://cloud.google.com/looker/docs/' });
    const token = randomBytes(20).toString('hex');
    live.set(token, [Date.now() + 3600_000, 'looker']);
    reply(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600, refresh_token: null });
  });
  t.up.on('/api/4.0/user', (req, res) => {
    const token = /^token (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!isLive(token, 'looker')) return reply(res, 401, { message: 'Requires authentication' });
    reply(res, 200, { id: '42', token });
  });
}

function fakeTableau() {
  t.up.on('/api/3.21/auth/signin', (req, res, body) => {
    const seen = exchangeOf(req, body);
    tableauExchanges.push(seen);
    if (seen.accept !== 'application/json') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end('<tsResponse><credentials token="xml-only"/></tsResponse>');
      return;
    }
    let sent: { credentials?: { personalAccessTokenName?: unknown; personalAccessTokenSecret?: unknown; site?: { contentUrl?: unknown } } };
    try {
      sent = JSON.parse(seen.body) as typeof sent;
    } catch {
      return reply(res, 400, { error: { code: '400000', summary: 'Bad Request' } });
    }
    const c = sent.credentials;
    if (!seen.contentType?.startsWith('application/json') || typeof c?.site?.contentUrl !== 'string')
      return reply(res, 400, { error: { code: '400000', summary: 'Bad Request' } });
    if (c.personalAccessTokenName !== TABLEAU.name || c.personalAccessTokenSecret !== TABLEAU.secret)
      return reply(res, 401, { error: { code: '401001', summary: 'Signin Error' } });
    const token = `${randomBytes(16).toString('base64url')}|${randomBytes(16).toString('base64url')}`;
    live.set(token, [Date.now() + 7200_000, 'tableau']);
    reply(res, 200, {
      credentials: { site: { id: randomBytes(8).toString('hex'), contentUrl: c.site.contentUrl }, user: { id: 'u-1' }, token },
    });
  });
  t.up.on('/api/3.21/sites', (req, res) => {
    const token = req.headers['x-tableau-auth'] as string | undefined;
    if (!isLive(token, 'tableau')) return reply(res, 401, { error: { code: '401002', summary: 'Unauthorized Access' } });
    reply(res, 200, { token, authorization: req.headers.authorization ?? null });
  });
}

describe('TWO_STEP', () => {
  it('an import exchanges the credentials at once; the proxy sends the token as Bearer and the fake accepts it', async () => {
    const res = await t.importConnection('docker', 'hub', {
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
    const before = await t.expireIn('docker', 'hub', 10_000);
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
    const wrong = await t.importConnection('docker', 'wrong', {
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

  it("the token URL's host goes through the provider's host rules: a Looker host that is an address is a 400 before any request", async () => {
    const res = await t.rest('POST', '/connections', {
      provider_config_key: 'looker',
      credentials: { type: 'TWO_STEP', client_id: 'id', client_secret: 'secret' },
      connection_config: { host: '127.0.0.1' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_connection_config');
  });

  it('the deprecated POST /connection takes the flat username and password', async () => {
    const res = await t.importLegacy('docker', 'flat', {
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
    await t.importConnection('docker', 'revoked', {
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
        t.bed.latchkey.ctx.connections
          .getConnection(t.namespace, 'docker', 'revoked')
          ?.resource.status?.errors?.filter((e) => e.type === 'auth'),
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

/** Imports a Tableau connection with the personal access token's name and `secret`. */
const importTableau = (connectionId: string, secret: string, config: Record<string, string>) =>
  t.importConnection('tableau-peer', connectionId, {
    credentials: { type: 'TWO_STEP', pat_name: TABLEAU.name, pat_secret: secret },
    connection_config: { serverUrl: 'prod-useast-a.online.tableau.com', ...config },
  });

describe('TWO_STEP: the shipped Looker and Tableau manifests against peers', () => {
  it('Looker: the peer gets client_id and client_secret form-encoded in the body; fetch and the proxy use the token', async () => {
    lookerExchanges.length = 0;
    const res = await t.importConnection('looker-peer', 'bi', {
      credentials: { type: 'TWO_STEP', client_id: LOOKER.clientId, client_secret: LOOKER.clientSecret },
      connection_config: { host: 'acme.cloud.looker.com' },
    });
    expect(res.status).toBe(201);
    expect(lookerExchanges).toHaveLength(1);
    const sent = lookerExchanges[0]!;
    expect(sent.contentType).toBe('application/x-www-form-urlencoded');
    expect(sent.query).toBe(''); // never in the URL (Looker deprecates query credentials)
    expect([...new URLSearchParams(sent.body).entries()]).toEqual([
      ['client_id', LOOKER.clientId],
      ['client_secret', LOOKER.clientSecret],
    ]);
    const token = res.body.credentials.token as string;
    expect(isLive(token, 'looker')).toBe(true);
    expect(Math.abs(Date.parse(res.body.credentials.expires_at) - (Date.now() + 3600_000))).toBeLessThan(60_000);

    const fetched = await t.rest('GET', '/connections/bi?provider_config_key=looker-peer');
    expect(fetched.body.credentials.token).toBe(token);
    const proxied = await t.proxyGet('looker-peer', 'bi', '/4.0/user');
    expect(proxied.status).toBe(200);
    expect(proxied.body.token).toBe(token);
    expect(lookerExchanges).toHaveLength(1);
  });

  it('Looker: a token near its end is exchanged again (same body) on fetch; the proxy sends the new one', async () => {
    const before = await t.expireIn('looker-peer', 'bi', 10_000);
    const n = lookerExchanges.length;
    const fetched = await t.rest('GET', '/connections/bi?provider_config_key=looker-peer');
    expect(fetched.status).toBe(200);
    expect(lookerExchanges).toHaveLength(n + 1);
    expect(lookerExchanges.at(-1)!.body).toBe(lookerExchanges.at(-2)!.body);
    const renewed = fetched.body.credentials.token as string;
    expect(renewed).not.toBe(before.token);
    expect(isLive(renewed, 'looker')).toBe(true);
    expect((await t.proxyGet('looker-peer', 'bi', '/4.0/user')).body.token).toBe(renewed);
  });

  it('Tableau: the peer gets the nested JSON body with Accept: application/json; fetch and the proxy use credentials.token', async () => {
    tableauExchanges.length = 0;
    const res = await importTableau('site', TABLEAU.secret, { contentUrl: 'acme' });
    expect(res.status).toBe(201);
    expect(tableauExchanges).toHaveLength(1);
    const sent = tableauExchanges[0]!;
    expect(sent.contentType).toBe('application/json');
    expect(sent.accept).toBe('application/json');
    expect(JSON.parse(sent.body)).toEqual({
      credentials: { personalAccessTokenName: TABLEAU.name, personalAccessTokenSecret: TABLEAU.secret, site: { contentUrl: 'acme' } },
    });
    const token = res.body.credentials.token as string;
    expect(isLive(token, 'tableau')).toBe(true);
    // No expiry in the answer: the manifest's 120 minutes (Tableau Cloud's session length).
    expect(Math.abs(Date.parse(res.body.credentials.expires_at) - (Date.now() + 7200_000))).toBeLessThan(60_000);

    const proxied = await t.proxyGet('tableau-peer', 'site', '/sites/abc/workbooks');
    expect(proxied.status).toBe(200);
    expect(proxied.body).toEqual({ token, authorization: null });

    // The default site is the empty content URL, sent as "" (not left out).
    const defaultSite = await importTableau('default-site', TABLEAU.secret, {});
    expect(defaultSite.status).toBe(201);
    expect(JSON.parse(tableauExchanges.at(-1)!.body).credentials.site).toEqual({ contentUrl: '' });
  });

  it('Tableau: a session near its end is signed in again on fetch and through the proxy; a revoked PAT is a 400 naming nothing secret', async () => {
    const before = await t.expireIn('tableau-peer', 'site', 10_000);
    const n = tableauExchanges.length;
    const proxied = await t.proxyGet('tableau-peer', 'site', '/sites/abc/workbooks');
    expect(proxied.status).toBe(200);
    expect(tableauExchanges).toHaveLength(n + 1);
    const renewed = proxied.body.token as string;
    expect(renewed).not.toBe(before.token);
    expect(t.stored('tableau-peer', 'site')!.token).toBe(renewed);
    expect((await t.rest('GET', '/connections/site?provider_config_key=tableau-peer')).body.credentials.token).toBe(renewed);

    const revoked = await importTableau('revoked-pat', 'revoked-pat-secret-value', { contentUrl: 'acme' });
    expect(revoked.status).toBe(400);
    expect(revoked.body.error.code).toBe('invalid_credentials');
    expect(JSON.stringify(revoked.body)).not.toContain('revoked-pat-secret-value');
    expect(t.stored('tableau-peer', 'revoked-pat')).toBeUndefined();
  });
});
