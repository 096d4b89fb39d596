import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { RefreshLock } from '../../src/auth/refresh/lock.js';
import { Leases } from '../../src/k8s/leases.js';
import { isNotFound } from '../../src/k8s/errors.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import { CREDENTIALS_SECRET_TYPE, GROUP, LABELS, VERSION } from '../../src/k8s/resources.js';
import { KubeStore } from '../../src/k8s/store.js';
import { ConnectionStatusWriter } from '../../src/domain/connection-status-writers.js';
import { LatchkeyError } from '../../src/domain/errors.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let store: KubeStore;
let replica: KubeStore;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'store');
  store = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
  replica = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
  await Promise.all([store.caches.start(), replica.start()]);
});
afterAll(async () => {
  await Promise.all([store.caches.stop(), replica.stop()]);
  await ns.delete();
});

const spec = (connectionId: string) => ({
  integration: 'github-prod',
  provider: 'github',
  connectionId,
  authMode: 'OAUTH2' as const,
  endUser: { id: 'user-1', email: 'u@example.com', tags: { org: 'acme' } },
  metadata: { plan: 'pro' },
  connectionConfig: {},
});
/** A Connection written straight to the API server, without a Secret or any label; its object name. */
async function createByHand(connectionId: string, id: number): Promise<string> {
  const name = connectionObjectName('github-prod', connectionId);
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: 'connections',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Connection', metadata: { name }, spec: { ...spec(connectionId), id } },
  });
  return name;
}
const oauth = (token: string) => ({ type: 'OAUTH2', access_token: token, refresh_token: `r-${token}`, raw: {} });
const readConnectionObject = async (name: string) =>
  (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections', name })) as {
    metadata: { managedFields?: unknown[] };
  };

describe('connection status writers', () => {
  it('writes the fields the writer owns and refuses, unwritten, a change to any other', async () => {
    const created = await store.connections.createConnection({
      namespace: ns.name,
      spec: spec('status-writers'),
      credentials: oauth('tok-sw'),
    });
    const name = created.resource.metadata.name;
    const at = '2026-01-02T03:04:05.000Z';
    const written = await store.connections.updateConnectionStatus(ns.name, name, ConnectionStatusWriter.LastFetched, (s) => ({
      ...s,
      lastFetchedAt: at,
    }));
    expect(written.status?.lastFetchedAt).toBe(at);

    const stray = store.connections.updateConnectionStatus(ns.name, name, ConnectionStatusWriter.LastFetched, (s) => ({
      ...s,
      lastFetchedAt: '2026-01-02T03:04:06.000Z',
      refreshAttempts: 7,
    }));
    await expect(stray).rejects.toBeInstanceOf(LatchkeyError);
    await expect(stray).rejects.toMatchObject({
      code: 'status_field_not_owned',
      message: expect.stringContaining('status.refreshAttempts'),
    });
    const onServer = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'connections',
      name,
    })) as {
      status?: { lastFetchedAt?: string; refreshAttempts?: number };
    };
    expect(onServer.status?.lastFetchedAt).toBe(at);
    expect(onServer.status?.refreshAttempts).toBeUndefined();
  });
});

