/**
 * Server replicas with a bounded connection cache (LATCHKEY_CONNECTION_CACHE_ENTRIES=1: every other
 * read a miss), through the REST API: a real control plane, a real oidc-provider (refresh-token
 * rotation with reuse detection: a replica that refreshed with a stale refresh token would get a 424).
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { importOAuth2 } from '../support/fixtures.js';
import { bedForFile } from '../support/file-bed.js';
import { startOAuthServersBed } from '../support/oauth-bed.js';
import type { Replica } from '../support/replica.js';

const kc = testKubeConfig();
const client: TestClient = { clientId: 'latchkey-bounded', clientSecret: 'bounded-client-secret-0123456789abcdef' };
const INTEGRATION = 'bounded-oauth';
const KEYS = 'bounded-keys';
const bed = bedForFile(async () => {
  const started = await startOAuthServersBed(kc, {
    namespace: 'bounded-server',
    client,
    integration: INTEGRATION,
    accessTokenTtl: 3600,
    environment: { api: { integrationWrites: true } },
    before: async ({ namespace, alsoStop }) => {
      alsoStop(() => deleteProvider(kc, `keys-${namespace}`));
      await applyProvider(kc, `keys-${namespace}`, {
        displayName: 'Keys',
        authMode: 'API_KEY',
        proxy: { baseUrl: 'https://api.example.com', headers: { 'x-api-key': '${apiKey}' } },
      });
      await createIntegration(kc, namespace, KEYS, { provider: `keys-${namespace}` });
    },
    kubeconfigs: [kc, kc],
    replica: { config: { connectionCacheEntries: 1 } },
    ready: (store, namespace) => store.catalog.getIntegration(namespace, KEYS),
  });
  for (const r of started.servers) expect(r.ctx.caches.bounded).toBe(true);
  return started;
});
const a = () => bed.servers[0]!;
const b = () => bed.servers[1]!;

const fetchVia = (r: Replica, connectionId: string, query = '') =>
  r.call('GET', `/connections/${encodeURIComponent(connectionId)}?provider_config_key=${INTEGRATION}${query}`);

it('a refresh on one replica is what the other answers next, though it had the old token in memory', async () => {
  const imported = await importOAuth2(a().ctx, bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName);
  const { connectionId } = imported.conn.resource.spec;
  const first = await fetchVia(b(), connectionId);
  expect(first.status).toBe(200);
  expect(first.body.credentials.access_token).toBe(imported.accessToken);
  expect(b().ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId)).toBeDefined();

  const forced = await fetchVia(a(), connectionId, '&force_refresh=true');
  expect(forced.status).toBe(200);
  const refreshed = forced.body.credentials.access_token;
  expect(refreshed).not.toBe(imported.accessToken);
  // B's kept copy is dropped by the watch's event; its next answers carry the new token.
  await eventually(async () => (await fetchVia(b(), connectionId)).body.credentials.access_token === refreshed || undefined);

  // B refreshes in turn (forced): with the rotated refresh token, or the provider would answer 424.
  const again = await fetchVia(b(), connectionId, '&force_refresh=true');
  expect(again.status).toBe(200);
  expect(again.body.credentials.access_token).not.toBe(refreshed);
  await eventually(
    async () => (await fetchVia(a(), connectionId)).body.credentials.access_token === again.body.credentials.access_token || undefined,
  );
});

it('an expired token fetched through a replica that never saw the connection is refreshed once', async () => {
  const imported = await importOAuth2(a().ctx, bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName, {
    expiresInMs: -60_000,
  });
  const { connectionId } = imported.conn.resource.spec;
  const [x, y] = await Promise.all([fetchVia(b(), connectionId), fetchVia(a(), connectionId)]);
  expect([x.status, y.status]).toEqual([200, 200]);
  expect(x.body.credentials.access_token).not.toBe(imported.accessToken);
  expect(y.body.credentials.access_token).toBe(x.body.credentials.access_token);
});

it('lists, pages, filters and deletes through replicas that keep one connection', async () => {
  const ids = ['k1', 'k2', 'k3', 'k4', 'k5'];
  for (const id of ids) {
    const made = await a().call('POST', '/connections', {
      body: {
        provider_config_key: KEYS,
        connection_id: id,
        credentials: { type: 'API_KEY', apiKey: `key-${id}` },
        end_user: { id: id === 'k3' ? 'carol' : 'dave' },
      },
    });
    expect(made.status).toBeLessThan(300);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: any } = await b().call(
      'GET',
      `/connections?integrationId=${KEYS}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(page.status).toBe(200);
    seen.push(...page.body.connections.map((c: { connection_id: string }) => c.connection_id));
    cursor = page.body.next_cursor;
  } while (cursor);
  expect(seen).toEqual(ids);
  const carol = await b().call('GET', `/connections?endUserId=carol`);
  expect(carol.body.connections.map((c: { connection_id: string }) => c.connection_id)).toEqual(['k3']);

  const fetched = await b().call('GET', `/connections/k2?provider_config_key=${KEYS}`);
  expect(fetched.body.credentials.apiKey).toBe('key-k2');
  expect((await a().call('DELETE', `/connections/k2?provider_config_key=${KEYS}`)).status).toBe(200);
  await eventually(async () => (await b().call('GET', `/connections/k2?provider_config_key=${KEYS}`)).status === 404 || undefined);
  // An integration with connections cannot be deleted; the count is read from the API server.
  const refused = await b().call('DELETE', `/integrations/${KEYS}`);
  expect(refused.status).toBe(409);
  expect(refused.body.error.message).toMatch(/4 connection/);
});
