/**
 * The refresh floor against a real control plane: a token endpoint on loopback that answers
 * `expires_in: 0` (and 1) gets at most one token call per floor per connection (3 s in the test
 * configuration), from the scheduler and from fetches alike; the provider is flagged on the
 * Integration (ProviderTokensShortLived and a Warning Event), never on the end users' connections,
 * and the flag is lifted once it answers normal lifetimes again. The condition's type and reasons are
 * spelled out: they are what operators and their alerts read.
 */
import { ConnectionCondition } from '../../src/domain/conditions.js';
import type { ConnectionResource, IntegrationResource } from '../../src/k8s/resources.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { condition, eventsOf, readCustom } from '../support/kube.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kc = testKubeConfig();
const INTEGRATION = 'short-lived';
const FLOOR_S = 3;
const RUN_MS = 10_000;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let providerName: string;
let tokenEndpoint: Upstream;
let env: TestEnvironment;
let replica: Replica;
/** expires_in the token endpoint answers, by connection ID (an ID not listed: 3600). */
const lifetimes = new Map<string, number>();
/** Token calls by connection ID. */
const calls = new Map<string, number>();

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'refresh-floor');
  tokenEndpoint = await startUpstream();
  // The refresh token names its connection: `rt.<connection id>.<n>`.
  tokenEndpoint.on('/token', (_req, res, body) => {
    const refreshToken = new URLSearchParams(body.toString('utf8')).get('refresh_token') ?? '';
    const [, id = '', n = '0'] = refreshToken.split('.');
    calls.set(id, (calls.get(id) ?? 0) + 1);
    const next = Number(n) + 1;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(
      JSON.stringify({
        access_token: `at.${id}.${next}`,
        refresh_token: `rt.${id}.${next}`,
        token_type: 'Bearer',
        expires_in: lifetimes.get(id) ?? 3600,
      }),
    );
  });
  providerName = `short-lived-${ns.name}`;
  await applyProvider(kc, providerName, {
    displayName: 'Short-lived tokens',
    authMode: 'OAUTH2',
    authorizationUrl: `${tokenEndpoint.origin}/authorize`,
    tokenUrl: `${tokenEndpoint.origin}/token`,
  });
  await createIntegration(
    kc,
    ns.name,
    INTEGRATION,
    { provider: providerName },
    { clientId: 'floor-client', clientSecret: 'floor-secret-0123456789' },
  );
  env = await createEnvironment(kc, ns.name);
  replica = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['controller', 'server'],
    identity: 'solo',
    config: { leaderElection: false, refreshFloorSeconds: FLOOR_S },
    key: env.secretKey,
  });
  await eventually(
    () => replica.ctx.catalog.getIntegration(ns.name, INTEGRATION) && replica.ctx.catalog.listEnvironments(ns.name).length > 0,
  );
});

afterAll(async () => {
  await replica?.stop();
  await tokenEndpoint?.close();
  if (providerName) await deleteProvider(kc, providerName);
  await ns?.delete();
});

/** A connection whose token has just expired (the provider gave it `expiresIn` seconds). */
async function connectionWithLifetime(connectionId: string, expiresIn: number): Promise<string> {
  lifetimes.set(connectionId, expiresIn);
  const conn = await replica.ctx.connections.createConnection({
    namespace: ns.name,
    spec: { integration: INTEGRATION, provider: providerName, connectionId, authMode: 'OAUTH2', endUser: { id: `user-${connectionId}` } },
    credentials: {
      type: 'OAUTH2',
      access_token: `at.${connectionId}.0`,
      refresh_token: `rt.${connectionId}.0`,
      expires_at: new Date(Date.now() + expiresIn * 1000).toISOString(),
      raw: { expires_in: expiresIn, token_type: 'Bearer' },
    },
  });
  return conn.resource.metadata.name;
}

const integrationCondition = async () =>
  condition(await readCustom<IntegrationResource>(kc, 'integrations', ns.name, INTEGRATION), 'ProviderTokensShortLived');
/** The Integration's ProviderTokensShortLived condition, once its status is `status`. */
const integrationConditionOnceIs = (status: 'True' | 'False') =>
  eventually(
    async () => {
      const c = await integrationCondition();
      return c?.status === status ? c : undefined;
    },
    20_000,
    200,
  );

