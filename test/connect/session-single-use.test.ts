/**
 * A Connect session token completes at most one connection per integration (a reconnect token: its
 * one re-authorization), on every replica: a second completion with the same token (a second form
 * submit, a second OAuth flow's callback) answers 409 `session_already_used` and changes nothing.
 * Against the real control plane, two server replicas sharing only it, and a loopback OAuth 2
 * provider (`startUpstream`) that counts its token calls.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const KEY_PROVIDER = `single-use-key-${process.pid}`;
const OAUTH_PROVIDER = `single-use-oauth-${process.pid}`;
const CC_PROVIDER = `single-use-cc-${process.pid}`;
const CLIENT = { clientId: 'single-use-client', clientSecret: 'single-use-client-secret-0123456789' };

let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let a: Replica;
let b: Replica;
let provider: Upstream;
/** The token endpoint's next answers (status 400 for a refused code); then tokens numbered by call. */
const tokenAnswers: number[] = [];

beforeAll(async () => {
  provider = await startUpstream();
  let issued = 0;
  provider.on('/token', (_req, res) => {
    const status = tokenAnswers.shift() ?? 200;
    issued++;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        status === 200
          ? { access_token: `at-${issued}`, refresh_token: `rt-${issued}`, token_type: 'Bearer', expires_in: 3600 }
          : { error: 'invalid_grant' },
      ),
    );
  });
  ns = await createTestNamespace(kc, 'single-use');
  await applyProvider(kc, KEY_PROVIDER, { displayName: 'Keyed', authMode: 'API_KEY' });
  await applyProvider(kc, OAUTH_PROVIDER, {
    displayName: 'Acme',
    authMode: 'OAUTH2',
    authorizationUrl: `${provider.origin}/authorize`,
    tokenUrl: `${provider.origin}/token`,
  });
  await applyProvider(kc, CC_PROVIDER, { displayName: 'Machine API', authMode: 'OAUTH2_CC', tokenUrl: `${provider.origin}/token` });
  await createIntegration(kc, ns.name, 'machine', { provider: CC_PROVIDER });
  await createIntegration(kc, ns.name, 'keyed', { provider: KEY_PROVIDER });
  await createIntegration(kc, ns.name, 'keyed-too', { provider: KEY_PROVIDER });
  await createIntegration(kc, ns.name, 'acme', { provider: OAUTH_PROVIDER }, CLIENT);
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  [a, b] = await Promise.all(
    ['single-use-a', 'single-use-b'].map((identity) => startReplica(kc, { namespaces: [ns.name], identity, key: env.secretKey })),
  );
  for (const r of [a, b]) {
    await eventually(
      () =>
        r.ctx.catalog.listEnvironments(ns.name).length > 0 &&
        r.ctx.catalog.getIntegration(ns.name, 'keyed-too') &&
        r.ctx.catalog.getProvider(OAUTH_PROVIDER) &&
        r.ctx.catalog.getIntegration(ns.name, 'machine') &&
        r.ctx.catalog.readSecretValue(ns.name, 'acme-client', 'clientSecret'),
    );
  }
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await Promise.all([KEY_PROVIDER, OAUTH_PROVIDER, CC_PROVIDER].map((p) => deleteProvider(kc, p)));
  await provider?.close();
  await ns?.delete();
});

async function connectSession(allowed: string[], endUser = 'end-user-1'): Promise<string> {
  const res = await a.call('POST', '/connect/sessions', { body: { end_user: { id: endUser }, allowed_integrations: allowed } });
  expect(res.status).toBe(201);
  return res.body.data.token as string;
}

async function reconnectSession(integration: string, connectionId: string): Promise<string> {
  const res = await a.call('POST', '/connect/sessions/reconnect', { body: { connection_id: connectionId, integration_id: integration } });
  expect(res.status).toBe(201);
  return res.body.data.token as string;
}

async function submitForm(replica: Replica, token: string, integration: string, apiKey: string | Record<string, string>) {
  const res = await fetch(`${replica.url}/connect/api/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration, values: typeof apiKey === 'string' ? { apiKey } : apiKey }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Starts an OAuth flow as the Connect page does: the provider URL's `state` and the browser's binding cookie. */
async function startOAuth(replica: Replica, token: string, integration = 'acme') {
  const res = await fetch(`${replica.url}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration }),
  });
  const body = (await res.json()) as any;
  if (res.status !== 200) return { status: res.status, body };
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');
  return { status: res.status, body, state: new URL(body.data.url as string).searchParams.get('state')!, cookie };
}

