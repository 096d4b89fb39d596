import { RefreshLock } from '../../src/auth/refresh/lock.js';
import { createConnection, deleteConnection, importConnection, reauthorize } from '../../src/connections/service.js';
import { Leases } from '../../src/k8s/leases.js';
import type { IntegrationResource, ProviderResource } from '../../src/k8s/resources.js';
import { testKubeConfig } from '../../dev/cluster.js';
import { storeForFile } from '../support/store-bed.js';
import { ConnectionStatusWriter } from '../../src/domain/connection-status-writers.js';

const kc = testKubeConfig();
const bed = storeForFile(kc, 'conn-service');
let now = Date.UTC(2030, 0, 1, 12, 0, 0);
const deps = () => ({
  connections: bed.store.connections,
  config: { refreshMarginSeconds: 300, refreshMarginRatio: 0.5 },
  clock: { now: () => now },
});

// Only the names and the auth mode are read from these.
const integration = { metadata: { name: 'crm' }, spec: { provider: 'acme' } } as unknown as IntegrationResource;
const provider = { metadata: { name: 'acme' }, spec: { authMode: 'OAUTH2' } } as unknown as ProviderResource;
const iso = (ms: number) => new Date(ms).toISOString();

describe('the connection service', () => {
  it('re-authorizes: keeps the old refresh token when none is sent, recomputes nextRefreshAt, clears credential errors', async () => {
    const created = await createConnection(deps(), {
      namespace: bed.ns.name,
      integration,
      provider,
      connectionId: 'reauth-1',
      credentials: { type: 'OAUTH2', access_token: 'a1', refresh_token: 'r1', expires_at: iso(now + 3600_000), raw: {} },
      metadata: { plan: 'gold' },
    });
    const name = created.resource.metadata.name;
    expect(created.resource.status?.nextRefreshAt).toBe(iso(now + 3600_000 - 300_000));
    await bed.store.connections.updateConnectionStatus(bed.ns.name, name, ConnectionStatusWriter.Scheduler, (s) => ({
      ...s,
      refreshAttempts: 5,
      errors: [{ type: 'auth', logId: 'ev-1', message: 'refused', refreshFailure: 'permanent' }],
    }));

    now += 10_000;
    const saved = await reauthorize(deps(), bed.ns.name, 'crm', 'reauth-1', {
      type: 'OAUTH2',
      access_token: 'a2',
      expires_at: iso(now + 7200_000),
      raw: {},
    });
    expect(saved!.credentials).toMatchObject({ access_token: 'a2', refresh_token: 'r1' });
    expect(saved!.resource.status).toMatchObject({
      expiresAt: iso(now + 7200_000),
      nextRefreshAt: iso(now + 7200_000 - 300_000),
      refreshAttempts: 0,
      updatedAt: iso(now),
      errors: [],
    });
    expect(saved!.resource.spec.metadata).toEqual({ plan: 'gold' });
    expect(bed.store.connections.getConnection(bed.ns.name, 'crm', 'reauth-1')!.credentials.refresh_token).toBe('r1');

    // A refresh token sent with the new authorization replaces the old one.
    const again = await reauthorize(deps(), bed.ns.name, 'crm', 'reauth-1', {
      type: 'OAUTH2',
      access_token: 'a3',
      refresh_token: 'r3',
      raw: {},
    });
    expect(again!.credentials.refresh_token).toBe('r3');
    // No expiry: no expiresAt and no nextRefreshAt left from the old token.
    expect(again!.resource.status?.expiresAt).toBeUndefined();
    expect(again!.resource.status?.nextRefreshAt).toBeUndefined();

    expect(await reauthorize(deps(), bed.ns.name, 'crm', 'no-such', { type: 'OAUTH2', access_token: 'x', raw: {} })).toBeUndefined();
  });

  it('imports: creates, then replaces the credentials as sent and merges the metadata', async () => {
    const input = {
      namespace: bed.ns.name,
      integration,
      provider,
      connectionId: 'import-1',
      credentials: { type: 'OAUTH2', access_token: 'i1', refresh_token: 'ir1', raw: {} },
      metadata: { a: 1 },
    };
    const first = await importConnection(deps(), input);
    expect(first.created).toBe(true);
    const second = await importConnection(deps(), {
      ...input,
      credentials: { type: 'OAUTH2', access_token: 'i2', raw: {} },
      metadata: { b: 2 },
    });
    expect(second.created).toBe(false);
    // An import states the credentials: what was not sent is not kept.
    expect(second.connection.credentials).toEqual({ type: 'OAUTH2', access_token: 'i2', raw: {} });
    expect(bed.store.connections.getConnection(bed.ns.name, 'crm', 'import-1')!.resource.spec.metadata).toEqual({ a: 1, b: 2 });
  });

  it('deletes a connection and says whether there was one', async () => {
    const refreshLock = new RefreshLock(new Leases(kc), 'test', 30);
    await createConnection(deps(), {
      namespace: bed.ns.name,
      integration,
      provider,
      connectionId: 'gone-1',
      credentials: { type: 'OAUTH2', access_token: 'g', raw: {} },
    });
    expect(
      await deleteConnection({ connections: bed.store.connections, catalog: bed.store.catalog, refreshLock }, bed.ns.name, 'crm', 'gone-1'),
    ).toBe(true);
    expect(bed.store.connections.getConnection(bed.ns.name, 'crm', 'gone-1')).toBeUndefined();
    expect(
      await deleteConnection({ connections: bed.store.connections, catalog: bed.store.catalog, refreshLock }, bed.ns.name, 'crm', 'gone-1'),
    ).toBe(false);
  });
});
