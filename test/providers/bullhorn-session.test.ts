/**
 * Bullhorn's second login (issue #57, part 4), through Latchkey's real Connect routes, proxy, refresh and
 * a real API server, against the loopback simulator written from Bullhorn's docs
 * (test/support/simulators/bullhorn.ts): the token requests with their parameters in the URL's query, the
 * login (`POST /rest-services/login?version=*&access_token=…`) after the code exchange and again after every
 * refresh, its `BhRestToken` kept as the connection's session token and sent by the proxy in the
 * `BhRestToken` header to the `restUrl` the login named (read again on each refresh), an expired session
 * renewed as the docs say (a refresh, then a new login) when the API answers 401, and a login that fails
 * after a refresh reported as the refresh's failure (transient or permanent), the new tokens kept. The consent page is the simulator's own handler,
 * called with the authorization URL Latchkey gave.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import { consentOnSimulator } from '../support/simulated-consent.js';
import type { Replica } from '../support/replica.js';
import { startSimulatedServerBed, type SimulatedServerBed } from '../support/simulated-server-bed.js';
import { bullhorn, CORP_TOKEN, REST_HOST } from '../support/simulators/bullhorn.js';
import type { SimRequest } from '../support/simulators/framework.js';

const kc = testKubeConfig();
const sim = bullhorn();
let bed: SimulatedServerBed;
let ns: SimulatedServerBed['ns'];
let latchkey: Replica;

beforeAll(async () => {
  bed = await startSimulatedServerBed(kc, 'bullhorn', [sim], {
    async prepare(namespace) {
      await applyProvider(kc, 'bullhorn', catalogSpec('bullhorn'));
      await createIntegration(kc, namespace, 'bullhorn', { provider: 'bullhorn' }, { ...sim.client });
    },
    synced: (ctx, namespace) =>
      ctx.catalog.getProvider('bullhorn') && ctx.catalog.readSecretValue(namespace, 'bullhorn-client', 'clientId'),
  });
  ({ ns, latchkey } = bed);
}, 120_000);

afterAll(async () => {
  await bed?.close();
});

const since = (before: number, method: string, path: string): SimRequest[] =>
  sim.state.requests.slice(before).filter((r) => r.method === method && r.path === path);

/** The end user connects: the Connect start, Bullhorn's consent (its own page), the callback. */
async function connect(endUser: string): Promise<string> {
  const session = bed.session('bullhorn', endUser);
  const { authorization, allow, cookie } = await consentOnSimulator(latchkey.url, session, 'bullhorn', sim, '/oauth/authorize');
  expect(authorization.origin + authorization.pathname).toBe('https://auth.bullhornstaffing.com/oauth/authorize');
  const callback = await fetch(allow, { headers: { cookie } });
  expect(callback.status).toBe(200);
  const conn = await eventually(() => latchkey.ctx.connectionScans.listConnections(ns.name).find((c) => c.spec.endUser?.id === endUser));
  return conn.spec.connectionId;
}

const stored = (connectionId: string) => latchkey.ctx.connections.getConnection(ns.name, 'bullhorn', connectionId)!;

const candidate = (connectionId: string) =>
  latchkey.call('GET', '/proxy/entity/Candidate/123?fields=firstName,lastName,address', {
    headers: { 'connection-id': connectionId, 'provider-config-key': 'bullhorn' },
  });

