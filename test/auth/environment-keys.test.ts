/**
 * Secret keys: a key held by the Environments of two namespaces authenticates neither, and both
 * Environments say why; a weak key is refused the same way. Real API server, controller and server.
 */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { loadConfig } from '../../src/platform/config.js';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/context/app-context.js';
import { startController, type RunningController } from '../../src/controller/start.js';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { GROUP, LABELS, VERSION, type EnvironmentResource } from '../../src/k8s/resources.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);

let namespaces: Array<{ name: string; delete(): Promise<void> }>;
let ctx: AppContext;
let controller: RunningController;
let server: RunningServer;

beforeAll(async () => {
  namespaces = await Promise.all([createTestNamespace(kc, 'keys-a'), createTestNamespace(kc, 'keys-b')]);
  const names = namespaces.map((n) => n.name);
  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: names.join(','),
    LATCHKEY_LEADER_ELECTION: 'false',
  });
  ctx = createContext({ config, logger: testLogger(), kc });
  await ctx.caches.start();
  controller = await startController(ctx, { healthPort: null });
  server = await startHttpServer(ctx, 0, '127.0.0.1');
});

afterAll(async () => {
  await server?.close();
  await controller?.stop();
  await ctx?.caches.stop();
  await Promise.all(namespaces.map((n) => n.delete()));
});

async function putKey(namespace: string, key: string): Promise<void> {
  const body = { metadata: { name: 'keys', labels: { [LABELS.watch]: 'true' } }, stringData: { secretKey: key } };
  try {
    await core.createNamespacedSecret({ namespace, body });
  } catch {
    await core.replaceNamespacedSecret({ namespace, name: 'keys', body });
  }
}

async function ensureEnvironment(namespace: string): Promise<void> {
  const body = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Environment',
    metadata: { name: 'main' },
    spec: { secretRef: { name: 'keys' } },
  };
  await custom
    .createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'environments', body })
    .catch(() => undefined);
}

async function readyOf(namespace: string): Promise<{ status?: string; reason?: string; message?: string }> {
  const env = (await custom.getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'environments',
    name: 'main',
  })) as EnvironmentResource;
  return env.status?.conditions?.find((c) => c.type === 'Ready') ?? {};
}

const statusWith = async (key: string) => (await fetch(`${server.url}/providers`, { headers: { authorization: `Bearer ${key}` } })).status;

it('refuses a key that two namespaces share, on both, until one changes', async () => {
  const [a, b] = namespaces.map((n) => n.name) as [string, string];
  const shared = `sk_${randomBytes(24).toString('hex')}`;
  await Promise.all([putKey(a, shared), putKey(b, shared)]);
  await Promise.all([ensureEnvironment(a), ensureEnvironment(b)]);

  for (const ns of [a, b]) {
    const ready = await eventually(async () => {
      const r = await readyOf(ns);
      return r.reason === 'SecretKeyShared' ? r : undefined;
    });
    expect(ready.status).toBe('False');
    expect(ready.message).not.toContain(shared);
    expect(ready.message).not.toContain(ns === a ? b : a); // another tenant's namespace is not named
  }
  expect(await statusWith(shared)).toBe(401);

  // B gets its own key: both are Ready again, and each key opens its own namespace only.
  const own = `sk_${randomBytes(24).toString('hex')}`;
  await putKey(b, own);
  for (const ns of [a, b]) {
    await eventually(async () => {
      const r = await readyOf(ns);
      if (r.status !== 'True') throw new Error(`${ns}: ${r.reason}: ${r.message}`);
      return true;
    });
  }
  await eventually(async () => ((await statusWith(shared)) === 200 ? true : undefined));
  expect(await statusWith(own)).toBe(200);
});

it('refuses a weak key and says why without repeating it', async () => {
  const [a] = namespaces.map((n) => n.name) as [string];
  const weak = 'password-password-password-12345';
  await putKey(a, weak);
  await ensureEnvironment(a);
  const ready = await eventually(async () => {
    const r = await readyOf(a);
    return r.reason === 'WeakSecretKey' ? r : undefined;
  });
  expect(ready.status).toBe('False');
  expect(ready.message).not.toContain(weak);
  expect(await statusWith(weak)).toBe(401);
});