it('refreshes tokens shorter than the floor at most once per floor, fetched or not, and flags the provider on the Integration', async () => {
  const ids = ['zero', 'one'];
  const names = await Promise.all([connectionWithLifetime('zero', 0), connectionWithLifetime('one', 1)]);
  const started = Date.now();
  // Fetches all along the run (each finds its token expired): they answer with the current token.
  const answered = new Map<string, Set<string>>(ids.map((id) => [id, new Set()]));
  let fetches = 0;
  while (Date.now() - started < RUN_MS) {
    for (const id of ids) {
      const res = await replica.call('GET', `/connections/${id}?provider_config_key=${INTEGRATION}`);
      expect(res.status).toBe(200);
      answered.get(id)!.add(res.body.credentials.access_token as string);
      fetches += 1;
    }
    await sleep(100);
  }
  const elapsed = Date.now() - started;
  const bound = Math.ceil(elapsed / (FLOOR_S * 1000)) + 1;
  expect(fetches).toBeGreaterThan(40);
  for (const id of ids) {
    // Today's code made about one per second from the scheduler, and one per fetch besides.
    expect(calls.get(id) ?? 0).toBeGreaterThanOrEqual(2);
    expect(calls.get(id)).toBeLessThanOrEqual(bound);
    // The fetches were answered with the tokens the refreshes stored: no token of their own.
    expect(answered.get(id)!.size).toBeLessThanOrEqual(calls.get(id)! + 1);
  }

  // Three refreshes in a row answered short-lived tokens: the Integration says so, and an Event.
  const flagged = await integrationConditionOnceIs('True');
  expect(flagged.reason).toBe('ShortLivedTokens');
  expect(flagged.message).toMatch(/refresh floor of 3 s/);
  const events = await eventsOf(kc, ns.name, INTEGRATION);
  const warning = events.find((e) => e.reason === 'ProviderTokensShortLived');
  expect(warning).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Integration', name: INTEGRATION } });
  // Ready is untouched: the integration works, and its connections keep being refreshed.
  expect(condition(await readCustom<IntegrationResource>(kc, 'integrations', ns.name, INTEGRATION), 'Ready')?.status).toBe('True');

  // Not the end users' fault: no error, no re-authorization, no Event on their connections.
  for (const name of names) {
    const c = await readCustom<ConnectionResource>(kc, 'connections', ns.name, name);
    expect(c.status?.errors ?? []).toEqual([]);
    expect(condition(c, ConnectionCondition.NeedsReauthorization)?.status).not.toBe('True');
    expect(c.metadata.annotations?.['latchkey.dev/reauthorization-credentials-version']).toBeUndefined();
    expect((await eventsOf(kc, ns.name, name)).filter((e) => e.type === 'Warning')).toEqual([]);
  }

  // The provider answers normal lifetimes again: the flag is lifted at the next refresh.
  for (const id of ids) lifetimes.set(id, 3600);
  const lifted = await integrationConditionOnceIs('False');
  expect(lifted.reason).toBe('NormalLifetimes');
  const integration = await readCustom<IntegrationResource>(kc, 'integrations', ns.name, INTEGRATION);
  expect(integration.metadata.annotations?.['latchkey.dev/short-lived-tokens']).toBeUndefined();
  for (const name of names) await replica.ctx.connections.deleteConnection(ns.name, name);
});

it('still honours force_refresh under the floor: the caller pays one token call per forced fetch', async () => {
  const name = await connectionWithLifetime('forced', 0);
  // The scheduler's first refresh of the expired token.
  await eventually(() => (calls.get('forced') ?? 0) >= 1, 10_000, 50);
  await sleep(200);
  const before = calls.get('forced')!;
  const plain = await replica.call('GET', `/connections/forced?provider_config_key=${INTEGRATION}`);
  expect(plain.status).toBe(200);
  expect(calls.get('forced')).toBe(before);
  const forced = await replica.call('GET', `/connections/forced?provider_config_key=${INTEGRATION}&force_refresh=true`);
  expect(forced.status).toBe(200);
  expect(calls.get('forced')).toBe(before + 1);
  expect(forced.body.credentials.access_token).toBe(`at.forced.${before + 1}`);
  // The forced refresh counts for the floor: a plain fetch right after makes no call either.
  const after = await replica.call('GET', `/connections/forced?provider_config_key=${INTEGRATION}`);
  expect(after.body.credentials.access_token).toBe(`at.forced.${before + 1}`);
  expect(calls.get('forced')).toBe(before + 1);
  await replica.ctx.connections.deleteConnection(ns.name, name);
});
