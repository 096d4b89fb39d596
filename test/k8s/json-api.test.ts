import { apiMessage, isApiUnavailable, isConflict, isNotFound, statusOf } from '../../src/k8s/errors.js';
import { KubeJsonApi, observeJsonCalls } from '../../src/k8s/json-api.js';
import { testKubeConfig } from '../../dev/cluster.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxiedApiServerBed } from '../support/tcp-proxy.js';

const kc = testKubeConfig();
const bed = bedForFile(() => startProxiedApiServerBed(kc, 'json-api'));

const configMaps = () => `/api/v1/namespaces/${bed.ns.name}/configmaps`;

it('answers the API server sent, and failures the error helpers read as they read the typed client', async () => {
  const api = new KubeJsonApi(kc);
  const seen: string[] = [];
  const unobserve = observeJsonCalls(kc, (method, path) => seen.push(`${method} ${path}`));
  try {
    const created = await api.post<{ metadata: { name: string; creationTimestamp: unknown } }>(configMaps(), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'one' },
      data: { a: '1' },
    });
    expect(created.metadata.name).toBe('one');
    expect(typeof created.metadata.creationTimestamp).toBe('string'); // as sent, no Date

    const again = await api.post(configMaps(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' } }).catch((e: unknown) => e);
    expect(isConflict(again)).toBe(true);
    expect(apiMessage(again)).toMatch(/already exists/);

    const missing = await api.get(`${configMaps()}/absent`).catch((e: unknown) => e);
    expect(isNotFound(missing)).toBe(true);

    const listed = await api.get<{ items: unknown[]; metadata: { continue?: string } }>(configMaps(), {
      query: { limit: 1, labelSelector: undefined },
    });
    expect(listed.items).toHaveLength(1);
    // What benchmarks that count API calls are told.
    expect(seen).toEqual([`POST ${configMaps()}`, `POST ${configMaps()}`, `GET ${configMaps()}/absent`, `GET ${configMaps()}`]);
  } finally {
    unobserve();
    await api.close();
  }
});

it('reuses its connections, and replaces one dropped under it', async () => {
  const api = new KubeJsonApi(bed.viaProxy);
  try {
    const before = bed.proxy.accepted();
    for (let i = 0; i < 20; i++) await api.get(`/api/v1/namespaces/${bed.ns.name}`);
    expect(bed.proxy.accepted() - before).toBe(1);
    bed.proxy.cut();
    await expect(api.get(`/api/v1/namespaces/${bed.ns.name}`)).resolves.toMatchObject({ metadata: { name: bed.ns.name } });
    expect(bed.proxy.accepted() - before).toBe(2);
  } finally {
    await api.close();
  }
});

it('reads the credentials from the configuration again each minute (rotated tokens are picked up)', async () => {
  let now = 1_000_000;
  const user = bed.viaProxy.getCurrentUser() as { token?: string };
  const good = user.token;
  user.token = 'not-a-valid-token';
  const api = new KubeJsonApi(bed.viaProxy, 10_000, () => now);
  try {
    const refused = await api.get(`/api/v1/namespaces/${bed.ns.name}`).catch((e: unknown) => e);
    expect(statusOf(refused)).toBe(401);
    user.token = good; // the token file rotated
    now += 30_000;
    expect(statusOf(await api.get(`/api/v1/namespaces/${bed.ns.name}`).catch((e: unknown) => e))).toBe(401);
    now += 31_000;
    await expect(api.get(`/api/v1/namespaces/${bed.ns.name}`)).resolves.toMatchObject({ metadata: { name: bed.ns.name } });
  } finally {
    user.token = good;
    await api.close();
  }
});

it('an API server that is down or hangs is unavailable (retried later), not a failure', async () => {
  const api = new KubeJsonApi(bed.viaProxy, 1000);
  try {
    bed.proxy.refuse(true);
    bed.proxy.cut();
    expect(isApiUnavailable(await api.get(`/api/v1/namespaces/${bed.ns.name}`).catch((e: unknown) => e))).toBe(true);
    bed.proxy.refuse(false);
    bed.proxy.stall(true);
    expect(isApiUnavailable(await api.get(`/api/v1/namespaces/${bed.ns.name}`).catch((e: unknown) => e))).toBe(true);
  } finally {
    bed.proxy.stall(false);
    bed.proxy.cut();
    await api.close();
  }
});