/** The provider's redirect back (what the end user's browser brings to the callback) on `replica`. */
async function callback(replica: Replica, flow: { state: string; cookie: string }, code: string) {
  const res = await fetch(`${replica.url}/oauth/callback?code=${code}&state=${encodeURIComponent(flow.state)}`, {
    headers: { cookie: flow.cookie },
  });
  return { status: res.status, page: await res.text() };
}

/** The credentials as the API server holds them (not a cache). */
async function storedCredentials(integration: string, connectionId: string): Promise<unknown> {
  const secret = await core.readNamespacedSecret({ namespace: ns.name, name: connectionObjectName(integration, connectionId) });
  return JSON.parse(Buffer.from(secret.data!['credentials.json']!, 'base64').toString('utf8'));
}

async function importKeyed(connectionId: string, apiKey: string): Promise<void> {
  const res = await a.call('POST', '/connections', {
    body: { provider_config_key: 'keyed', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey } },
  });
  expect(res.status).toBe(201);
  await eventually(() => a.ctx.connections.getConnection(ns.name, 'keyed', connectionId));
}

describe('reconnect tokens', () => {
  it('re-authorize once: the same token again answers 409 session_already_used and leaves the new credentials and the errors as they were', async () => {
    await importKeyed('re-1', 'original-key-0001');
    const token = await reconnectSession('keyed', 're-1');
    const first = await submitForm(a, token, 'keyed', 'victim-new-key-0002');
    expect(first.status).toBe(201);
    expect(await storedCredentials('keyed', 're-1')).toMatchObject({ type: 'API_KEY', apiKey: 'victim-new-key-0002' });
    const before = await eventually(() => {
      const c = a.ctx.connections.getConnection(ns.name, 'keyed', 're-1');
      return c && (c.resource.status?.errors ?? []).length === 0 ? c : undefined;
    });

    const again = await submitForm(a, token, 'keyed', 'attacker-key-0003');
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'session_already_used', message: expect.stringContaining('new link') });
    expect(JSON.stringify(again.body)).not.toContain('attacker-key-0003');
    expect(await storedCredentials('keyed', 're-1')).toEqual({ type: 'API_KEY', apiKey: 'victim-new-key-0002' });
    expect(a.ctx.connections.getConnection(ns.name, 'keyed', 're-1')?.resource.status?.errors ?? []).toEqual(
      before.resource.status?.errors ?? [],
    );
  });

  it('is refused on another replica once used on one', async () => {
    await importKeyed('re-2', 'original-key-0101');
    const token = await reconnectSession('keyed', 're-2');
    expect((await submitForm(a, token, 'keyed', 'victim-new-key-0102')).status).toBe(201);
    const onB = await submitForm(b, token, 'keyed', 'attacker-key-0103');
    expect([onB.status, onB.body.error?.code]).toEqual([409, 'session_already_used']);
    expect(await storedCredentials('keyed', 're-2')).toEqual({ type: 'API_KEY', apiKey: 'victim-new-key-0102' });
  });

  it('stays usable after a completion that saved nothing (the provider refused the code)', async () => {
    const created = await startOAuth(a, await connectSession(['acme'], 'end-user-oauth-re'));
    const made = await callback(a, created as { state: string; cookie: string }, 'code-re-0');
    expect(made.status).toBe(200);
    const connectionId = /"connectionId":"([^"]+)"/.exec(made.page)?.[1];
    expect(connectionId).toBeDefined();
    const token = await reconnectSession('acme', connectionId!);

    // A second popup opened before the end user finished: its callback comes after the reconnect.
    const late = (await startOAuth(a, token)) as { state: string; cookie: string };
    tokenAnswers.push(400);
    const refused = await callback(a, (await startOAuth(a, token)) as { state: string; cookie: string }, 'code-re-1');
    expect(refused.status).toBe(502);
    const saved = await callback(b, (await startOAuth(b, token)) as { state: string; cookie: string }, 'code-re-2');
    expect(saved.status).toBe(200);
    const credentials = await storedCredentials('acme', connectionId!);
    expect(credentials).toMatchObject({ type: 'OAUTH2', access_token: expect.stringMatching(/^at-\d+$/) });
    // The reconnect cleared the refused attempt's error.
    await eventually(
      () => (a.ctx.connections.getConnection(ns.name, 'acme', connectionId!)?.resource.status?.errors ?? ['x']).length === 0,
    );

    const replay = await startOAuth(a, token);
    expect([replay.status, replay.body.error?.code]).toEqual([409, 'session_already_used']);
    const lateCallback = await callback(a, late, 'code-re-3');
    expect(lateCallback.status).toBe(409);
    expect(lateCallback.page).toContain('session_already_used');
    expect(await storedCredentials('acme', connectionId!)).toEqual(credentials);
    // Not a failed re-authorization: the connection shows no error for it (replica a's own writes are in its cache at once).
    expect(a.ctx.connections.getConnection(ns.name, 'acme', connectionId!)?.resource.status?.errors ?? []).toEqual([]);
  });
});

