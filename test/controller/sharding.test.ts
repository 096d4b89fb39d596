/**
 * Sharded refresh against the real control plane: controller replicas (each alone in its "process",
 * as the chart runs them: its own store, caches and metrics) hold a shard Lease each; consistent
 * hashing gives every connection one owner, which labels it, caches it and its Secret whole (of the others
 * only their identity) and refreshes it. Token calls are counted at oidc-provider, which rotates refresh tokens and refuses a reused one.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Leases } from '../../src/k8s/leases.js';
import { CONNECTIONS, GROUP, LABELS, VERSION, type ConnectionIdentity, type ConnectionResource } from '../../src/k8s/resources.js';
import type { StoreParts } from '../../src/k8s/store.js';
import { shardLeaseName } from '../../src/controller/shard-membership.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';
import { importOAuth2 } from '../support/fixtures.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const client: TestClient = { clientId: 'latchkey-sharding', clientSecret: 'sharding-client-secret-0123456789' };
const LEASE_SECONDS = 3;
const CONNECTIONS_COUNT = 24;
let ns: OAuthBed['ns'];
let oidc: OidcTestServer;
let bed: OAuthBed | undefined;
let providerName: string;
const replicas = new Map<string, Replica>();
const keys: string[] = [];
/** Replicas whose reconcile queue emptied after a wave (start-up or rebalance), in order. */
const waves: string[] = [];

async function startController(identity: string): Promise<Replica> {
  const r = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['controller'],
    identity,
    config: { leaseDurationSeconds: LEASE_SECONDS },
    controller: { afterReconcileWave: () => waves.push(identity), reconcileWave: 2 },
  });
  replicas.set(identity, r);
  return r;
}

/** The shard label of every connection, as the API server has it. */
async function labels(): Promise<Map<string, string | undefined>> {
  const list = (await custom.listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: CONNECTIONS.plural,
  })) as {
    items: ConnectionResource[];
  };
  return new Map(list.items.map((c) => [`${ns.name}/${c.metadata.name}`, c.metadata.labels?.[LABELS.shard]]));
}

/** Every running replica is active, sees exactly `members`, and every connection carries its ring owner's label. */
async function settled(members: string[]): Promise<Map<string, string | undefined> | undefined> {
  const sorted = [...members].sort();
  for (const id of members) {
    const m = replicas.get(id)!.controller!.controller.membership!;
    if (!m.active || m.members.join() !== sorted.join()) return undefined;
  }
  const ring = replicas.get(members[0]!)!.controller!.controller.membership!;
  const current = await labels();
  for (const key of keys) if (current.get(key) !== ring.ownerOf(key)) return undefined;
  return current;
}

async function refreshAttempts(r: Replica): Promise<number> {
  const m = await r.ctx.metrics.getSingleMetric('latchkey_refresh_attempts_total')!.get();
  return m.values.reduce((n, v) => n + v.value, 0);
}

beforeAll(async () => {
  bed = await startOAuthBed(kc, { namespace: 'sharding', client, integration: 'oidc', accessTokenTtl: 10 });
  ({ ns, oidc, providerName } = bed);
  for (const id of ['shard-a', 'shard-b', 'shard-c']) await startController(id);
  const writer = replicas.get('shard-a')!;
  for (let i = 0; i < CONNECTIONS_COUNT; i++) {
    const { conn } = await importOAuth2(writer.ctx, oidc, client, ns.name, 'oidc', providerName, { expiresInMs: 6_000 + i * 100 });
    keys.push(`${ns.name}/${conn.resource.metadata.name}`);
  }
}, 120_000);

afterAll(async () => {
  for (const r of replicas.values()) await r.stop();
  await bed?.close();
});