describe('connections and their Secrets', () => {
  it('creates a Connection and an owned, labelled Secret, and reads them back at once', async () => {
    const created = await store.connections.createConnection({
      namespace: ns.name,
      spec: spec('user 1 / GitHub'),
      credentials: oauth('tok-1'),
    });
    const name = connectionObjectName('github-prod', 'user 1 / GitHub');
    expect(created.resource.metadata.name).toBe(name);
    expect(created.resource.spec.id).toBeGreaterThan(0);

    // Read-your-writes from the cache, then from the informer once it catches up.
    expect(store.connections.getConnection(ns.name, 'github-prod', 'user 1 / GitHub')?.credentials).toEqual(oauth('tok-1'));
    const seenByReplica = await eventually(() => replica.connections.getConnection(ns.name, 'github-prod', 'user 1 / GitHub'));
    expect(seenByReplica.resource.spec.endUser?.tags).toEqual({ org: 'acme' });
    // The caches keep no field-ownership bookkeeping (a third of each object's size).
    expect(seenByReplica.resource.metadata.managedFields).toBeUndefined();
    expect(replica.caches.credentialSecrets.get(name, ns.name)?.metadata?.managedFields).toBeUndefined();
    // A replica that lists them (starts after the write) caches them in the shape a watch delivers:
    // plain JSON (not the typed client's class instances with Dates), without managedFields.
    const late = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
    await late.start();
    try {
      for (const listed of [late.caches.connections.get(name, ns.name), late.caches.credentialSecrets.get(name, ns.name)]) {
        expect(Object.getPrototypeOf(listed)).toBe(Object.prototype);
        expect(Object.getPrototypeOf(listed!.metadata)).toBe(Object.prototype);
        expect('managedFields' in listed!.metadata!).toBe(false);
        expect(typeof listed!.metadata!.creationTimestamp).toBe('string');
      }
      expect(late.connections.getConnection(ns.name, 'github-prod', 'user 1 / GitHub')?.credentials).toEqual(oauth('tok-1'));
    } finally {
      await late.stop();
    }

    const secret = await core.readNamespacedSecret({ namespace: ns.name, name });
    expect(secret.type).toBe(CREDENTIALS_SECRET_TYPE);
    expect(secret.metadata?.labels).toEqual({ [LABELS.managedBy]: 'latchkey', [LABELS.integration]: 'github-prod' });
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Connection',
      uid: created.resource.metadata.uid,
      controller: true,
    });

    // The custom resource itself never holds a credential.
    const raw = await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections', name });
    expect(JSON.stringify(raw)).not.toContain('tok-1');
  });

  it('stores each token once in the Secret and reads back what was written; a Secret written before reads as it is', async () => {
    const access = `ya29.${'a'.repeat(170)}`;
    const refresh = `1//${'r'.repeat(90)}`;
    const credentials = {
      type: 'OAUTH2',
      access_token: access,
      refresh_token: refresh,
      expires_at: '2026-11-27T15:00:00.000Z',
      raw: { access_token: access, expires_in: 3599, refresh_token: refresh, token_type: 'Bearer' },
    };
    const created = await store.connections.createConnection({ namespace: ns.name, spec: spec('tokens once'), credentials });
    const name = created.resource.metadata.name;
    const secretJson = async () => {
      const secret = await core.readNamespacedSecret({ namespace: ns.name, name });
      return Buffer.from(secret.data!['credentials.json']!, 'base64').toString('utf8');
    };
    const stored = await secretJson();
    expect(stored.split(access)).toHaveLength(2);
    expect(stored.split(refresh)).toHaveLength(2);
    expect((JSON.parse(stored) as { raw: object }).raw).toEqual({ expires_in: 3599, token_type: 'Bearer' });
    // Every reader sees what was written, key order included: this process, another replica, one that starts later.
    expect(JSON.stringify(store.connections.getConnectionByName(ns.name, name)?.credentials)).toBe(JSON.stringify(credentials));
    await eventually(() => replica.connections.getConnectionByName(ns.name, name));
    expect(JSON.stringify(replica.connections.getConnectionByName(ns.name, name)?.credentials)).toBe(JSON.stringify(credentials));
    const updated = await replica.connections.updateCredentials(ns.name, name, (c) => {
      expect(JSON.stringify(c)).toBe(JSON.stringify(credentials));
      return { ...c, expires_at: '2026-11-27T16:00:00.000Z' };
    });
    expect(JSON.stringify(updated.credentials)).toBe(JSON.stringify({ ...credentials, expires_at: '2026-11-27T16:00:00.000Z' }));
    expect((await secretJson()).split(access)).toHaveLength(2);

    // A Secret as the previous release wrote it (the tokens in raw too) reads as it is.
    const old = { ...credentials, access_token: `${access}-old`, raw: { ...credentials.raw, access_token: `${access}-old` } };
    await core.patchNamespacedSecret(
      { namespace: ns.name, name, body: { data: { 'credentials.json': Buffer.from(JSON.stringify(old)).toString('base64') } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(() => replica.connections.getConnectionByName(ns.name, name)?.credentials.access_token === old.access_token);
    expect(JSON.stringify(replica.connections.getConnectionByName(ns.name, name)?.credentials)).toBe(JSON.stringify(old));
    await store.connections.deleteConnection(ns.name, name);
  });

  it('refuses a second connection with the same integration and connection ID', async () => {
    await store.connections.createConnection({ namespace: ns.name, spec: spec('dup'), credentials: oauth('a') });
    await expect(
      replica.connections.createConnection({ namespace: ns.name, spec: spec('dup'), credentials: oauth('b') }),
    ).rejects.toMatchObject({
      kind: 'conflict',
      code: 'already_exists',
    });
    expect(store.connections.getConnection(ns.name, 'github-prod', 'dup')?.credentials).toEqual(oauth('a'));
  });

  it('loses no write when two replicas update the same connection concurrently', async () => {
    const { resource } = await store.connections.createConnection({ namespace: ns.name, spec: spec('cas'), credentials: oauth('c') });
    const name = resource.metadata.name;
    await eventually(() => replica.connections.getConnection(ns.name, 'github-prod', 'cas'));
    await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        (i % 2 ? store : replica).connections.updateConnection(ns.name, name, (c) => ({
          ...c,
          spec: { ...c.spec, metadata: { ...c.spec.metadata, [`k${i}`]: i } },
        })),
      ),
    );
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? store : replica).connections.updateCredentials(ns.name, name, (cur) => ({ ...cur, [`field${i}`]: i })),
      ),
    );
    const fresh = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'connections',
      name,
    })) as { spec: { metadata: Record<string, unknown> } };
    expect(Object.keys(fresh.spec.metadata).sort()).toEqual(['plan', ...Array.from({ length: 16 }, (_, i) => `k${i}`)].sort());
    const creds = await eventually(() => {
      const c = store.connections.getConnection(ns.name, 'github-prod', 'cas')?.credentials;
      return c && Object.keys(c).filter((k) => k.startsWith('field')).length === 8 ? c : undefined;
    });
    expect(creds.access_token).toBe('c');
  });

  it('deletes the Secret and the refresh lock with the Connection (garbage collection)', async () => {
    const { resource } = await store.connections.createConnection({ namespace: ns.name, spec: spec('gone'), credentials: oauth('g') });
    const name = resource.metadata.name;
    const lock = new RefreshLock(new Leases(kc), 'test', 30);
    expect(await lock.tryAcquire(ns.name, name, resource.metadata.uid)).toBe(true);
    await store.connections.deleteConnection(ns.name, name);
    await eventually(
      async () => {
        try {
          await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: ns.name, name: RefreshLock.leaseName(name) });
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      60_000,
      250,
    );
    expect(store.connections.getConnection(ns.name, 'github-prod', 'gone')).toBeUndefined();
    await eventually(
      async () => {
        try {
          await core.readNamespacedSecret({ namespace: ns.name, name });
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      60_000,
      250,
    );
  });

  it('leaves nothing behind when the Secret cannot be written', async () => {
    // A Secret over the API server's 1 MiB limit is rejected after the Connection was created.
    const huge = { type: 'OAUTH2', access_token: 'x'.repeat(1_100_000) };
    await expect(store.connections.createConnection({ namespace: ns.name, spec: spec('too-big'), credentials: huge })).rejects.toThrow();
    const name = connectionObjectName('github-prod', 'too-big');
    await expect(
      custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections', name }),
    ).rejects.toMatchObject({ code: 404 });
    expect(store.connections.getConnection(ns.name, 'github-prod', 'too-big')).toBeUndefined();
  });

  it('hides and then sweeps a Connection whose Secret was never written', async () => {
    const name = await createByHand('orphan', 42);
    await eventually(() => store.connections.connectionIdentity(ns.name, name));
    expect(store.connections.getConnection(ns.name, 'github-prod', 'orphan')).toBeUndefined();
    expect(store.connectionScans.listConnections(ns.name).map((c) => c.metadata.name)).not.toContain(name);
    const removed = await store.connectionUpkeep.sweepIncompleteConnections(0);
    expect(removed).toContain(`${ns.name}/${name}`);
    await expect(
      custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections', name }),
    ).rejects.toMatchObject({ code: 404 });
  });

  it('a sharded store caches whole only its share, reads the identity of any other, and labels one it takes over', async () => {
    const created = await store.connections.createConnection({ namespace: ns.name, spec: spec('shard me'), credentials: oauth('tok-s') });
    const name = created.resource.metadata.name;
    // Made by hand, without any label.
    const bare = await createByHand('bare', 43);
    const sharded = new KubeStore(kc, {
      namespaces: [ns.name],
      logger: testLogger(),
      connectionShard: 'shard-x',
      credentialShard: 'shard-x',
    });
    await sharded.start();
    try {
      // Nothing of the connections outside its share is kept; their identities are read when asked for.
      expect(sharded.caches.connectionIndex).toBeUndefined();
      expect(sharded.connections.connectionIdentity(ns.name, name)).toBeUndefined();
      expect(sharded.caches.connections.get(name, ns.name)).toBeUndefined();
      expect(sharded.caches.credentialSecrets.get(name, ns.name)).toBeUndefined();
      expect((await sharded.connections.findConnectionIdentity(ns.name, bare))?.metadata.uid).toEqual(expect.any(String));
      const scanned: Array<{ metadata: Record<string, unknown> }> = [];
      await sharded.connectionScans.scanConnectionIdentities((c) => scanned.push(c as never));
      const identity = scanned.find((c) => c.metadata.name === name)!;
      expect(scanned.some((c) => c.metadata.name === bare)).toBe(true);
      // Read as metadata only, cut down to what a controller reads of it.
      expect(identity).not.toHaveProperty('spec');
      expect(identity).not.toHaveProperty('status');
      expect(identity.metadata).toMatchObject({ name, namespace: ns.name, uid: created.resource.metadata.uid, labels: undefined });
      expect(Object.keys(identity.metadata).sort()).toEqual(
        ['creationTimestamp', 'deletionTimestamp', 'labels', 'name', 'namespace', 'resourceVersion', 'uid'].sort(),
      );

      // The API server recorded field ownership at the creations.
      expect((await readConnectionObject(name)).metadata.managedFields?.length).toBeGreaterThan(0);
      expect((await core.readNamespacedSecret({ namespace: ns.name, name })).metadata?.managedFields?.length).toBeGreaterThan(0);
      expect(await sharded.connectionUpkeep.labelShard(ns.name, name, 'shard-x')).toEqual({ secret: true });
      expect(await sharded.connectionUpkeep.labelShard(ns.name, bare, 'shard-x')).toEqual({ secret: false });
      // The label's write dropped it, and later writes (the status, new credentials) record none again.
      await sharded.connections.updateConnectionStatus(ns.name, name, ConnectionStatusWriter.LastFetched, (s) => ({
        ...s,
        lastFetchedAt: '2026-01-02T03:04:05.000Z',
      }));
      await sharded.connections.updateCredentials(ns.name, name, () => oauth('tok-s2'));
      for (const n of [name, bare]) expect((await readConnectionObject(n)).metadata.managedFields).toBeUndefined();
      expect((await core.readNamespacedSecret({ namespace: ns.name, name })).metadata?.managedFields).toBeUndefined();
      for (const n of [name, bare]) {
        // Read-your-writes: whole at once, before its watch delivers it.
        expect(sharded.caches.connections.get(n, ns.name)?.spec.integration).toBe('github-prod');
        const onServer = (await custom.getNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns.name,
          plural: 'connections',
          name: n,
        })) as { metadata: { labels?: Record<string, string> }; spec: { connectionId: string } };
        expect(onServer.metadata.labels?.[LABELS.shard]).toBe('shard-x');
        // The other labels and the spec are as they were.
        if (n === name) expect(onServer.metadata.labels?.[LABELS.integration]).toBe('github-prod');
        expect(onServer.spec.connectionId).toBe(n === name ? 'shard me' : 'bare');
      }
      // Its label-selected watches bring the Connection and its Secret; the identity shows the label.
      await eventually(() => sharded.caches.credentialSecrets.get(name, ns.name) && sharded.caches.watched.connections.list().length === 2);
      await eventually(() => sharded.connections.connectionIdentity(ns.name, bare)?.metadata.labels?.[LABELS.shard] === 'shard-x');
      expect(sharded.connections.getConnectionByName(ns.name, name)?.credentials).toEqual(oauth('tok-s2'));
    } finally {
      await sharded.stop();
      await store.connections.deleteConnection(ns.name, name);
      await store.connections.deleteConnection(ns.name, bare);
    }
  });
});
