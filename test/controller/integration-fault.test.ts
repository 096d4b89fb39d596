/**
 * An Integration whose client the provider refuses (oidc-provider answering `invalid_client` to a
 * wrong client secret) against the real controller: the fault is the Integration's
 * (`Ready=False, ClientRejected`), no connection is marked as needing re-authorization and no
 * refresh webhook is queued; once the operator fixes the Secret the connections refresh again.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { ConnectionCondition, IntegrationReason } from '../../src/domain/conditions.js';
import type { ConnectionResource, IntegrationResource } from '../../src/k8s/resources.js';
import { WEBHOOK_DELIVERY_LABEL } from '../../src/k8s/webhook-outbox.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment } from '../../dev/fixtures.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { importOAuth2 } from '../support/fixtures.js';
import { condition, readCustom } from '../support/kube.js';
import { startOAuthBed, type OAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const client: TestClient = { clientId: 'latchkey-fault', clientSecret: 'fault-client-secret-0123456789' };
const INTEGRATION = 'misconfigured';
let bed: OAuthBed;
let replica: Replica;

beforeAll(async () => {
  bed = await startOAuthBed(kc, {
    namespace: 'client-fault',
    client,
    integration: INTEGRATION,
    accessTokenTtl: 10,
    integrationClientSecret: 'wrong-secret-000000000000',
  });
  await createEnvironment(kc, bed.ns.name, { webhooks: { url: 'http://127.0.0.1:9/hooks' } });
  replica = await startReplica(kc, { namespaces: [bed.ns.name], components: ['controller'], config: { leaderElection: false } });
  await eventually(() => replica.ctx.catalog.getIntegration(bed.ns.name, INTEGRATION));
});

afterAll(async () => {
  await replica?.stop();
  await bed?.close();
});

it('marks the Integration, not the end users, and resumes when its Secret is fixed', async () => {
  const store = replica.ctx;
  const imported = await Promise.all(
    [0, 1].map(() => importOAuth2(store, bed.oidc, client, bed.ns.name, INTEGRATION, bed.providerName, { expiresInMs: 2_000 })),
  );
  const integration = await eventually(
    async () => {
      const i = await readCustom<IntegrationResource>(kc, 'integrations', bed.ns.name, INTEGRATION);
      return condition(i, 'Ready')?.reason === IntegrationReason.ClientRejected ? i : undefined;
    },
    30_000,
    200,
  );
  expect(condition(integration, 'Ready')).toMatchObject({ status: 'False' });
  expect(condition(integration, 'Ready')!.message).toMatch(/invalid_client/);
  const refusals = bed.oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token' && c.status === 401).length;
  expect(refusals).toBeGreaterThanOrEqual(1);

  for (const { conn } of imported) {
    const c = await readCustom<ConnectionResource>(kc, 'connections', bed.ns.name, conn.resource.metadata.name);
    expect(condition(c, ConnectionCondition.NeedsReauthorization)?.status).not.toBe('True');
    expect(c.metadata.annotations?.['latchkey.dev/reauthorization-credentials-version']).toBeUndefined();
  }
  const queued = await core.listNamespacedConfigMap({ namespace: bed.ns.name, labelSelector: WEBHOOK_DELIVERY_LABEL });
  expect(queued.items).toHaveLength(0);

  // The operator fixes the client secret: every connection of the Integration refreshes again.
  const secretName = integration.spec.clientSecretRef!.name;
  const secret = await core.readNamespacedSecret({ namespace: bed.ns.name, name: secretName });
  await core.replaceNamespacedSecret({
    namespace: bed.ns.name,
    name: secretName,
    body: { ...secret, data: { ...secret.data, clientSecret: Buffer.from(client.clientSecret).toString('base64') } },
  });
  for (const { conn, accessToken } of imported) {
    await eventually(
      () => {
        const c = store.connections.getConnectionByName(bed.ns.name, conn.resource.metadata.name);
        return c && c.credentials.access_token !== accessToken;
      },
      30_000,
      200,
    );
  }
  await eventually(
    async () => condition(await readCustom<IntegrationResource>(kc, 'integrations', bed.ns.name, INTEGRATION), 'Ready')?.status === 'True',
  );
});
