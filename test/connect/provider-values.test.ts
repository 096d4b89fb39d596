/**
 * Token answers as real providers send them, and connection configuration values the provider returns
 * (issue #43), through Latchkey's real OAuth start and callback routes over HTTP, against a
 * hand-written loopback provider (test/support/servers/scripted-provider.ts: oidc-provider cannot answer
 * `token_type: bot`, `ok: false` in a 200, `authed_user`, a string `expires_in` or a form-encoded body).
 * Each case checks what is stored (or that nothing is), what the callback page says, and the
 * operation log.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { sealSession } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { json, startScriptedProvider, type ScriptedAnswer, type ScriptedProvider } from '../support/servers/scripted-provider.js';

const kc = testKubeConfig();
const CLIENT = { clientId: 'values-client', clientSecret: 'values-client-secret-0123456789' };
const P = `values-${process.pid}`;
const PROVIDERS = {
  slackUser: `${P}-slack-user`,
  slackBot: `${P}-slack-bot`,
  answers: `${P}-answers`,
  steps: `${P}-steps`,
  first: `${P}-first`,
  regional: `${P}-regional`,
  never: `${P}-never`,
  graphql: `${P}-graphql`,
  picked: `${P}-picked`,
};

let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let latchkey: Replica;
let provider: ScriptedProvider;

const slackAnswer = {
  ok: true,
  access_token: 'xoxb-bot-token-value',
  token_type: 'bot',
  scope: 'commands,chat:write',
  bot_user_id: 'U0BOT',
  app_id: 'A0APP',
  team: { name: 'Acme', id: 'T9TEAM' },
  enterprise: null,
  authed_user: { id: 'U1USER', scope: 'search:read', access_token: 'xoxp-user-token-value', token_type: 'user' },
};

beforeAll(async () => {
  provider = await startScriptedProvider();
  ns = await createTestNamespace(kc, 'provider-values');
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  const oauth = { authMode: 'OAUTH2' as const, authorizationUrl: provider.authorizationUrl, tokenUrl: provider.tokenUrl };
  const slack = (tokenPath?: string): ProviderSpec => ({
    ...oauth,
    displayName: 'Slackish',
    tokenResponse: { errorWhen: { path: 'ok', equals: false }, errorCodePath: 'error', ...(tokenPath ? { tokenPath } : {}) },
    connectionConfiguration: [{ name: 'teamId', pattern: 'T[A-Z0-9]{1,20}', from: { tokenResponse: 'team.id' } }],
  });
  const steps = (several: 'first' | 'refuse'): ProviderSpec => ({
    ...oauth,
    displayName: 'Stepped',
    proxy: { baseUrl: `${provider.origin}/api` },
    connectionConfiguration: [
      { name: 'cloudId', pattern: '[a-z0-9-]{1,64}', from: { step: 'sites', path: 'id' } },
      { name: 'accountId', pattern: '[0-9]{1,20}', from: { step: 'me', path: 'account.id' } },
    ],
    postConnection: {
      name: 'stepped-sites',
      steps: [
        { name: 'sites', url: `${provider.origin}/sites`, items: 'resources', several },
        // Relative to proxy.baseUrl, with a value the first step set, and the provider's own scheme.
        { name: 'me', url: '/ex/${connectionConfig.cloudId}/me', headers: { Authorization: 'OAuth ${accessToken}' } },
      ],
    },
  });
  await applyProvider(kc, PROVIDERS.slackUser, slack('authed_user'));
  await applyProvider(kc, PROVIDERS.slackBot, slack());
  await applyProvider(kc, PROVIDERS.answers, {
    ...oauth,
    displayName: 'Answers',
    proxy: { baseUrl: 'https://${connectionConfig.instanceHost}/services' },
    connectionConfiguration: [
      { name: 'instanceHost', hostSuffixes: ['example.com'], from: { tokenResponse: 'instance_url', as: 'host' } },
      { name: 'realmId', pattern: '[0-9]{1,32}', from: { callback: 'realmId' } },
    ],
  });
  // Zoho-style: every account starts at one authorization URL; the callback names the region whose token URL to use.
  await applyProvider(kc, PROVIDERS.regional, {
    ...oauth,
    displayName: 'Regional',
    tokenUrl: `${provider.origin}/\${connectionConfig.region}/token`,
    connectionConfiguration: [
      { name: 'region', enum: ['us', 'eu'], from: { callback: 'accounts-server', as: 'host', match: '^accounts\\.example\\.(.+)$' } },
    ],
  });
  await applyProvider(kc, PROVIDERS.never, { ...oauth, displayName: 'Never', tokenResponse: { expiresInZeroMeansNever: true } });
  // Linear-style: the organization comes from a GraphQL POST.
  await applyProvider(kc, PROVIDERS.graphql, {
    ...oauth,
    displayName: 'GraphQL',
    connectionConfiguration: [{ name: 'organizationId', pattern: '[a-z0-9-]{1,64}', from: { step: 'org', path: 'data.organization.id' } }],
    postConnection: {
      name: 'graphql-organization',
      steps: [{ name: 'org', method: 'POST', url: `${provider.origin}/graphql`, body: '{"query":"{ organization { id name urlKey } }"}' }],
    },
  });
  // DocuSign-style: the account the docs name is the one with is_default true.
  await applyProvider(kc, PROVIDERS.picked, {
    ...oauth,
    displayName: 'Picked',
    connectionConfiguration: [
      { name: 'accountId', pattern: '[a-z0-9-]{1,64}', from: { step: 'userinfo', path: 'account_id' } },
      { name: 'baseUriHost', hostSuffixes: ['example.com'], from: { step: 'userinfo', path: 'base_uri', as: 'host' } },
    ],
    postConnection: {
      name: 'picked-userinfo',
      steps: [{ name: 'userinfo', url: `${provider.origin}/userinfo`, items: 'accounts', pick: { path: 'is_default', equals: true } }],
    },
  });
  await applyProvider(kc, PROVIDERS.steps, steps('refuse'));
  await applyProvider(kc, PROVIDERS.first, steps('first'));
  for (const [id, name] of Object.entries(PROVIDERS)) await createIntegration(kc, ns.name, id.toLowerCase(), { provider: name }, CLIENT);
  latchkey = await startReplica(kc, { namespaces: [ns.name], components: ['server'], selfBaseUrl: true });
  await eventually(
    () =>
      latchkey.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      Object.entries(PROVIDERS).every(
        ([id, name]) =>
          latchkey.ctx.catalog.getProvider(name) &&
          latchkey.ctx.catalog.getIntegration(ns.name, id.toLowerCase()) &&
          latchkey.ctx.catalog.readSecretValue(ns.name, `${id.toLowerCase()}-client`, 'clientId'),
      ),
  );
});

afterAll(async () => {
  await latchkey?.stop();
  for (const name of Object.values(PROVIDERS)) await deleteProvider(kc, name);
  await ns?.delete();
  await provider?.close();
});

let users = 0;

/**
 * One Connect flow over HTTP, as the browser would run it: oauth/start (with the binding cookie), then
 * the provider's redirect to the callback with a code, the state and `query`. The token endpoint
 * answers `token`.
 */
