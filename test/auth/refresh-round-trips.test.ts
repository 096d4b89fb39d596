/**
 * The Kubernetes API requests of a refresh on fetch, counted at a peer: each replica reaches the API
 * server through its own HTTP proxy (plain HTTP in front, HTTPS behind) that records every request
 * with when it started and when its answer ended. A real control plane and a real oidc-provider
 * (refresh-token rotation with reuse detection: a spent refresh token used again revokes the grant,
 * so a stale read that spends one shows up as a 424).
 *
 * The last test counts a scheduled refresh's requests at its controller the same way.
 *
 * Watches (`watch=true`) are the informers' long-lived streams, not round trips, and are left out;
 * so are the operation log's ConfigMap and the Events (batched, written off the path): the
 * requests looked at are those on the connection's own objects (its Lease, Secret and Connection).
 */
import { CoordinationV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { RefreshLock } from '../../src/auth/refresh/lock.js';
import { loadKubeConfig } from '../../src/k8s/client.js';
import { CONNECTIONS, GROUP, VERSION, type ConnectionResource } from '../../src/k8s/resources.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { startHttpFaultProxy, type HttpFaultProxy, type ProxiedRequest } from '../support/faults/http-fault-proxy.js';
import { kubeconfigFile } from '../support/faults/latchkey-process.js';
import { importOAuth2 } from '../support/fixtures.js';
import { bedForFile } from '../support/file-bed.js';
import { startOAuthServersBed } from '../support/oauth-bed.js';
import { startReplica } from '../support/replica.js';

const kc = testKubeConfig();
const client: TestClient = { clientId: 'latchkey-round-trips', clientSecret: 'round-trips-client-secret-0123456789' };
const INTEGRATION = 'counted';
const bed = bedForFile(async () => {
  const proxies = await Promise.all([
    startHttpFaultProxy(kc.getCurrentCluster()!.server),
    startHttpFaultProxy(kc.getCurrentCluster()!.server),
  ]);
  try {
    const started = await startOAuthServersBed(kc, {
      namespace: 'round-trips',
      client,
      integration: INTEGRATION,
      accessTokenTtl: 120,
      kubeconfigs: proxies.map((p) => loadKubeConfig(kubeconfigFile(kc, p.url))),
      // last_fetched_at is written in a batch far away from the requests counted here.
      replica: { config: { lastFetchedIntervalSeconds: 3600 } },
    });
    const close = async () => {
      started.oidc.setTokenDelay(0);
      await started.close();
      await Promise.all(proxies.map((p) => p.close()));
    };
    return { ...started, proxyA: proxies[0]!, proxyB: proxies[1]!, close };
  } catch (err) {
    await Promise.all(proxies.map((p) => p.close()));
    throw err;
  }
});
const a = () => bed.servers[0]!;
const b = () => bed.servers[1]!;

/** An expired OAUTH2 connection both replicas have in their caches. */
async function expiredConnection() {
  const imported = await importOAuth2(a().ctx, bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName, {
    expiresInMs: -60_000,
  });
  const { connectionId } = imported.conn.resource.spec;
  const name = imported.conn.resource.metadata.name;
  await eventually(() => b().ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId));
  return { ...imported, connectionId, name };
}

/** Requests on the connection's own objects (not watches), from index `from` of what the proxy saw. */
function requestsOn(proxy: HttpFaultProxy, name: string, from: number): ProxiedRequest[] {
  return (
    proxy.seen
      .slice(from)
      .filter((r) => !r.path.includes('watch=') && /\/(leases|secrets|connections)\b/.test(r.path))
      // A create names its object in the body: the Lease creates here are this connection's (one refresh at a time).
      .filter((r) => r.path.includes(name) || (r.method === 'POST' && /\/leases(\?|$)/.test(r.path)))
  );
}

/** What a request did, e.g. `POST leases`, `PUT secrets`, `PUT connections/status`. */
function kind(r: ProxiedRequest): string {
  const [, resource] = /\/(leases|secrets|connections)\b/.exec(r.path) ?? [];
  return `${r.method} ${resource}${/\/status(\?|$)/.test(r.path) ? '/status' : ''}`;
}

/** The longest chain of requests each started after the previous one's answer ended: sequential round trips. */
function sequentialDepth(requests: ProxiedRequest[]): number {
  const sorted = [...requests].sort((x, y) => x.at - y.at);
  const depth = new Map<ProxiedRequest, number>();
  for (const r of sorted) {
    const before = sorted.filter((p) => p.doneAt !== undefined && p.doneAt <= r.at).map((p) => depth.get(p) ?? 1);
    depth.set(r, 1 + Math.max(0, ...before));
  }
  return Math.max(0, ...depth.values());
}

const getPath = (id: string, extra = '') => `/connections/${encodeURIComponent(id)}?provider_config_key=${INTEGRATION}${extra}`;

