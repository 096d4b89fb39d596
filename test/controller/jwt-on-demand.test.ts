/**
 * JWT tokens are minted locally on fetch and proxy; the controller must not mint them on a
 * schedule (that would rewrite every JWT connection's Secret every few minutes for nothing).
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { ConnectionResource } from '../../src/k8s/resources.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { condition, readCustom } from '../support/kube.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let replica: Replica;
let providerName: string;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'jwt-ctl');
  providerName = `jwt-${ns.name}`;
  await applyProvider(kc, providerName, {
    displayName: 'JWT API',
    authMode: 'JWT',
    modeOptions: { algorithm: 'HS256', secretEncoding: 'hex', lifetimeSeconds: 4 },
    proxy: { baseUrl: 'https://api.example.com' },
  });
  await createIntegration(kc, ns.name, 'jwt', { provider: providerName });
  replica = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['controller'],
    identity: 'solo',
    config: { leaderElection: false },
  });
  await eventually(() => replica.ctx.catalog.getIntegration(ns.name, 'jwt'));
});

afterAll(async () => {
  await replica?.stop();
  await deleteProvider(kc, providerName);
  await ns?.delete();
});

it('leaves JWT connections to be minted on demand, and calls them Ready', async () => {
  const now = Math.floor(Date.now() / 1000);
  const conn = await replica.ctx.connections.createConnection({
    namespace: ns.name,
    spec: { integration: 'jwt', provider: providerName, connectionId: 'ghost-site', authMode: 'JWT' },
    credentials: {
      type: 'JWT',
      apiKey: 'key-id:00112233445566778899aabbccddeeff',
      // A token minted earlier, expiring in 4 s: a refresher on a schedule would replace it.
      token: `e30.${Buffer.from(JSON.stringify({ iat: now, exp: now + 4 })).toString('base64url')}.sig`,
      expires_at: new Date((now + 4) * 1000).toISOString(),
    },
  });
  const name = conn.resource.metadata.name;
  const ready = await eventually(async () => {
    const c = await readCustom<ConnectionResource>(kc, 'connections', ns.name, name);
    return condition(c, 'Ready')?.status === 'True' ? c : undefined;
  });
  expect(condition(ready, 'Ready')!.message).toMatch(/minted .* whenever the connection is fetched or proxied/);
  expect(ready.status?.nextRefreshAt).toBeUndefined();

  // Past the token's expiry, the controller looks at the connection again (a spec change: the Ready
  // condition follows the new generation); it still plans no refresh, and the Secret was not rewritten.
  const expiresAt = Date.parse(conn.credentials.expires_at as string);
  await eventually(() => Date.now() > expiresAt, 10_000, 50);
  const changed = await replica.ctx.connections.updateConnection(ns.name, name, (c) => ({
    ...c,
    spec: { ...c.spec, metadata: { touched: 'after-expiry' } },
  }));
  const generation = changed.metadata.generation!;
  const seen = await eventually(async () => {
    const c = await readCustom<ConnectionResource>(kc, 'connections', ns.name, name);
    return c.status?.observedGeneration === generation ? c : undefined;
  });
  expect(condition(seen, 'Ready')).toMatchObject({ status: 'True' });
  expect(seen.status?.nextRefreshAt).toBeUndefined();
  const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: ns.name, name });
  expect(secret.metadata!.resourceVersion).toBe(conn.credentialsVersion);
});
