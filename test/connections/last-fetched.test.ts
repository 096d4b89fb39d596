import { createConnection } from '../../src/connections/service.js';
import { LastFetchedRecorder } from '../../src/connections/last-fetched.js';
import type { IntegrationResource, ProviderResource } from '../../src/k8s/resources.js';
import { eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { storeForFile } from '../support/store-bed.js';

const kc = testKubeConfig();
const bed = storeForFile(kc, 'last-fetched');
let now = Date.UTC(2030, 0, 1, 12, 0, 0);
const clock = { now: () => now };
const INTERVAL = 300_000;

const integration = { metadata: { name: 'crm' }, spec: { provider: 'acme' } } as unknown as IntegrationResource;
const provider = { metadata: { name: 'acme' }, spec: { authMode: 'API_KEY' } } as unknown as ProviderResource;
const iso = (ms: number) => new Date(ms).toISOString();

async function newConnection(id: string): Promise<string> {
  const created = await createConnection(
    { connections: bed.store.connections, config: { refreshMarginSeconds: 300, refreshMarginRatio: 0.5 }, clock },
    { namespace: bed.ns.name, integration, provider, connectionId: id, credentials: { type: 'API_KEY', apiKey: `key-${id}` } },
  );
  return created.resource.metadata.name;
}

/** The Connection as the API server holds it (not the cache), with the resourceVersion that counts writes. */
async function stored(name: string) {
  const r = (await bed.store.caches.custom.getNamespacedCustomObject({
    group: 'latchkey.dev',
    version: 'v1alpha1',
    namespace: bed.ns.name,
    plural: 'connections',
    name,
  })) as { metadata: { resourceVersion: string }; status?: { lastFetchedAt?: string } };
  return { version: r.metadata.resourceVersion, lastFetchedAt: r.status?.lastFetchedAt };
}

describe('last_fetched_at', () => {
  it('is recorded in memory, written in a batch, at most once per connection per interval', async () => {
    const a = await newConnection('lf-a');
    const b = await newConnection('lf-b');
    const recorder = new LastFetchedRecorder({ connections: bed.store.connections, logger: testLogger(), clock, intervalMs: INTERVAL });
    const before = await stored(a);

    // Fetches: nothing is written on the request path.
    recorder.record(bed.ns.name, a, now);
    recorder.record(bed.ns.name, b, now + 5);
    expect(recorder.pendingCount).toBe(2);
    expect(await stored(a)).toEqual(before);

    await recorder.flush();
    expect(recorder.pendingCount).toBe(0);
    const first = await stored(a);
    expect(first.lastFetchedAt).toBe(iso(now));
    expect((await stored(b)).lastFetchedAt).toBe(iso(now + 5));

    // Many more fetches within the interval: no write, the newest time is kept for later.
    for (let i = 1; i <= 50; i++) {
      now += 1000;
      recorder.record(bed.ns.name, a, now);
      await recorder.flush();
    }
    expect(await stored(a)).toEqual(first);
    expect(recorder.pendingCount).toBe(1);

    // Once the interval has passed since the last write, the newest recorded time is written (one write).
    const newest = now;
    now += INTERVAL;
    await recorder.flush();
    const second = await stored(a);
    expect(second.lastFetchedAt).toBe(iso(newest));
    expect(Number(second.version)).toBeGreaterThan(Number(first.version));
    expect(recorder.pendingCount).toBe(0);
  });

  it('a stopping replica writes what it holds, whatever the interval', async () => {
    const c = await newConnection('lf-c');
    const recorder = new LastFetchedRecorder({ connections: bed.store.connections, logger: testLogger(), clock, intervalMs: INTERVAL });
    recorder.record(bed.ns.name, c, now);
    await recorder.flush();
    now += 1000;
    recorder.record(bed.ns.name, c, now);
    await recorder.flush();
    expect((await stored(c)).lastFetchedAt).toBe(iso(now - 1000));
    await recorder.stop();
    expect((await stored(c)).lastFetchedAt).toBe(iso(now));
  });

  it('never moves a later time written by another replica back', async () => {
    const d = await newConnection('lf-d');
    const other = new LastFetchedRecorder({ connections: bed.store.connections, logger: testLogger(), clock, intervalMs: INTERVAL });
    const mine = new LastFetchedRecorder({ connections: bed.store.connections, logger: testLogger(), clock, intervalMs: INTERVAL });
    mine.record(bed.ns.name, d, now);
    other.record(bed.ns.name, d, now + 2000);
    await other.flush();
    await eventually(
      () => bed.store.connections.getConnectionByName(bed.ns.name, d)?.resource.status?.lastFetchedAt === iso(now + 2000),
      60_000,
    );
    await mine.flush();
    expect((await stored(d)).lastFetchedAt).toBe(iso(now + 2000));
  });

  it('a connection deleted before the flush is skipped without a retry', async () => {
    const e = await newConnection('lf-e');
    const recorder = new LastFetchedRecorder({ connections: bed.store.connections, logger: testLogger(), clock, intervalMs: INTERVAL });
    recorder.record(bed.ns.name, e, now);
    await bed.store.connections.deleteConnection(bed.ns.name, e);
    await eventually(() => bed.store.connections.getConnectionByName(bed.ns.name, e) === undefined, 60_000);
    await recorder.flush();
    expect(recorder.pendingCount).toBe(0);
  });
});