it('refreshes on fetch with 3 sequential API round trips: Lease create, Secret read, Secret write, then status and release off the path', async () => {
  const { connectionId, name, accessToken } = await expiredConnection();
  const from = bed.proxyA.seen.length;
  const calls = bed.oidc.refreshCalls();
  const res = await a().call('GET', getPath(connectionId));
  expect(res.status).toBe(200);
  expect(res.body.credentials.access_token).not.toBe(accessToken);
  expect(bed.oidc.refreshCalls() - calls).toBe(1);
  // The answer already carries the status that follows from the new credentials.
  expect(Date.parse(res.body.credentials.expires_at)).toBeGreaterThan(Date.now() + 60_000);

  // The status write and the Lease's release follow the answer; wait for both to be answered.
  const all = await eventually(() => {
    const seen = requestsOn(bed.proxyA, name, from);
    const done = seen.filter((r) => r.doneAt !== undefined).map(kind);
    return done.includes('PUT connections/status') && done.includes('DELETE leases') ? seen : undefined;
  });
  // The Connection comes from the cache, the Lease is taken by creating it; the Secret is read once under
  // the lock (the cache may trail another replica's last refresh), then written; the Lease is deleted.
  expect(all.map(kind)).toEqual([
    'POST leases',
    'GET secrets',
    'PUT secrets',
    ...(kind(all[3]!) === 'DELETE leases' ? ['DELETE leases', 'PUT connections/status'] : ['PUT connections/status', 'DELETE leases']),
  ]);
  expect(all.map((r) => r.status)).toEqual([201, 200, 200, 200, 200]);
  expect(sequentialDepth(all)).toBeLessThanOrEqual(4);
  // The three the answer waited for, in order: Lease created, then the Secret read, then written.
  expect(all[1]!.at).toBeGreaterThanOrEqual(all[0]!.doneAt!);
  expect(all[2]!.at).toBeGreaterThanOrEqual(all[1]!.doneAt!);
  // Released by deleting it: the next refresh creates it again.
  await expect(
    kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: bed.ns.name, name: RefreshLock.leaseName(name) }),
  ).rejects.toMatchObject({ code: 404 });
});

it('lets a fetch on another replica wait for the refresh through its watch: one Lease read, no polling', async () => {
  const { connectionId, name } = await expiredConnection();
  const calls = bed.oidc.refreshCalls();
  bed.oidc.setTokenDelay(1500);
  try {
    const fromA = bed.proxyA.seen.length;
    const first = a().call('GET', getPath(connectionId));
    await eventually(() => requestsOn(bed.proxyA, name, fromA).some((r) => kind(r) === 'POST leases' && r.status === 201), 10_000, 10);
    const fromB = bed.proxyB.seen.length;
    const started = Date.now();
    const second = await b().call('GET', getPath(connectionId));
    const waitedMs = Date.now() - started;
    const one = await first;
    expect(one.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.credentials.access_token).toBe(one.body.credentials.access_token);
    // B found the Lease taken (409), read it once to learn it is live, then waited for its watch.
    const onB = requestsOn(bed.proxyB, name, fromB).filter((r) => r.at <= started + waitedMs);
    expect(onB.map(kind)).toEqual(['POST leases', 'GET leases']);
    expect(onB[0]!.status).toBe(409);
    expect(waitedMs).toBeGreaterThan(500); // it did wait for A's slow token call: polling every 100 ms would show here
  } finally {
    bed.oidc.setTokenDelay(0);
  }
  expect(bed.oidc.refreshCalls() - calls).toBe(1);
  // Nobody is left waiting on the cache.
  expect(b().ctx.caches.credentialSecrets.waiting + b().ctx.caches.connections.waiting).toBe(0);
});

it('does not spend a spent refresh token when its watch lags: the Secret read under the lock brings the written version', async () => {
  const { connectionId, name } = await expiredConnection();
  // B's cache stops following the credentials Secrets: its watch is cut, and its list and watch of them are held back.
  const secretsOfNs = `/api/v1/namespaces/${bed.ns.name}/secrets?`;
  let lagging = true;
  bed.proxyB.decide = (r) => (lagging && r.path.startsWith(secretsOfNs) ? { delayMs: 2500 } : {});
  bed.proxyB.cut();
  const calls = bed.oidc.refreshCalls();
  try {
    const byA = await a().call('GET', getPath(connectionId));
    expect(byA.status).toBe(200);
    // A released the Lease (deleted it): B can take it at once; B still holds the old tokens.
    await eventually(() =>
      kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ namespace: bed.ns.name, name: RefreshLock.leaseName(name) })
        .then(
          () => undefined,
          (err: { code?: number }) => err.code === 404,
        ),
    );
    expect(b().ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId)!.credentials.access_token).not.toBe(
      byA.body.credentials.access_token,
    );
    const byB = await b().call('GET', getPath(connectionId));
    lagging = false;
    // Without the check B would have spent the rotated-away refresh token: invalid_grant, grant revoked, 424.
    expect(byB.status).toBe(200);
    expect(byB.body.credentials.access_token).toBe(byA.body.credentials.access_token);
  } finally {
    lagging = false;
    bed.proxyB.decide = () => ({});
  }
  expect(bed.oidc.refreshCalls() - calls).toBe(1);
  // The grant is alive: a forced refresh on B succeeds.
  const forced = await b().call('GET', getPath(connectionId, '&force_refresh=true'));
  expect(forced.status).toBe(200);
  expect(bed.oidc.refreshCalls() - calls).toBe(2);
});