describe('Bullhorn: the OAuth token, then the REST login', () => {
  let connectionId: string;

  it('exchanges the code with its parameters in the query, logs in with the new access token and keeps the session key as a credential', async () => {
    const before = sim.state.requests.length;
    connectionId = await connect('recruiter-1');

    const [exchange] = since(before, 'POST', '/oauth/token');
    expect(exchange!.body).toBe('');
    expect(Object.fromEntries(exchange!.query)).toMatchObject({
      grant_type: 'authorization_code',
      client_id: sim.client.clientId,
      client_secret: sim.client.clientSecret,
    });
    expect(exchange!.query.get('code')).toBeTruthy();
    expect(exchange!.query.get('redirect_uri')).toBeTruthy();

    const logins = since(before, 'POST', '/rest-services/login');
    expect(logins).toHaveLength(1);
    expect(logins[0]!.host).toBe('rest.bullhornstaffing.com');
    expect(logins[0]!.query.get('version')).toBe('*');
    expect(logins[0]!.query.get('access_token')).toBe(sim.state.accessTokens.at(-1));
    expect(logins[0]!.headers.authorization).toBeUndefined();

    const conn = stored(connectionId);
    expect(conn.resource.spec.connectionConfig).toEqual({
      authHost: 'auth.bullhornstaffing.com',
      loginHost: 'rest.bullhornstaffing.com',
      restHost: REST_HOST,
      corpToken: CORP_TOKEN,
    });
    expect(conn.credentials).toMatchObject({
      type: 'OAUTH2',
      access_token: sim.state.accessTokens.at(-1),
      session_token: sim.sessions.at(-1),
    });
    // A credential, never configuration.
    expect(JSON.stringify(conn.resource)).not.toContain(sim.sessions.at(-1));
  });

  it('sends the session key in the BhRestToken header to the restUrl the login named, and no bearer token', async () => {
    const before = sim.state.requests.length;
    const res = await candidate(connectionId);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { data: { firstName: 'FName01' } } });
    const [sent] = sim.state.requests.slice(before);
    expect(sent!.host).toBe(REST_HOST);
    expect(sent!.path).toBe(`/rest-services/${CORP_TOKEN}/entity/Candidate/123`);
    expect(sent!.headers.bhresttoken).toBe(sim.sessions.at(-1));
    expect(sent!.headers.authorization).toBeUndefined();
  });

  it('renews an expired session as the docs say: a 401 from the API, a refresh in the query, a new login, the call again', async () => {
    const first = stored(connectionId).credentials;
    sim.expireSessions();
    const before = sim.state.requests.length;
    const res = await candidate(connectionId);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { data: { lastName: 'LName01' } } });

    const [refresh] = since(before, 'POST', '/oauth/token');
    expect(refresh!.body).toBe('');
    expect(Object.fromEntries(refresh!.query)).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: sim.client.clientId,
      client_secret: sim.client.clientSecret,
    });
    const [login] = since(before, 'POST', '/rest-services/login');
    expect(login!.query.get('access_token')).toBe(sim.state.accessTokens.at(-1));
    const calls = since(before, 'GET', `/rest-services/${CORP_TOKEN}/entity/Candidate/123`);
    expect(calls.map((c) => c.headers.bhresttoken)).toEqual([first.session_token, sim.sessions.at(-1)]);

    const renewed = stored(connectionId).credentials;
    expect(renewed).toMatchObject({ access_token: sim.state.accessTokens.at(-1), session_token: sim.sessions.at(-1) });
    expect(renewed.session_token).not.toBe(first.session_token);
    expect(renewed.refresh_token).not.toBe(first.refresh_token);
  });

  /** The operation log's entries of the connection's refreshes, newest first. */
  const refreshLog = async (id: string) => {
    const res = await latchkey.call('GET', `/logs?integration=bullhorn&connection_id=${encodeURIComponent(id)}&operation=refresh`);
    expect(res.status).toBe(200);
    return (res.body as { logs: Array<{ step: string; outcome: string; messages: string[] }> }).logs;
  };

  const forceRefresh = () =>
    latchkey.call('GET', `/connections/${encodeURIComponent(connectionId)}?provider_config_key=bullhorn&force_refresh=true`);

  it('a login that fails after a refresh: the new tokens kept, the old session key, and the refresh reported failed (transient)', async () => {
    const before = stored(connectionId);
    sim.failNextLogin.value = true;
    const res = await forceRefresh();
    expect(sim.failNextLogin.value).toBe(false);
    // Bullhorn answered 503: a provider failure the next refresh may not meet, never the end user's to fix.
    expect(res.status).toBe(502);
    const error = (res.body as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('provider_unavailable');
    expect(error.message).toContain(
      "Bullhorn's session login after the token refresh failed (bullhorn-rest-login, step login): answered 503",
    );
    const after = stored(connectionId);
    // The refresh token was spent (Bullhorn's expire when new ones are issued): the new ones are kept.
    expect(after.credentials.access_token).toBe(sim.state.accessTokens.at(-1));
    expect(after.credentials.refresh_token).not.toBe(before.credentials.refresh_token);
    expect(after.credentials.session_token).toBe(before.credentials.session_token);
    expect(error.message).not.toContain(String(after.credentials.access_token));

    // As any refresh failure: an error in status, transient, whose log_id is the operation log's entry.
    const status = await eventually(() => {
      const s = stored(connectionId).resource.status;
      return s?.errors?.some((e) => e.refreshFailure !== undefined) ? s : undefined;
    });
    const entry = status.errors!.at(-1)!;
    expect(entry).toMatchObject({ type: 'auth', refreshFailure: 'transient' });
    expect(entry.message).toContain('answered 503');
    expect(status.expiresAt).toBe(String(after.credentials.expires_at));
    const logs = await refreshLog(connectionId);
    // The login's own entry (its request, without the token) and the refresh's failure.
    const login = logs.find((l) => l.step === 'post_connection login' && l.outcome === 'failure');
    expect(login?.messages.join(' ')).toContain('POST https://rest.bullhornstaffing.com/rest-services/login: answered 503');
    const failed = logs.find((l) => l.step === 'fetch' && l.outcome === 'failure');
    expect(failed?.messages.join(' ')).toContain('Token refresh failed (provider unavailable)');
    expect(JSON.stringify(logs)).not.toContain(String(after.credentials.access_token));
    expect(JSON.stringify(status)).not.toContain(String(after.credentials.access_token));

    // The next refresh logs in again: the session is renewed, the error cleared.
    expect((await forceRefresh()).status).toBe(200);
    expect(stored(connectionId).credentials.session_token).toBe(sim.sessions.at(-1));
    await eventually(() => !stored(connectionId).resource.status?.errors?.some((e) => e.refreshFailure !== undefined));
  });

  it('a login refused after a refresh (401): reported as a permanent failure, the end user to reconnect', async () => {
    sim.failNextLogin.value = true;
    sim.failNextLogin.status = 401;
    try {
      const res = await forceRefresh();
      expect(res.status).toBe(424);
      const error = (res.body as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('reauthorization_required');
      expect(error.message).toContain('answered 401 (Invalid or expired OAuth access token.)');
      const entry = await eventually(() =>
        stored(connectionId)
          .resource.status?.errors?.filter((e) => e.refreshFailure !== undefined)
          .at(-1),
      );
      expect(entry.refreshFailure).toBe('permanent');
    } finally {
      sim.failNextLogin.status = undefined;
    }
  });

  it("re-reads the login's restUrl on refresh: a corporation moved to another swimlane is followed, and logged", async () => {
    sim.restHost.value = 'rest33.bullhornstaffing.com';
    try {
      expect((await forceRefresh()).status).toBe(200);
      expect(stored(connectionId).resource.spec.connectionConfig).toMatchObject({
        restHost: 'rest33.bullhornstaffing.com',
        corpToken: CORP_TOKEN,
      });
      const changed = await eventually(async () => (await refreshLog(connectionId)).find((l) => l.step === 'provider_values'));
      expect(changed.messages.join(' ')).toContain(
        'restHost changed from "rest22.bullhornstaffing.com" to "rest33.bullhornstaffing.com": the login answer after the refresh carried it',
      );
      const before = sim.state.requests.length;
      expect((await candidate(connectionId)).status).toBe(200);
      expect(sim.state.requests.slice(before).map((r) => r.host)).toEqual(['rest33.bullhornstaffing.com']);
    } finally {
      sim.restHost.value = REST_HOST;
    }
    // Back: the next refresh's login names the first data centre again.
    expect((await forceRefresh()).status).toBe(200);
    expect(stored(connectionId).resource.spec.connectionConfig).toMatchObject({ restHost: REST_HOST });
  });

  it('logs in on import too, so an imported connection has its session key', async () => {
    const current = stored(connectionId).credentials;
    const before = sim.state.requests.length;
    const res = await latchkey.call('POST', '/connections', {
      body: {
        provider_config_key: 'bullhorn',
        connection_id: 'imported-1',
        credentials: { type: 'OAUTH2', access_token: current.access_token, expires_at: new Date(Date.now() + 600_000).toISOString() },
      },
    });
    expect(res.status).toBeLessThan(300);
    expect(since(before, 'POST', '/rest-services/login')).toHaveLength(1);
    const imported = stored('imported-1');
    expect(imported.credentials.session_token).toBe(sim.sessions.at(-1));
    expect(imported.resource.spec.connectionConfig).toMatchObject({ restHost: REST_HOST, corpToken: CORP_TOKEN });
    const proxied = await candidate('imported-1');
    expect(proxied.status).toBe(200);
  });
});
