/**
 * Credentials typed into the Connect form (an API key, a username and password) are checked with the
 * Provider's `verification` call before anything is stored, injected as the proxy injects them: a
 * refusal (401/403) is the form's error and a failed attempt in the operation log; a provider that is
 * down or answers 404 or a 5xx "could not check it right now" (the log keeps what it said); nothing is stored either way. Import is not checked (the application
 * vouches for what it sends). Against the real control plane and a loopback provider (`startUpstream`).
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const kc = testKubeConfig();
const KEY_PROVIDER = `checked-key-${process.pid}`;
const BASIC_PROVIDER = `checked-basic-${process.pid}`;
const DOWN_PROVIDER = `checked-down-${process.pid}`;
const GOOD_KEY = 'good-key-0123456789abcdef';
const BAD_KEY = 'bad-key-0123456789abcdef';
const GOOD_BASIC = `Basic ${Buffer.from('ada:right-password-1234').toString('base64')}`;

let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let replica: Replica;
let provider: Upstream;
/** The next answers of the key check, before it looks at the key (a provider having a bad moment). */
const outages: number[] = [];
/** What the provider says with an outage's answer (its words reach the operation log). */
const OUTAGE_BODY = { error: { message: 'Invalid URL (GET /v1/me)', type: 'invalid_request_error' } };

beforeAll(async () => {
  provider = await startUpstream();
  provider.on('/v1/me', (req, res) => {
    const status = outages.shift() ?? (req.headers['x-api-key'] === GOOD_KEY && req.headers['x-api-version'] === '2' ? 200 : 401);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status === 200 ? { id: 'me' } : status === 401 ? { error: 'nope' } : OUTAGE_BODY));
  });
  provider.on('/basic/whoami', (req, res) => {
    res.writeHead(req.headers.authorization === GOOD_BASIC ? 200 : 403).end();
  });
  // A port nothing listens on: the provider is down.
  const gone = await startUpstream();
  const downOrigin = gone.origin;
  await gone.close();

  ns = await createTestNamespace(kc, 'typed-checked');
  await applyProvider(kc, KEY_PROVIDER, {
    displayName: 'Keyed CRM',
    authMode: 'API_KEY',
    proxy: { baseUrl: `${provider.origin}/v1`, headers: { 'x-api-key': '${apiKey}' } },
    verification: { path: '/me', headers: { 'x-api-version': '2' } },
  });
  await applyProvider(kc, BASIC_PROVIDER, {
    displayName: 'Basic Tracker',
    authMode: 'BASIC',
    proxy: { baseUrl: provider.origin },
    verification: { path: `${provider.origin}/basic/whoami` },
  });
  await applyProvider(kc, DOWN_PROVIDER, {
    displayName: 'Sleepy API',
    authMode: 'API_KEY',
    proxy: { baseUrl: downOrigin, headers: { authorization: 'Bearer ${apiKey}' } },
    verification: { path: '/me' },
  });
  await createIntegration(kc, ns.name, 'keyed', { provider: KEY_PROVIDER });
  await createIntegration(kc, ns.name, 'tracker', { provider: BASIC_PROVIDER });
  await createIntegration(kc, ns.name, 'sleepy', { provider: DOWN_PROVIDER });
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  replica = await startReplica(kc, { namespaces: [ns.name], identity: 'typed-checked', key: env.secretKey });
  await eventually(
    () =>
      replica.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      ['keyed', 'tracker', 'sleepy'].every((i) => replica.ctx.catalog.getIntegration(ns.name, i)) &&
      [KEY_PROVIDER, BASIC_PROVIDER, DOWN_PROVIDER].every((p) => replica.ctx.catalog.getProvider(p)),
  );
});

afterAll(async () => {
  await replica?.stop();
  await Promise.all([KEY_PROVIDER, BASIC_PROVIDER, DOWN_PROVIDER].map((p) => deleteProvider(kc, p)));
  await provider?.close();
  await ns?.delete();
});

