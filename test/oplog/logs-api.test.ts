/**
 * The durable operation log through the REST API, against a real control plane and a real OAuth 2
 * server (oidc-provider): a refresh refused by the provider (revoked grant) is an entry whose ID is
 * the connection's `errors[].log_id`; three days later (the clock moves) it is still there, by ID
 * and by search; past the retention age it is trimmed. Entries live in a ConfigMap owned by the
 * Connection (gone with it) or in the Environment's ring; bad queries are 4xx.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { connectionObjectName } from '../../src/k8s/names.js';
import { oplogObjectName } from '../../src/k8s/oplog-store.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { bedForFile } from '../support/file-bed.js';
import { startOAuthServersBed } from '../support/oauth-bed.js';
import { startOplogServer } from './support.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const client = { clientId: 'latchkey-oplog-test', clientSecret: 'oplog-test-secret-0123456789abcdef' };
const INTEGRATION = 'oplog-app';
const DAY = 86_400_000;

const bed = bedForFile(async () => {
  const oauth = await startOAuthServersBed(kc, {
    namespace: 'oplog-api',
    client,
    integration: INTEGRATION,
    accessTokenTtl: 120,
    provider: { tokenRequestAuthMethod: 'body' },
  });
  // Keep only 3 entries beyond the age limit, so the test can see age-based trimming.
  const lk = await startOplogServer(kc, oauth.namespace, oauth.env.secretKey, {
    LATCHKEY_OPLOG_KEEP_ENTRIES: '3',
    LATCHKEY_OPLOG_KEEP_DAYS: '7',
  });
  oauth.alsoStop(() => lk.close());
  const store = lk.ctx;
  await eventually(
    () =>
      store.catalog.getIntegration(oauth.namespace, INTEGRATION) &&
      store.catalog.getProvider(oauth.providerName) &&
      store.catalog.listEnvironments(oauth.namespace).length,
  );
  await eventually(async () => (await lk.call('GET', '/providers')).status === 200);
  return { ...oauth, lk };
});

async function importRevoked(connectionId: string) {
  const tokens = await bed.oidc.mintTokens({ clientId: client.clientId });
  const res = await bed.lk.call('POST', '/connections', {
    body: {
      provider_config_key: INTEGRATION,
      connection_id: connectionId,
      end_user: { id: `user-${connectionId}`, email: `${connectionId}@example.test` },
      credentials: {
        type: 'OAUTH2',
        access_token: tokens.accessToken,
        refresh_token: tokens.refreshToken,
        expires_at: new Date(bed.lk.clock.now() - 60_000).toISOString(),
      },
    },
  });
  expect(res.status).toBe(201);
  await eventually(() => bed.lk.ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId));
  await bed.oidc.revoke(tokens.refreshToken, client);
  return tokens;
}

const getPath = (id: string) => `/connections/${encodeURIComponent(id)}?provider_config_key=${INTEGRATION}`;

describe('operation log', () => {
  it("a re-authorization failure 3 days ago still shows, by log_id, with the provider's answer and no secret", async () => {
    const tokens = await importRevoked('reauth-1');
    const failed = await bed.lk.call('GET', getPath('reauth-1'));
    expect(failed.status).toBe(424);
    const stored = await eventually(() => {
      const c = bed.lk.ctx.connections.getConnection(bed.ns.name, INTEGRATION, 'reauth-1');
      return c?.resource.status?.errors?.length ? c : undefined;
    });
    const logId = stored.resource.status!.errors![0]!.logId;
    expect(logId.startsWith(`${stored.resource.metadata.name}.`)).toBe(true);
    expect(failed.body.error.message).toContain(logId);
    await bed.lk.ctx.oplog!.flush();

    bed.lk.clock.advance(3 * DAY);
    // Newer entries meanwhile (more than the count to keep): the failure stays because it is younger than 7 days.
    for (let i = 0; i < 4; i++) {
      bed.lk.ctx.oplog!.record({
        namespace: bed.ns.name,
        operation: 'proxy',
        outcome: 'failure',
        integration: INTEGRATION,
        connectionId: 'reauth-1',
        connection: { name: stored.resource.metadata.name, uid: stored.resource.metadata.uid },
        messages: [`upstream answered 500 (${i})`],
      });
    }
    await bed.lk.ctx.oplog!.flush();

    const list = await bed.lk.call('GET', `/connections?connectionId=reauth-1`);
    expect(list.body.connections[0].errors).toEqual([{ type: 'auth', log_id: logId }]);
    const entry = await bed.lk.call('GET', `/logs/${logId}`);
    expect(entry.status).toBe(200);
    expect(entry.body).toMatchObject({
      id: logId,
      operation: 'refresh',
      step: 'fetch',
      outcome: 'failure',
      integration: INTEGRATION,
      connection_id: 'reauth-1',
      end_user_id: 'user-reauth-1',
    });
    expect(Date.now() + 3 * DAY - Date.parse(entry.body.time)).toBeGreaterThan(3 * DAY - 60_000);
    expect(entry.body.messages[0]).toMatch(/^Token refresh failed \(reauthorization required\)/);
    expect(entry.body.messages.join('\n')).toContain('invalid_grant');
    const text = JSON.stringify(entry.body);
    for (const secret of [tokens.accessToken, tokens.refreshToken, client.clientSecret]) expect(text).not.toContain(secret);

    const search = await bed.lk.call('GET', `/logs?integration=${INTEGRATION}&connection_id=reauth-1&outcome=failure&operation=refresh`);
    expect(search.status).toBe(200);
    expect(search.body.logs.map((l: { id: string }) => l.id)).toEqual([logId]);

    // Past the age limit, and no longer among the newest 3: trimmed on the next write.
    bed.lk.clock.advance(5 * DAY);
    bed.lk.ctx.oplog!.record({
      namespace: bed.ns.name,
      operation: 'proxy',
      outcome: 'success',
      connection: { name: stored.resource.metadata.name },
      connectionId: 'reauth-1',
      integration: INTEGRATION,
      messages: ['later'],
    });
    await bed.lk.ctx.oplog!.flush();
    expect((await bed.lk.call('GET', `/logs/${logId}`)).status).toBe(404);
    const cm = await core.readNamespacedConfigMap({ namespace: bed.ns.name, name: oplogObjectName(stored.resource.metadata.name) });
    expect(cm.metadata!.ownerReferences![0]).toMatchObject({ kind: 'Connection', uid: stored.resource.metadata.uid });
    // The four from day 3 are younger than 7 days: kept beyond the count of 3.
    expect(cm.data!['entries.jsonl']!.split('\n')).toHaveLength(5);
    expect(cm.data!['entries.jsonl']).not.toContain(logId);
  });

  it('searches by filters and pages with a cursor; entries without a connection go to the environment ring', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      bed.lk.clock.advance(1000);
      ids.push(
        bed.lk.ctx.oplog!.record({
          namespace: bed.ns.name,
          operation: 'authorization',
          step: i % 2 ? 'callback' : 'start',
          outcome: i % 2 ? 'failure' : 'success',
          integration: INTEGRATION,
          endUserId: 'ring-user',
          messages: [`attempt ${i} state=sealed-state-value-${i}`],
        }),
      );
    }
    await bed.lk.ctx.oplog!.flush();
    expect(ids.every((id) => id.startsWith('environment.'))).toBe(true);
    const ring = await core.readNamespacedConfigMap({ namespace: bed.ns.name, name: oplogObjectName('environment') });
    expect(ring.metadata!.ownerReferences![0]).toMatchObject({ kind: 'Environment', name: bed.env.name });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: any } = await bed.lk.call(
        'GET',
        `/logs?end_user_id=ring-user&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.logs.map((l: { id: string }) => l.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const failures = await bed.lk.call('GET', `/logs?end_user_id=ring-user&outcome=failure`);
    expect(failures.body.logs).toHaveLength(3);
    expect(JSON.stringify(failures.body)).not.toContain('sealed-state-value');
    const from = failures.body.logs[1].time;
    const ranged = await bed.lk.call('GET', `/logs?end_user_id=ring-user&from=${encodeURIComponent(from)}`);
    expect(ranged.body.logs.every((l: { time: string }) => l.time >= from)).toBe(true);
    expect(ranged.body.logs.length).toBeLessThan(7);
  });

  it('answers 4xx for bad queries, unknown IDs and a missing key', async () => {
    expect((await bed.lk.call('GET', '/logs?operation=nonsense')).status).toBe(400);
    expect((await bed.lk.call('GET', '/logs?cursor=not-a-cursor')).body.error.code).toBe('invalid_query');
    expect((await bed.lk.call('GET', '/logs?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
    expect((await bed.lk.call('GET', '/logs?unknown=1')).status).toBe(400);
    const unknown = await bed.lk.call('GET', `/logs/${connectionObjectName(INTEGRATION, 'nobody')}.000000000000000000000`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('unknown_log');
    expect((await bed.lk.call('GET', '/logs/..%2F..%2Fsecrets')).status).toBe(404);
    expect((await bed.lk.call('GET', '/logs', { key: 'sk_wrong' })).status).toBe(401);
  });

  it("records imports and deletions; the connection's log object goes with the connection", async () => {
    await importRevoked('to-delete');
    const name = connectionObjectName(INTEGRATION, 'to-delete');
    await bed.lk.ctx.oplog!.flush();
    const imported = await bed.lk.call('GET', `/logs?integration=${INTEGRATION}&connection_id=to-delete&operation=import`);
    expect(imported.body.logs).toHaveLength(1);
    await core.readNamespacedConfigMap({ namespace: bed.ns.name, name: oplogObjectName(name) });
    expect((await bed.lk.call('DELETE', getPath('to-delete'))).status).toBe(200);
    await bed.lk.ctx.oplog!.flush();
    const deleted = await bed.lk.call('GET', `/logs?integration=${INTEGRATION}&connection_id=to-delete&operation=deletion`);
    expect(deleted.body.logs).toHaveLength(1);
    // kube-controller-manager's garbage collector removes the owned log object.
    await eventually(async () => {
      try {
        await core.readNamespacedConfigMap({ namespace: bed.ns.name, name: oplogObjectName(name) });
        return false;
      } catch {
        return true;
      }
    }, 90_000);
  });

  it('an entry said to be of a just-created connection whose log already exists is appended, not lost', async () => {
    // An import creates the connection's log object without reading first (it cannot exist yet); if it
    // does exist after all (an entry written before, a re-import), the write falls back to read and replace.
    await importRevoked('created-twice');
    await bed.lk.ctx.oplog!.flush();
    const r = bed.lk.ctx.connections.getConnection(bed.ns.name, INTEGRATION, 'created-twice')!.resource;
    bed.lk.ctx.oplog!.record({
      namespace: bed.ns.name,
      operation: 'import',
      outcome: 'success',
      integration: INTEGRATION,
      connectionId: 'created-twice',
      connection: { name: r.metadata.name, uid: r.metadata.uid, created: true },
      messages: ['second entry marked as of a created connection'],
    });
    await bed.lk.ctx.oplog!.flush();
    const logs = await bed.lk.call('GET', `/logs?integration=${INTEGRATION}&connection_id=created-twice&operation=import`);
    expect(logs.body.logs).toHaveLength(2);
    const cm = await core.readNamespacedConfigMap({ namespace: bed.ns.name, name: oplogObjectName(r.metadata.name) });
    expect(cm.data!['entries.jsonl']!.split('\n')).toHaveLength(2);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await fetch(`${bed.lk.url}/openapi.json`).then((r) => r.json())) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/logs', '/logs/{logId}']));
  });
});