describe('connect session tokens', () => {
  it('connect an integration once: a second submit answers 409 and creates nothing; another offered integration still connects', async () => {
    const token = await connectSession(['keyed', 'keyed-too'], 'end-user-forms');
    const first = await submitForm(a, token, 'keyed', 'first-key-0201');
    expect(first.status).toBe(201);
    const connectionId = first.body.data.connectionId as string;
    const again = await submitForm(b, token, 'keyed', 'second-key-0202');
    expect([again.status, again.body.error?.code]).toEqual([409, 'session_already_used']);
    const other = await submitForm(b, token, 'keyed-too', 'other-key-0203');
    expect(other.status).toBe(201);
    const mine = () => a.ctx.connectionScans.listConnections(ns.name).filter((c) => c.spec.endUser?.id === 'end-user-forms');
    await eventually(() => mine().length === 2);
    expect(
      mine()
        .map((c) => c.spec.integration)
        .sort(),
    ).toEqual(['keyed', 'keyed-too']);
    expect(await storedCredentials('keyed', connectionId)).toEqual({ type: 'API_KEY', apiKey: 'first-key-0201' });
  });

  it('two OAuth flows of one session (starts are idempotent): the first callback connects, the second is refused on the other replica without a token call', async () => {
    const token = await connectSession(['acme'], 'end-user-two-flows');
    const flow1 = await startOAuth(a, token);
    const flow2 = await startOAuth(b, token);
    expect([flow1.status, flow2.status]).toEqual([200, 200]);
    const tokenCalls = () => provider.requests.filter((r) => r.url.startsWith('/token')).length;
    const callsBefore = tokenCalls();

    const done = await callback(a, flow1 as { state: string; cookie: string }, 'code-two-1');
    expect(done.status).toBe(200);
    const connectionId = /"connectionId":"([^"]+)"/.exec(done.page)?.[1];
    const credentials = await storedCredentials('acme', connectionId!);

    const second = await callback(b, flow2 as { state: string; cookie: string }, 'code-two-2');
    expect(second.status).toBe(409);
    expect(second.page).toContain('session_already_used');
    expect(tokenCalls()).toBe(callsBefore + 1);
    expect(await storedCredentials('acme', connectionId!)).toEqual(credentials);
    await eventually(() => a.ctx.connectionScans.listConnections(ns.name).some((c) => c.spec.endUser?.id === 'end-user-two-flows'));
    expect(a.ctx.connectionScans.listConnections(ns.name).filter((c) => c.spec.endUser?.id === 'end-user-two-flows')).toHaveLength(1);
  });

  it('stays usable after a form the provider refused (client credentials), then connects once', async () => {
    const token = await connectSession(['machine'], 'end-user-cc');
    const values = { clientId: 'machine-client', clientSecret: 'machine-secret-0301' };
    tokenAnswers.push(400);
    const refused = await submitForm(a, token, 'machine', values);
    expect([refused.status, refused.body.error?.code]).toEqual([400, 'invalid_credentials']);
    const saved = await submitForm(b, token, 'machine', values);
    expect(saved.status).toBe(201);
    const again = await submitForm(a, token, 'machine', values);
    expect([again.status, again.body.error?.code]).toEqual([409, 'session_already_used']);
    const mine = () => a.ctx.connectionScans.listConnections(ns.name).filter((c) => c.spec.endUser?.id === 'end-user-cc');
    await eventually(() => mine().length === 1);
    expect(mine()).toHaveLength(1);
  });
});