async function connect(
  integration: string,
  token: ScriptedAnswer,
  opts: { query?: Record<string, string>; config?: Record<string, string>; reconnect?: string; endUser?: string } = {},
) {
  const endUser = opts.endUser ?? `user-${++users}`;
  const session = sealSession(env.secretKey, {
    namespace: ns.name,
    endUser: { id: endUser },
    allowedIntegrations: [integration],
    ...(opts.reconnect ? { reconnect: { connectionId: opts.reconnect, integration } } : {}),
  });
  const start = await fetch(`${latchkey.url}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration, connectionConfig: opts.config ?? {} }),
  });
  if (start.status !== 200) return { endUser, status: start.status, page: await start.text(), connection: undefined };
  const { url } = ((await start.json()) as { data: { url: string } }).data;
  const cookie = start.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const callback = new URL(`${latchkey.url}/oauth/callback`);
  callback.searchParams.set('code', 'the-authorization-code');
  callback.searchParams.set('state', new URL(url).searchParams.get('state')!);
  for (const [k, v] of Object.entries(opts.query ?? {})) callback.searchParams.set(k, v);
  provider.tokenAnswers.splice(0, provider.tokenAnswers.length, token);
  const res = await fetch(callback, { headers: { cookie } });
  const page = await res.text();
  const connection = latchkey.ctx.connectionScans.listConnections(ns.name).find((c) => c.spec.endUser?.id === endUser);
  return { endUser, status: res.status, page, connection };
}

function stored(integration: string, connectionId: string) {
  return latchkey.ctx.connections.getConnection(ns.name, integration, connectionId);
}

async function failures(integration: string, endUser: string) {
  return eventually(async () => {
    const res = await latchkey.call('GET', `/logs?integration=${integration}&end_user_id=${endUser}&outcome=failure`, {
      key: env.secretKey,
    });
    return res.body.logs?.length ? (res.body.logs as Array<{ step: string; messages: string[] }>) : undefined;
  });
}

const countTokenCalls = () => provider.calls.filter((c) => c.path === '/token').length;

describe('token answers as providers send them', () => {
  it("stores Slack's bot token with token_type bot (kept in raw), and team.id as teamId", async () => {
    const r = await connect('slackbot', json(slackAnswer));
    expect(r.status).toBe(200);
    const conn = stored('slackbot', r.connection!.spec.connectionId)!;
    expect(conn.credentials).toMatchObject({ access_token: 'xoxb-bot-token-value', raw: { token_type: 'bot', team: { id: 'T9TEAM' } } });
    expect(conn.resource.spec.connectionConfig).toEqual({ teamId: 'T9TEAM' });
  });

  it("stores the user token under authed_user when the Provider's tokenPath says so", async () => {
    const r = await connect('slackuser', json(slackAnswer));
    expect(r.status).toBe(200);
    const conn = stored('slackuser', r.connection!.spec.connectionId)!;
    expect(conn.credentials.access_token).toBe('xoxp-user-token-value');
    expect(conn.credentials.raw).toEqual(slackAnswer);
    expect(conn.resource.spec.connectionConfig).toEqual({ teamId: 'T9TEAM' });
  });

  it('treats ok:false in a 200 as a refused code: a clear failed flow, nothing stored, the code in the log', async () => {
    const r = await connect('slackbot', json({ ok: false, error: 'invalid_code' }));
    expect(r.status).toBe(502);
    expect(r.page).toContain('did not complete the authorization');
    expect(r.connection).toBeUndefined();
    const [entry] = await failures('slackbot', r.endUser);
    expect(entry).toMatchObject({ step: 'token_exchange' });
    expect(entry!.messages.join(' ')).toContain('invalid_code');
  });

  it("reads a 2xx answer with a string error and no access_token as the provider's error (GitHub OAuth Apps), JSON or form", async () => {
    const github = { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
    const asJson = await connect('steps', json(github));
    const asForm = await connect('steps', {
      contentType: 'application/x-www-form-urlencoded',
      body: new URLSearchParams(github).toString(),
    });
    for (const r of [asJson, asForm]) {
      expect(r.status).toBe(502);
      expect(r.connection).toBeUndefined();
      const [entry] = await failures('steps', r.endUser);
      expect(entry).toMatchObject({ step: 'token_exchange' });
      expect(entry!.messages.join(' ')).toContain('bad_verification_code');
    }
  });

  it('starts a flow whose token URL needs a value the callback brings (matched out of a host), and sends the token request there', async () => {
    const calls = provider.calls.length;
    const token = json({ access_token: 'regional-token', token_type: 'bearer' });
    const r = await connect('regional', token, { query: { 'accounts-server': 'https://accounts.example.eu' } });
    expect(r.status).toBe(200);
    expect(provider.calls.slice(calls).map((c) => c.path)).toEqual(['/eu/token']);
    expect(stored('regional', r.connection!.spec.connectionId)!.resource.spec.connectionConfig).toEqual({ region: 'eu' });
    // Matched but outside the key's rule, or not matched: refused before the code goes anywhere.
    for (const server of ['https://accounts.example.evil', 'https://login.example.net']) {
      const refused = await connect('regional', token, { query: { 'accounts-server': server } });
      expect(refused.status).toBe(502);
      expect(refused.connection).toBeUndefined();
    }
    expect(provider.calls.length).toBe(calls + 1);
  });

  it('stores a scope sent as a JSON array (Linear) or null (Mailchimp), kept in raw; expires_in 0 is never when declared', async () => {
    const linear = { access_token: 'lin-token', token_type: 'Bearer', expires_in: 86399, scope: ['read', 'write'], refresh_token: 'lin-r' };
    const r = await connect('never', json(linear));
    expect(r.status).toBe(200);
    const conn = stored('never', r.connection!.spec.connectionId)!;
    expect(conn.credentials).toMatchObject({ access_token: 'lin-token', refresh_token: 'lin-r', raw: linear });
    expect(conn.credentials.expires_at).toBeDefined();
    const mailchimp = { access_token: 'mc-token', expires_in: 0, scope: null };
    const m = await connect('never', json(mailchimp));
    expect(m.status).toBe(200);
    const never = stored('never', m.connection!.spec.connectionId)!;
    expect(never.credentials).toMatchObject({ access_token: 'mc-token', raw: mailchimp });
    expect(never.credentials.expires_at).toBeUndefined();
  });

  it('reads expires_in given as a string, and no expires_in at all', async () => {
    const before = Date.now();
    const withString = await connect('slackbot', json({ ...slackAnswer, expires_in: '43200', refresh_token: 'xoxe-refresh' }));
    const expiresAt = Date.parse(String(stored('slackbot', withString.connection!.spec.connectionId)!.credentials.expires_at));
    expect(expiresAt).toBeGreaterThanOrEqual(before + 43_200_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 43_200_000 + 1000);
    const without = await connect('slackbot', json(slackAnswer));
    expect(stored('slackbot', without.connection!.spec.connectionId)!.credentials.expires_at).toBeUndefined();
  });

  it('reads a form-encoded answer, and takes instance_url (as a host) and the callback realmId into the configuration', async () => {
    const body = new URLSearchParams({
      access_token: 'form-access-token',
      token_type: 'Bearer',
      expires_in: '7200',
      instance_url: 'https://acme.my.example.com',
    }).toString();
    const r = await connect('answers', { contentType: 'application/x-www-form-urlencoded', body }, { query: { realmId: '4620816365' } });
    expect(r.status).toBe(200);
    const conn = stored('answers', r.connection!.spec.connectionId)!;
    expect(conn.credentials).toMatchObject({ access_token: 'form-access-token', raw: { instance_url: 'https://acme.my.example.com' } });
    expect(conn.credentials.expires_at).toBeDefined();
    expect(conn.resource.spec.connectionConfig).toEqual({ instanceHost: 'acme.my.example.com', realmId: '4620816365' });
  });

  it('refuses a returned value that breaks its rule (a host outside hostSuffixes, a realmId not matching): no connection', async () => {
    const evil = await connect(
      'answers',
      json({ access_token: 'a-token', token_type: 'bearer', instance_url: 'https://login.evil.example.net' }),
      { query: { realmId: '123' } },
    );
    expect(evil.status).toBe(502);
    expect(evil.page).toContain('instanceHost');
    expect(evil.page).not.toContain('evil.example.net');
    expect(evil.connection).toBeUndefined();
    const calls = countTokenCalls();
    const badRealm = await connect('answers', json({ access_token: 'a-token', instance_url: 'https://x.example.com' }), {
      query: { realmId: 'not-a-number' },
    });
    expect(badRealm.status).toBe(502);
    expect(badRealm.page).toContain('realmId');
    expect(badRealm.connection).toBeUndefined();
    // Refused before the code was exchanged: the callback's values come first.
    expect(countTokenCalls()).toBe(calls);
  });

  it('never takes from the end user a value the provider returns', async () => {
    const r = await connect('answers', json({ access_token: 'x' }), { config: { instanceHost: 'acme.my.example.com' } });
    expect(r.status).toBe(400);
    expect(r.page).toContain('given by the provider');
    const view = await fetch(`${latchkey.url}/connect/api/session`, {
      headers: {
        authorization: `Bearer ${sealSession(env.secretKey, { namespace: ns.name, endUser: { id: 'viewer' }, allowedIntegrations: ['answers', 'steps'] })}`,
      },
    });
    const { data } = (await view.json()) as { data: { integrations: Array<{ id: string; configFields: unknown[] }> } };
    expect(data.integrations.map((i) => [i.id, i.configFields])).toEqual([
      ['answers', []],
      ['steps', []],
    ]);
  });
});

describe('post-connection steps', () => {
  const sites = (...ids: string[]) => json({ resources: ids.map((id) => ({ id, name: `Site ${id}`, url: `https://${id}.example.com` })) });
  beforeEach(() => {
    provider.routes.set('/sites', sites('cloud-1'));
    provider.routes.set('/api/ex/cloud-1/me', json({ account: { id: 42 } }));
    provider.routes.set('/api/ex/cloud-2/me', json({ account: { id: 43 } }));
  });

  it('runs the steps with the new token, in order, and stores the values they pick; each step is in the log', async () => {
    const calls = provider.calls.length;
    const r = await connect('steps', json({ access_token: 'step-token', token_type: 'bearer', expires_in: 3600 }));
    expect(r.status).toBe(200);
    const conn = stored('steps', r.connection!.spec.connectionId)!;
    expect(conn.resource.spec.connectionConfig).toEqual({ cloudId: 'cloud-1', accountId: '42' });
    expect(provider.calls.slice(calls).map((c) => c.path)).toEqual(['/token', '/sites', '/api/ex/cloud-1/me']);
    expect(provider.calls.slice(calls + 1).map((c) => c.authorization)).toEqual(['Bearer step-token', 'OAuth step-token']);
    const logs = await eventually(async () => {
      const res = await latchkey.call('GET', `/logs?integration=steps&end_user_id=${r.endUser}`, { key: env.secretKey });
      const found = (res.body.logs as Array<{ step: string; messages: string[] }>).filter((l) => l.step.startsWith('post_connection '));
      return found.length === 2 ? found : undefined;
    });
    expect(logs.map((l) => l.step).sort()).toEqual(['post_connection me', 'post_connection sites']);
    expect(JSON.stringify(logs)).not.toContain('step-token');
  });

  it('several accounts: refuse fails the flow (nothing stored); first takes the first', async () => {
    provider.routes.set('/sites', sites('cloud-2', 'cloud-1'));
    const refused = await connect('steps', json({ access_token: 'step-token' }));
    expect(refused.status).toBe(502);
    expect(refused.page).toContain('2 accounts');
    expect(refused.connection).toBeUndefined();
    const [entry] = await failures('steps', refused.endUser);
    expect(entry!.step).toBe('post_connection');

    const first = await connect('first', json({ access_token: 'step-token' }));
    expect(first.status).toBe(200);
    expect(stored('first', first.connection!.spec.connectionId)!.resource.spec.connectionConfig).toEqual({
      cloudId: 'cloud-2',
      accountId: '43',
    });
  });

  it("sends a step's body as JSON (a GraphQL POST) and takes the value from its answer", async () => {
    provider.routes.set('/graphql', json({ data: { organization: { id: 'org-1', name: 'Acme', urlKey: 'acme' } } }));
    const calls = provider.calls.length;
    const r = await connect('graphql', json({ access_token: 'gql-token', token_type: 'Bearer' }));
    expect(r.status).toBe(200);
    expect(stored('graphql', r.connection!.spec.connectionId)!.resource.spec.connectionConfig).toEqual({ organizationId: 'org-1' });
    expect(provider.calls.slice(calls + 1)).toEqual([
      {
        method: 'POST',
        path: '/graphql',
        authorization: 'Bearer gql-token',
        contentType: 'application/json',
        body: '{"query":"{ organization { id name urlKey } }"}',
      },
    ]);
  });

  it('picks the account the docs name (is_default true) among several; none named fails the flow', async () => {
    const account = (id: string, isDefault: boolean) => ({ account_id: id, is_default: isDefault, base_uri: `https://${id}.example.com` });
    provider.routes.set('/userinfo', json({ sub: 'u1', accounts: [account('acct-1', false), account('acct-2', true)] }));
    const r = await connect('picked', json({ access_token: 'ds-token' }));
    expect(r.status).toBe(200);
    expect(stored('picked', r.connection!.spec.connectionId)!.resource.spec.connectionConfig).toEqual({
      accountId: 'acct-2',
      baseUriHost: 'acct-2.example.com',
    });
    provider.routes.set('/userinfo', json({ sub: 'u1', accounts: [account('acct-1', false), account('acct-3', false)] }));
    const none = await connect('picked', json({ access_token: 'ds-token' }));
    expect(none.status).toBe(502);
    expect(none.connection).toBeUndefined();
    const [entry] = await failures('picked', none.endUser);
    expect(entry!.messages.join(' ')).toContain('is_default');
  });

  it('a step answering 500, an oversized answer, or a value breaking its rule fails the flow and stores nothing', async () => {
    provider.routes.set('/sites', { status: 500, body: 'upstream exploded' });
    const failed = await connect('steps', json({ access_token: 'step-token' }));
    expect([failed.status, failed.connection]).toEqual([502, undefined]);
    // The end user reads what to do, never the step's name; the operation log has it, and the provider's answer.
    expect(failed.page).toContain('try again');
    expect(failed.page).not.toMatch(/\bsites\b/);
    expect((await failures('steps', failed.endUser)).map((l) => l.messages.join(' ')).join(' ')).toContain('answered 500');

    provider.routes.set('/sites', json({ resources: [{ id: 'x'.repeat(2 * 1024 * 1024) }] }));
    const huge = await connect('steps', json({ access_token: 'step-token' }));
    expect([huge.status, huge.connection]).toEqual([502, undefined]);
    expect(huge.page).toContain('larger than');

    provider.routes.set('/sites', sites('Not/A/Cloud'));
    const bad = await connect('steps', json({ access_token: 'step-token' }));
    expect([bad.status, bad.connection]).toEqual([502, undefined]);
    expect(bad.page).toContain('cloudId');
  });
});

