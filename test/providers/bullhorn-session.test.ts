/**
 * Bullhorn's second login (issue #57, part 4), through Latchkey's real Connect routes, proxy, refresh and
 * a real API server, against the loopback simulator written from Bullhorn's docs
 * (test/support/simulators/bullhorn.ts): the token requests with their parameters in the URL's query, the
 * login (`POST /rest-services/login?version=*&access_token=…`) after the code exchange and again after every
 * refresh, its `BhRestToken` kept as the connection's session token and sent by the proxy in the
 * `BhRestToken` header to the `restUrl` the login named, and an expired session renewed as the docs say (a
 * refresh, then a new login) when the API answers 401. The consent page is the simulator's own handler,
 * called with the authorization URL Latchkey gave.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import { consentOnSimulator } from '../support/simulated-consent.js';
import { sealSession } from '../support/fixtures.js';
import { startSimulatedServer, type Replica } from '../support/replica.js';
import { bullhorn, CORP_TOKEN, REST_HOST } from '../support/simulators/bullhorn.js';
import { startSimulators, type SimRequest, type SimulatorHost } from '../support/simulators/framework.js';

const kc = testKubeConfig();
const sim = bullhorn();
let host: SimulatorHost;
let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let latchkey: Replica;

beforeAll(async () => {
  host = await startSimulators([sim]);
  ns = await createTestNamespace(kc, 'bullhorn');
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  await applyProvider(kc, 'bullhorn', catalogSpec('bullhorn'));
  await createIntegration(kc, ns.name, 'bullhorn', { provider: 'bullhorn' }, { ...sim.client });
  latchkey = await startSimulatedServer(kc, ns.name, {
    key: env.secretKey,
    egress: host.egressGuard(),
    synced: (ctx) => ctx.catalog.getProvider('bullhorn') && ctx.catalog.readSecretValue(ns.name, 'bullhorn-client', 'clientId'),
  });
}, 120_000);

afterAll(async () => {
  await latchkey?.stop();
  await ns?.delete();
  await host?.close();
});

const since = (before: number, method: string, path: string): SimRequest[] =>
  sim.state.requests.slice(before).filter((r) => r.method === method && r.path === path);

/** The end user connects: the Connect start, Bullhorn's consent (its own page), the callback. */
async function connect(endUser: string): Promise<string> {
  const session = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: endUser }, allowedIntegrations: ['bullhorn'] });
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

  it('keeps the refreshed tokens, and the session key it had, when the login after a refresh fails', async () => {
    const before = stored(connectionId).credentials;
    sim.failNextLogin.value = true;
    const res = await latchkey.call(
      'GET',
      `/connections/${encodeURIComponent(connectionId)}?provider_config_key=bullhorn&force_refresh=true`,
    );
    expect(res.status).toBe(200);
    expect(sim.failNextLogin.value).toBe(false);
    const after = stored(connectionId).credentials;
    // The refresh token was spent (Bullhorn's expire when new ones are issued): the new ones are kept.
    expect(after.access_token).toBe(sim.state.accessTokens.at(-1));
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.session_token).toBe(before.session_token);
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