it('a scheduled refresh writes the Connection status once: the refresh fields and the first conditions together', async () => {
  // A controller of its own behind its own proxy; imported connections carry no status, so its first
  // reconcile would write the conditions and the refresh its fields: one write has both.
  const proxyC = await startHttpFaultProxy(kc.getCurrentCluster()!.server);
  const from = proxyC.seen.length;
  const c = await startReplica(loadKubeConfig(kubeconfigFile(kc, proxyC.url)), {
    namespaces: [bed.ns.name],
    components: ['controller'],
    identity: 'round-trips-controller',
  });
  try {
    const calls = bed.oidc.refreshCalls();
    const { name, accessToken } = await expiredConnection();
    const written = await eventually(
      async () => {
        const conn = await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: bed.ns.name,
          plural: CONNECTIONS.plural,
          name,
        });
        const status = (conn as ConnectionResource).status;
        return status?.lastRefreshedAt && status.conditions?.length ? status : undefined;
      },
      30_000,
      100,
    );
    expect(c.ctx.connections.getConnectionByName(bed.ns.name, name)!.credentials.access_token).not.toBe(accessToken);
    expect(bed.oidc.refreshCalls() - calls).toBeGreaterThanOrEqual(1);
    expect(written.refreshAttempts).toBe(0);
    expect(written.conditions!.find((x) => x.type === 'Ready')).toMatchObject({ status: 'True' });
    expect(Date.parse(written.nextRefreshAt!)).toBeLessThan(Date.parse(written.expiresAt!));
    // Whatever else the controller did for it (the Lease's release, a reconcile of its own write), one status write.
    await new Promise((r) => setTimeout(r, 1000));
    const onC = requestsOn(proxyC, name, from).map(kind);
    expect(onC.filter((k) => k === 'PUT connections/status')).toHaveLength(1);
    // One refresh of it (the controller's Lease creates of other connections are counted too: their bodies name them).
    expect(onC.filter((k) => k === 'PUT secrets')).toHaveLength(1);
    expect(onC.filter((k) => k === 'PUT connections')).toHaveLength(0);
  } finally {
    await c.stop();
    await proxyC.close();
  }
});

it('a scheduled refresh gives its token-call slot back once the provider answered: the next token call does not wait for the Secret write', async () => {
  // One token call at a time, and every credentials write of the two connections held back 2 s at the proxy.
  const proxyD = await startHttpFaultProxy(kc.getCurrentCluster()!.server);
  const first = await expiredConnection();
  const second = await expiredConnection();
  const names = [first.name, second.name];
  const isWriteOfOne = (r: ProxiedRequest) => r.method === 'PUT' && /\/secrets\//.test(r.path) && names.some((n) => r.path.includes(n));
  proxyD.decide = (r) => (isWriteOfOne(r) ? { delayMs: 2000 } : {});
  const d = await startReplica(loadKubeConfig(kubeconfigFile(kc, proxyD.url)), {
    namespaces: [bed.ns.name],
    components: ['controller'],
    identity: 'round-trips-slots',
    controller: { refreshConcurrency: 1 },
  });
  try {
    const writes = await eventually(
      () => {
        const done = proxyD.seen.filter((r) => isWriteOfOne(r) && r.doneAt !== undefined);
        return done.length === 2 ? done : undefined;
      },
      30_000,
      50,
    );
    // The proxy marks a write done once it has passed the answer on; the replica takes it into its cache just after.
    for (const { name, accessToken } of [first, second]) {
      await eventually(
        () => d.ctx.connections.getConnectionByName(bed.ns.name, name)!.credentials.access_token !== accessToken || undefined,
        5_000,
        20,
      );
      expect(d.ctx.connections.getConnectionByName(bed.ns.name, name)!.credentials.access_token).not.toBe(accessToken);
    }
    const [earlier, later] = [...writes].sort((x, y) => x.at - y.at);
    // The later connection's Lease, Secret read and token call all came while the earlier one's write was held.
    expect(later!.at).toBeLessThan(earlier!.doneAt!);
    expect(earlier!.doneAt! - earlier!.at).toBeGreaterThanOrEqual(1900);
  } finally {
    proxyD.decide = () => ({});
    await d.stop();
    await proxyD.close();
  }
});