async function submitForm(endUser: string, integration: string, values: Record<string, string>) {
  const session = await replica.call('POST', '/connect/sessions', {
    body: { end_user: { id: endUser }, allowed_integrations: [integration] },
  });
  expect(session.status).toBe(201);
  const res = await fetch(`${replica.url}/connect/api/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.body.data.token as string}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration, values }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const connectionsOf = (endUser: string) =>
  replica.ctx.connectionScans.listConnections(ns.name).filter((c) => c.spec.endUser?.id === endUser);
const checksSince = (before: number, path: string) => provider.requests.slice(before).filter((r) => r.url.startsWith(path));

describe('typed credentials checked with the provider', () => {
  it('refuses a key the provider refuses: a form error, a failed attempt in the log, nothing stored', async () => {
    const before = provider.requests.length;
    const res = await submitForm('refused-user', 'keyed', { apiKey: BAD_KEY });
    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_credentials']);
    expect(res.body.error.message).toBe('Keyed CRM refused this API key.');
    // Sent once, as the proxy sends it: the templated header under proxy.baseUrl, and the check's own header.
    const checks = checksSince(before, '/v1/me');
    expect(checks).toHaveLength(1);
    expect(checks[0]!.headers).toMatchObject({ 'x-api-key': BAD_KEY, 'x-api-version': '2' });
    expect(connectionsOf('refused-user')).toEqual([]);
    const entry = await eventually(async () => {
      const logs = await replica.call('GET', '/logs?integration=keyed&end_user_id=refused-user&outcome=failure');
      return logs.body.logs?.[0];
    });
    expect(entry).toMatchObject({ operation: 'authorization', step: 'form' });
    expect(JSON.stringify(entry)).toContain('HTTP 401');
    expect(JSON.stringify(entry)).not.toContain(BAD_KEY);
  });

  it('stores a key the provider accepts', async () => {
    const before = provider.requests.length;
    const res = await submitForm('accepted-user', 'keyed', { apiKey: GOOD_KEY });
    expect(res.status).toBe(201);
    expect(checksSince(before, '/v1/me')).toHaveLength(1);
    const [conn] = await eventually(() => (connectionsOf('accepted-user').length ? connectionsOf('accepted-user') : undefined));
    const stored = replica.ctx.connections.getConnection(ns.name, 'keyed', conn!.spec.connectionId);
    expect(stored?.credentials).toMatchObject({ type: 'API_KEY', apiKey: GOOD_KEY });
  });

  it('checks a username and password with HTTP Basic at an absolute URL: refused, then accepted', async () => {
    const refused = await submitForm('basic-user', 'tracker', { username: 'ada', password: 'wrong-password-1234' });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_credentials']);
    expect(refused.body.error.message).toBe('Basic Tracker refused this username and password.');
    expect(connectionsOf('basic-user')).toEqual([]);
    const accepted = await submitForm('basic-user', 'tracker', { username: 'ada', password: 'right-password-1234' });
    expect(accepted.status).toBe(201);
    await eventually(() => connectionsOf('basic-user').length === 1);
  });

  it('says the provider could not check it right now when it is down, or answers 404 or a 5xx; stores nothing; the log keeps what it said', async () => {
    const down = await submitForm('down-user', 'sleepy', { apiKey: GOOD_KEY });
    expect([down.status, down.body.error.code]).toEqual([502, 'provider_unavailable']);
    expect(down.body.error.message).toBe('Sleepy API could not check this API key right now; try again.');
    for (const status of [503, 404]) {
      outages.push(status);
      const failing = await submitForm(`down-user-${status}`, 'keyed', { apiKey: GOOD_KEY });
      expect([failing.status, failing.body.error.code]).toEqual([502, 'provider_unavailable']);
      expect(failing.body.error.message).toBe('Keyed CRM could not check this API key right now; try again.');
      expect(JSON.stringify(failing.body)).not.toContain(GOOD_KEY);
      expect(connectionsOf(`down-user-${status}`)).toEqual([]);
      const entry = await eventually(async () => {
        const logs = await replica.call('GET', `/logs?integration=keyed&end_user_id=down-user-${status}&outcome=failure`);
        return logs.body.logs?.[0];
      });
      // The operation log keeps the provider's answer (its status and its words), never the key.
      expect(JSON.stringify(entry)).toContain(`HTTP ${status}`);
      expect(JSON.stringify(entry)).toContain('Invalid URL (GET /v1/me)');
      expect(JSON.stringify(entry)).not.toContain(GOOD_KEY);
    }
    expect(JSON.stringify(down.body)).not.toContain(GOOD_KEY);
    expect(connectionsOf('down-user')).toEqual([]);
  });

  it('does not check an imported key (the application vouches for it)', async () => {
    const before = provider.requests.length;
    const res = await replica.call('POST', '/connections', {
      body: { provider_config_key: 'keyed', connection_id: 'imported-key', credentials: { type: 'API_KEY', apiKey: BAD_KEY } },
    });
    expect(res.status).toBe(201);
    expect(checksSince(before, '/v1/me')).toHaveLength(0);
  });
});
