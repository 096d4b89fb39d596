/**
 * Two spec rules a client relies on the moment it acts, checked against the real control plane, two
 * server replicas and two sharded controllers:
 * - `force_refresh=true` right after an import means a token call happened after the request arrived
 *   (the controller's label write onto the new Secret is not a refresh);
 * - a `log_id` in a connection's `errors[]` resolves with `GET /logs/{log_id}` as soon as it is shown.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { RefreshLock } from '../../src/auth/refresh/lock.js';
import { Leases } from '../../src/k8s/leases.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const PROVIDER = `spec-timing-oidc-${process.pid}`;
const INTEGRATION = 'oidc-app';
const client = { clientId: 'spec-timing-client', clientSecret: 'spec-timing-secret-0123456789abcdef' };
const ROUNDS = 50;

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let oidc: OidcTestServer;
let replicas: Replica[];
let controllers: Replica[];

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'spec-timing');
  oidc = await startOidcServer({ clients: [client], accessTokenTtl: 3600 });
  await applyProvider(kc, PROVIDER, {
    displayName: 'Spec timing OIDC',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    tokenRequestAuthMethod: 'body',
  });
  env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, INTEGRATION, { provider: PROVIDER }, client);
  // As the chart runs them: two servers, and two controllers in processes of their own, each active on
  // its shard (it labels a new connection and its Secret for its shard right after they are created).
  const opts = { namespaces: [ns.name], key: env.secretKey, selfBaseUrl: true };
  replicas = await Promise.all([startReplica(kc, { ...opts, identity: 'timing-a' }), startReplica(kc, { ...opts, identity: 'timing-b' })]);
  const controllerOpts = { namespaces: [ns.name], components: ['controller' as const], config: { leaderElection: true } };
  controllers = await Promise.all([
    startReplica(kc, { ...controllerOpts, identity: 'timing-controller-a' }),
    startReplica(kc, { ...controllerOpts, identity: 'timing-controller-b' }),
  ]);
  for (const r of [...replicas, ...controllers]) {
    await eventually(() => r.ctx.store.getIntegration(ns.name, INTEGRATION) && r.ctx.store.getProvider(PROVIDER));
  }
});

afterAll(async () => {
  await Promise.all([...(replicas ?? []), ...(controllers ?? [])].map((r) => r.stop()));
  await oidc?.close();
  await deleteProvider(kc, PROVIDER);
  await ns?.delete();
});

const connectionPath = (id: string, extra = '') => `/connections/${encodeURIComponent(id)}?provider_config_key=${INTEGRATION}${extra}`;

describe('force_refresh right after an import', () => {
  it(`makes a token call for each of ${ROUNDS} imports fetched at once with force_refresh=true (from either replica)`, async () => {
    const before = oidc.refreshCalls();
    let newTokens = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const id = `forced-${i}`;
      const tokens = await oidc.mintTokens({ clientId: client.clientId });
      const imported = await replicas[0]!.call('POST', '/connections', {
        body: {
          provider_config_key: INTEGRATION,
          connection_id: id,
          credentials: {
            type: 'OAUTH2',
            access_token: tokens.accessToken,
            refresh_token: tokens.refreshToken,
            expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          },
        },
      });
      expect(imported.status).toBe(201);
      // At once, or a few milliseconds later (as a client's own work takes), so that some fetches meet the
      // controller's label write on the new Secret mid-refresh. The replica that imported, then the other one.
      await new Promise((r) => setTimeout(r, (i % 10) * 4));
      const fetched = await replicas[i % 2]!.call('GET', connectionPath(id, '&force_refresh=true'));
      expect(fetched.status).toBe(200);
      if (fetched.body.credentials.access_token !== tokens.accessToken) newTokens++;
    }
    expect(newTokens).toBe(ROUNDS);
    expect(oidc.refreshCalls() - before).toBe(ROUNDS);
  });

  it('is not satisfied by a write that changed the Secret but not the credentials (the shard label)', async () => {
    // A refresh of the connection is under way elsewhere (its Lease held) when the forced fetch arrives;
    // meanwhile the Secret gets the controller's shard label, and the Lease is let go without a refresh.
    const tokens = await oidc.mintTokens({ clientId: client.clientId });
    const imported = await replicas[0]!.call('POST', '/connections', {
      body: {
        provider_config_key: INTEGRATION,
        connection_id: 'forced-after-label',
        credentials: {
          type: 'OAUTH2',
          access_token: tokens.accessToken,
          refresh_token: tokens.refreshToken,
          expires_at: '2099-01-01T00:00:00Z',
        },
      },
    });
    expect(imported.status).toBe(201);
    const conn = replicas[0]!.ctx.store.getConnection(ns.name, INTEGRATION, 'forced-after-label')!;
    const { name, uid } = conn.resource.metadata;
    const other = new RefreshLock(new Leases(kc), 'another-replica', 30);
    const held = (await other.acquire(ns.name, name!, uid)).held!;
    expect(held).toBeDefined();
    const before = oidc.refreshCalls();
    const fetching = replicas[0]!.call('GET', connectionPath('forced-after-label', '&force_refresh=true'));
    // The label write lands while the fetch waits for the Lease (its watch brings the new Secret version).
    await new Promise((r) => setTimeout(r, 300));
    await replicas[0]!.ctx.store.labelShard(ns.name, name!, 'some-controller');
    await eventually(
      () =>
        replicas[0]!.ctx.store.getConnection(ns.name, INTEGRATION, 'forced-after-label')!.credentialsVersion !== conn.credentialsVersion,
    );
    await new Promise((r) => setTimeout(r, 300));
    await other.release(held);
    const fetched = await fetching;
    expect(fetched.status).toBe(200);
    expect(fetched.body.credentials.access_token).not.toBe(tokens.accessToken);
    expect(oidc.refreshCalls() - before).toBe(1);
  });
});

describe('a log_id shown in errors[]', () => {
  it(`resolves at once for each of ${ROUNDS} failed re-authorizations (read from either replica)`, async () => {
    const imported = await replicas[0]!.call('POST', '/connections', {
      body: {
        provider_config_key: INTEGRATION,
        connection_id: 'reauth-fails',
        credentials: { type: 'OAUTH2', access_token: 'at-kept', refresh_token: 'rt-kept', expires_at: '2099-01-01T00:00:00Z' },
      },
    });
    expect(imported.status).toBe(201);
    const seen = new Set<string>();
    const statuses: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [here, other] = i % 2 ? [replicas[1]!, replicas[0]!] : [replicas[0]!, replicas[1]!];
      const session = await here.call('POST', '/connect/sessions/reconnect', {
        body: { connection_id: 'reauth-fails', integration_id: INTEGRATION },
      });
      expect(session.status).toBe(201);
      const token = session.body.data.token as string;
      const start = await fetch(`${here.url}/connect/api/oauth/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ integration: INTEGRATION }),
      });
      expect(start.status).toBe(200);
      const { url } = ((await start.json()) as { data: { url: string } }).data;
      const state = new URL(url).searchParams.get('state')!;
      const cookie = start.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      // The end user denies consent: the provider redirects back with error=access_denied.
      const callback = await fetch(`${here.url}/oauth/callback?error=access_denied&state=${encodeURIComponent(state)}`, {
        headers: { cookie },
      });
      expect(callback.status).toBeGreaterThanOrEqual(400);
      // The client reads the connection on the replica that ran the flow (its own write is visible there at once)…
      const got = await here.call('GET', connectionPath('reauth-fails'));
      expect(got.status).toBe(200);
      const fresh = (got.body.errors as Array<{ log_id: string }>).map((e) => e.log_id).filter((id) => !seen.has(id));
      expect(fresh).toHaveLength(1);
      seen.add(fresh[0]!);
      // …and follows the log_id at once, on the other replica.
      const log = await other.call('GET', `/logs/${encodeURIComponent(fresh[0]!)}`);
      statuses.push(log.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(ROUNDS);
    // The stored credentials were never touched by the denied re-authorizations.
    const after = await replicas[1]!.call('GET', connectionPath('reauth-fails'));
    expect(after.body.credentials.access_token).toBe('at-kept');
  });
});