describe('reconnect', () => {
  it('a failed step, a refused value or another account leaves the old credentials and configuration', async () => {
    provider.routes.set('/sites', json({ resources: [{ id: 'cloud-1' }] }));
    provider.routes.set('/api/ex/cloud-1/me', json({ account: { id: 42 } }));
    const first = await connect('steps', json({ access_token: 'old-token', refresh_token: 'old-refresh' }));
    const connectionId = first.connection!.spec.connectionId;
    const before = stored('steps', connectionId)!;

    provider.routes.set('/sites', { status: 500, body: 'down' });
    const failed = await connect('steps', json({ access_token: 'new-token' }), { reconnect: connectionId, endUser: first.endUser });
    expect(failed.status).toBe(502);
    provider.routes.set('/sites', json({ resources: [{ id: 'cloud-2' }] }));
    provider.routes.set('/api/ex/cloud-2/me', json({ account: { id: 43 } }));
    const other = await connect('steps', json({ access_token: 'new-token' }), { reconnect: connectionId, endUser: first.endUser });
    expect(other.status).toBe(400);
    expect(other.page).toContain('another');
    const after = stored('steps', connectionId)!;
    expect(after.credentials).toEqual(before.credentials);
    expect(after.resource.spec.connectionConfig).toEqual({ cloudId: 'cloud-1', accountId: '42' });

    // The same account again: new credentials, the configuration as it was.
    provider.routes.set('/sites', json({ resources: [{ id: 'cloud-1' }] }));
    const same = await connect('steps', json({ access_token: 'newer-token' }), { reconnect: connectionId, endUser: first.endUser });
    expect(same.status).toBe(200);
    const renewed = stored('steps', connectionId)!;
    expect(renewed.credentials.access_token).toBe('newer-token');
    expect(renewed.resource.spec.connectionConfig).toEqual({ cloudId: 'cloud-1', accountId: '42' });
  });

  it('a value outside hostSuffixes on reconnect leaves the old credentials', async () => {
    const first = await connect('answers', json({ access_token: 'old-a', instance_url: 'https://acme.my.example.com' }), {
      query: { realmId: '77' },
    });
    const connectionId = first.connection!.spec.connectionId;
    const before = stored('answers', connectionId)!;
    const evil = await connect('answers', json({ access_token: 'new-a', instance_url: 'https://evil.example.net' }), {
      query: { realmId: '77' },
      reconnect: connectionId,
      endUser: first.endUser,
    });
    expect(evil.status).toBe(502);
    expect(stored('answers', connectionId)!.credentials).toEqual(before.credentials);
    expect(stored('answers', connectionId)!.resource.spec.connectionConfig).toEqual(before.resource.spec.connectionConfig);
  });
});

