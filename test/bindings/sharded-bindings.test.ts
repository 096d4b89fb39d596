/**
 * CredentialBindings sharded like refresh: with two controller replicas (shard Leases, rendezvous
 * hashing), each binding is synced by the replica that owns its connection and by no other, and
 * after one replica leaves, the other takes its bindings over with its connections. Real control
 * plane and oidc-provider; which replica synced a binding is read from its own log lines.
 */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { refresherFor } from '../../src/connections/shared-refresher.js';
import { GROUP, VERSION, type CredentialBindingResource } from '../../src/k8s/resources.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment } from '../../dev/fixtures.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, readCustom } from '../support/kube.js';
import { captureLogs, type LogCapture } from '../support/log-capture.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const client: TestClient = { clientId: 'latchkey-bindshard', clientSecret: 'bindshard-client-secret-0123456789' };
const INTEGRATION = 'oidc';
const COUNT = 12;

let bed: OAuthBed | undefined;
let oidc: OidcTestServer;
let envNs: string;
let appNs: string;
const replicas = new Map<string, { replica: Replica; logs: LogCapture }>();
/** binding name -> connection ID and key (namespace/object name). */
const bound = new Map<string, { connectionId: string; key: string }>();

async function startController(identity: string) {
  const logs = captureLogs();
  const replica = await startReplica(kc, {
    namespaces: [envNs],
    components: ['controller'],
    identity,
    logger: logs.logger,
    config: { leaseDurationSeconds: 3, refreshMarginSeconds: 5 },
  });
  replicas.set(identity, { replica, logs });
}

const membership = (id: string) => replicas.get(id)!.replica.controller!.controller.membership!;
/** The replicas whose log says they synced the binding. */
const syncedBy = (binding: string) =>
  [...replicas]
    .filter(([, r]) => r.logs.lines.some((l) => l.includes('credential binding synced') && l.includes(`"binding":"${binding}"`)))
    .map(([id]) => id);
const tokenIn = async (name: string) => {
  const s = await core.readNamespacedSecret({ namespace: appNs, name });
  return Buffer.from(s.data!.token!, 'base64').toString('utf8');
};

beforeAll(async () => {
  bed = await startOAuthBed(kc, { namespace: 'bindshard', client, integration: INTEGRATION, accessTokenTtl: 600 });
  ({ oidc } = bed);
  envNs = bed.ns.name;
  appNs = `t-bindshard-app-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: appNs, labels: { 'latchkey.dev/test': 'true' } } } });
  await createEnvironment(kc, envNs, {
    credentialBindings: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': appNs } } },
  });
  await startController('a');
  await startController('b');
  await eventually(() => ['a', 'b'].every((id) => membership(id).active && membership(id).members.join() === 'a,b'), 30_000);
  const store = replicas.get('a')!.replica.ctx;
  for (let i = 0; i < COUNT; i++) {
    const { conn } = await importOAuth2(store, oidc, client, envNs, INTEGRATION, bed.providerName, { expiresInMs: 600_000 });
    const connectionId = conn.resource.spec.connectionId;
    bound.set(`b${i}`, { connectionId, key: `${envNs}/${connectionObjectName(INTEGRATION, connectionId)}` });
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: appNs,
      plural: 'credentialbindings',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'CredentialBinding',
        metadata: { name: `b${i}` },
        spec: { connectionRef: { namespace: envNs, integration: INTEGRATION, connectionId } },
      },
    });
  }
}, 120_000);

afterAll(async () => {
  for (const { replica } of replicas.values()) await replica.stop();
  await core.deleteNamespace({ name: appNs }).catch(() => undefined);
  await bed?.close();
});

it('syncs each binding on the replica that owns its connection, and on no other; the logs hold no token', async () => {
  for (const name of bound.keys())
    await eventually(async () => {
      const b = await readCustom<CredentialBindingResource>(kc, 'credentialbindings', appNs, name);
      return condition(b, 'Ready')?.reason === 'Synced';
    }, 30_000);
  const owners = new Set<string>();
  for (const [name, { key }] of bound) {
    const owner = membership('a').ownerOf(key)!;
    owners.add(owner);
    expect({ name, syncedBy: syncedBy(name) }).toEqual({ name, syncedBy: [owner] });
  }
  // Both replicas hold a share (12 keys on 2 members: all on one has odds of 1 in 2,048).
  expect(owners.size).toBe(2);
  const tokens: string[] = [];
  for (const name of bound.keys()) tokens.push(await tokenIn(name));
  for (const { logs } of replicas.values()) expect(logs.leaks(tokens)).toEqual([]);
});

it('a replica that leaves hands its bindings over: the survivor follows their next refresh', async () => {
  const leaving = membership('a').ownerOf(bound.get('b0')!.key)!;
  const survivor = leaving === 'a' ? 'b' : 'a';
  await replicas.get(leaving)!.replica.stop({ release: true });
  replicas.delete(leaving);
  await eventually(() => membership(survivor).members.join() === survivor && membership(survivor).active, 30_000);

  const { connectionId } = bound.get('b0')!;
  const ctx = replicas.get(survivor)!.replica.ctx;
  await eventually(() => ctx.connections.getConnection(envNs, INTEGRATION, connectionId), 30_000);
  const refreshed = await refresherFor(ctx).ensureFresh(envNs, INTEGRATION, connectionId, { reason: 'fetch', force: true });
  await eventually(async () => (await tokenIn('b0')) === refreshed.credentials.access_token, 15_000, 50);
});