it('with 3 replicas each owns a share, labels it, caches only its share whole, and no connection is refreshed twice', async () => {
  const ids = ['shard-a', 'shard-b', 'shard-c'];
  const assignment = await eventually(() => settled(ids), 60_000, 200);
  const shares = ids.map((id) => keys.filter((k) => assignment.get(k) === id).length);
  // Consistent hashing with virtual nodes: every replica gets a real share of 24 connections.
  for (const n of shares) expect(n).toBeGreaterThanOrEqual(2);
  expect(shares.reduce((a, b) => a + b, 0)).toBe(CONNECTIONS_COUNT);
  // Each replica's first wave (its share, labelled and reconciled) ended with its queue empty:
  // where a controller alone in its process compacts its heap (src/app/run.ts).
  await eventually(() => ids.every((id) => waves.includes(id)), 30_000, 200);

  // Each replica's label-selected informers hold exactly its own connections whole, and their Secrets;
  // of every other connection it keeps nothing (it reads their identities, as metadata, when it scans).
  const identities = async (store: Pick<StoreParts, 'connectionScans'>) => {
    const seen: ConnectionIdentity[] = [];
    await store.connectionScans.scanConnectionIdentities((c) => seen.push(c));
    return seen;
  };
  const exactly = (cached: Array<{ metadata?: { namespace?: string; name?: string } }>, owned: string[]) => {
    const names = new Set(cached.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`));
    return names.size === owned.length && owned.every((k) => names.has(k));
  };
  await eventually(
    () =>
      ids.every((id) => {
        const store = replicas.get(id)!.ctx;
        const owned = keys.filter((k) => assignment.get(k) === id);
        return (
          exactly(store.caches.watched.credentialSecrets.list(), owned) &&
          exactly(store.caches.watched.connections.list(), owned) &&
          store.caches.connectionIndex === undefined
        );
      }),
    30_000,
    200,
  );
  for (const id of ids) {
    const store = replicas.get(id)!.ctx;
    for (const c of store.caches.watched.connections.list()) expect(c.spec.provider).toBe(providerName);
    const scanned = await identities(store);
    expect(scanned.map((c) => `${ns.name}/${c.metadata.name}`).sort()).toEqual([...keys].sort());
    for (const identity of scanned) {
      expect(identity).not.toHaveProperty('spec');
      expect(identity).not.toHaveProperty('status');
      expect(identity.metadata.labels).toEqual({ [LABELS.shard]: assignment.get(`${ns.name}/${identity.metadata.name}`) });
      expect(identity.metadata.uid).toEqual(expect.any(String));
    }
  }

  // Tokens live 6-8 s: every connection is refreshed (at least twice) while all three run.
  await eventually(
    () => oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token' && c.status === 200).length >= CONNECTIONS_COUNT * 2,
    90_000,
    250,
  );
  const refreshes = oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token');
  // A refresh token sent twice (two replicas refreshing one connection) is refused with invalid_grant: none was.
  expect(refreshes.filter((c) => c.status !== 200)).toEqual([]);
  const perReplica = await Promise.all(ids.map((id) => refreshAttempts(replicas.get(id)!)));
  for (const n of perReplica) expect(n).toBeGreaterThan(0);
  // Every token call came from exactly one replica's scheduler (no server replica runs here).
  await eventually(
    async () => {
      const attempts = (await Promise.all(ids.map((id) => refreshAttempts(replicas.get(id)!)))).reduce((a, b) => a + b, 0);
      return attempts === oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token').length;
    },
    20_000,
    100,
  );
}, 240_000);

it('a fourth replica takes only its own share; removing it moves back only that share', async () => {
  const before = await eventually(() => settled(['shard-a', 'shard-b', 'shard-c']), 60_000, 200);
  await startController('shard-d');
  const withD = await eventually(() => settled(['shard-a', 'shard-b', 'shard-c', 'shard-d']), 60_000, 200);
  const moved = keys.filter((k) => withD.get(k) !== before.get(k));
  expect(moved.length).toBeGreaterThan(0);
  // Only the newcomer's share moved; everything else kept its owner.
  for (const k of moved) expect(withD.get(k)).toBe('shard-d');

  await replicas.get('shard-d')!.stop();
  replicas.delete('shard-d');
  const after = await eventually(() => settled(['shard-a', 'shard-b', 'shard-c']), 60_000, 200);
  for (const k of keys) if (withD.get(k) !== 'shard-d') expect(after.get(k)).toBe(withD.get(k));
  expect(after).toEqual(before);
  const refused = oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token' && c.status !== 200);
  expect(refused).toEqual([]);
}, 240_000);

it('a replica stopped without releasing its Lease is replaced within the Lease duration', async () => {
  await eventually(() => settled(['shard-a', 'shard-b', 'shard-c']), 60_000, 200);
  const victim = replicas.get('shard-c')!;
  await victim.stop({ release: false });
  replicas.delete('shard-c');
  // Its Lease is still there, held by it, until it expires.
  expect((await new Leases(kc).get(ns.name, shardLeaseName('shard-c')))?.holder).toBe('shard-c');
  await eventually(
    () => ['shard-a', 'shard-b'].every((id) => !replicas.get(id)!.controller!.controller.membership!.members.includes('shard-c')),
    // A bound against a hang, not a speed check (take-over times are measured in docs/reliability.md).
    120_000,
    50,
  );
  await eventually(() => settled(['shard-a', 'shard-b']), 60_000, 200);
  // Its former connections keep being refreshed by the survivors, and none is refreshed twice.
  const base = oidc.tokenCalls.length;
  await eventually(
    () => oidc.tokenCalls.slice(base).filter((c) => c.grantType === 'refresh_token' && c.status === 200).length >= CONNECTIONS_COUNT,
    90_000,
    250,
  );
  expect(oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token' && c.status !== 200)).toEqual([]);
}, 240_000);