describe('import', () => {
  beforeEach(() => {
    provider.routes.set('/sites', json({ resources: [{ id: 'cloud-1' }] }));
    provider.routes.set('/api/ex/cloud-1/me', json({ account: { id: 42 } }));
  });

  it('POST /connections without the step values runs the steps with the imported token', async () => {
    const calls = provider.calls.length;
    const res = await latchkey.call('POST', '/connections', {
      key: env.secretKey,
      body: { provider_config_key: 'steps', connection_id: 'imported-1', credentials: { type: 'OAUTH2', access_token: 'imported-token' } },
    });
    expect(res.status).toBe(201);
    expect(stored('steps', 'imported-1')!.resource.spec.connectionConfig).toEqual({ cloudId: 'cloud-1', accountId: '42' });
    expect(provider.calls.slice(calls).map((c) => c.authorization)).toEqual(['Bearer imported-token', 'OAuth imported-token']);
  });

  it('POST /connection (flat) with the values given runs no step, and checks them like typed ones', async () => {
    const calls = provider.calls.length;
    /** A flat import of a token that does not expire, with `connectionConfig`. */
    const importFlat = (connectionId: string, connectionConfig: Record<string, string>) =>
      latchkey.call('POST', '/connection', {
        key: env.secretKey,
        body: {
          provider_config_key: 'steps',
          connection_id: connectionId,
          access_token: 'imported-token',
          no_expiration: true,
          connection_config: connectionConfig,
        },
      });
    const ok = await importFlat('imported-2', { cloudId: 'given-cloud', accountId: '7' });
    expect(ok.status).toBe(201);
    expect(provider.calls.length).toBe(calls);
    expect(stored('steps', 'imported-2')!.resource.spec.connectionConfig).toEqual({ cloudId: 'given-cloud', accountId: '7' });
    const bad = await importFlat('imported-3', { cloudId: 'Bad/Cloud', accountId: '7' });
    expect(bad.status).toBe(400);
    expect(stored('steps', 'imported-3')).toBeUndefined();
  });

  it('a failing step on import stores nothing (502)', async () => {
    provider.routes.set('/sites', { status: 500, body: 'down' });
    const res = await latchkey.call('POST', '/connections', {
      key: env.secretKey,
      body: { provider_config_key: 'steps', connection_id: 'imported-4', credentials: { type: 'OAUTH2', access_token: 'imported-token' } },
    });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('post_connection_failed');
    expect(stored('steps', 'imported-4')).toBeUndefined();
  });
});

