/**
 * Two controller instances in one test, each with its own caches, metrics and elector on one Lease
 * (3-second duration): one leads (the singletons' reconcilers), and a connection is refreshed by its
 * shard owner alone; when the leader dies without releasing its Leases, the other takes over the
 * leadership and the dead one's connections within the lease duration, and the refreshes continue.
 */
import { Leases } from '../../src/k8s/leases.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';
import { importOAuth2 } from '../support/fixtures.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const client: TestClient = { clientId: 'latchkey-leader', clientSecret: 'leader-client-secret-0123456789' };
let ns: OAuthBed['ns'];
let oidc: OidcTestServer;
let bed: OAuthBed | undefined;
let a: Replica;
let b: Replica;
let providerName: string;
const LEASE_SECONDS = 3;

beforeAll(async () => {
  bed = await startOAuthBed(kc, { namespace: 'leader', client, integration: 'oidc', accessTokenTtl: 10 });
  ({ ns, oidc, providerName } = bed);
  a = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['controller'],
    identity: 'replica-a',
    config: { leaseDurationSeconds: LEASE_SECONDS },
  });
  b = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['controller'],
    identity: 'replica-b',
    config: { leaseDurationSeconds: LEASE_SECONDS },
  });
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await bed?.close();
});

async function attempts(r: Replica): Promise<number> {
  const m = await r.ctx.metrics.getSingleMetric('latchkey_refresh_attempts_total')!.get();
  return m.values.reduce((n, v) => n + v.value, 0);
}

async function leaderGauge(r: Replica): Promise<number> {
  const m = await r.ctx.metrics.getSingleMetric('latchkey_leader')!.get();
  return m.values[0]?.value ?? -1;
}

it('exactly one instance leads and refreshes; the other takes over when it dies', async () => {
  const leader = await eventually(
    () => (a.controller!.controller.isLeader ? a : b.controller!.controller.isLeader ? b : undefined),
    15_000,
    50,
  );
  const follower = leader === a ? b : a;
  expect(follower.controller!.controller.isLeader).toBe(false);
  expect(await leaderGauge(leader)).toBe(1);
  expect(await leaderGauge(follower)).toBe(0);
  const lease = await new Leases(kc).get(ns.name, 'latchkey-controller');
  expect(lease?.holder).toBe(leader.ctx.config.identity);

  // Two refreshes of a 10-second token: all made by the connection's shard owner.
  const { conn } = await importOAuth2(leader.ctx, oidc, client, ns.name, 'oidc', providerName, { expiresInMs: 3_000 });
  const name = conn.resource.metadata.name;
  const key = `${ns.name}/${name}`;
  const owner = await eventually(
    () => (a.controller!.controller.owns(key) ? a : b.controller!.controller.owns(key) ? b : undefined),
    30_000,
    50,
  );
  const other = owner === a ? b : a;
  const before = oidc.refreshCalls();
  await eventually(() => oidc.refreshCalls() - before >= 2, 30_000, 100);
  expect(await attempts(owner)).toBeGreaterThanOrEqual(2);
  expect(await attempts(other)).toBe(0);
  expect(other.controller!.controller.scheduler?.queue.scheduledAt(key)).toBeUndefined();

  // The leader dies (no release): the follower takes the Lease once it expires, and owns everything.
  // How soon is the Lease's business (and measured by the fault tests), not a wall-clock bound here.
  await leader.stop({ release: false });
  await eventually(() => follower.controller!.controller.isLeader, 120_000, 50);
  expect((await new Leases(kc).get(ns.name, 'latchkey-controller'))?.holder).toBe(follower.ctx.config.identity);

  // And the refreshes go on, now from the new leader.
  const handover = oidc.refreshCalls();
  await eventually(() => oidc.refreshCalls() > handover, 20_000, 100);
  await eventually(() => follower.controller!.controller.owns(key), 120_000, 50);
  await eventually(async () => (await attempts(follower)) >= 1, 20_000, 100);
  await eventually(() => follower.ctx.connections.getConnectionByName(ns.name, name)?.resource.status?.refreshAttempts === 0, 10_000, 100);
});