describe('refresh', () => {
  it('an ok:false refresh answer is a refresh failure: nothing stored, the old tokens kept', async () => {
    const r = await connect('slackbot', json({ ...slackAnswer, expires_in: 43200, refresh_token: 'xoxe-1-refresh' }));
    const connectionId = r.connection!.spec.connectionId;
    const before = stored('slackbot', connectionId)!.credentials;
    provider.tokenAnswers.splice(0, provider.tokenAnswers.length, json({ ok: false, error: 'invalid_refresh_token' }));
    const res = await latchkey.call('GET', `/connections/${connectionId}?provider_config_key=slackbot&force_refresh=true`, {
      key: env.secretKey,
    });
    expect(res.status).toBe(424);
    expect(JSON.stringify(res.body)).toContain('invalid_refresh_token');
    expect(stored('slackbot', connectionId)!.credentials).toEqual(before);
  });

  it('a refresh answer with token_type bot and a string expires_in is stored', async () => {
    const r = await connect('slackbot', json({ ...slackAnswer, expires_in: 43200, refresh_token: 'xoxe-1-refresh' }));
    const connectionId = r.connection!.spec.connectionId;
    provider.tokenAnswers.splice(
      0,
      provider.tokenAnswers.length,
      json({ ok: true, access_token: 'xoxb-rotated', token_type: 'bot', expires_in: '43200', refresh_token: 'xoxe-1-next' }),
    );
    const res = await latchkey.call('GET', `/connections/${connectionId}?provider_config_key=slackbot&force_refresh=true`, {
      key: env.secretKey,
    });
    expect(res.status).toBe(200);
    expect(res.body.credentials).toMatchObject({ access_token: 'xoxb-rotated', raw: { token_type: 'bot' } });
    expect(res.body.credentials.expires_at).toBeTruthy();
  });
});
