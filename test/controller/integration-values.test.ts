/**
 * The values a Provider needs of an Integration besides its client, checked ahead against a real control plane:
 * Amazon Selling Partner's `application_id` (`requiredAuthorizationParams`, the Integration's `authorizationParams`)
 * and eBay's RuName (`redirectUriIsName`, the Integration's `redirectUriName`). Without one the Integration is not
 * Ready (`IntegrationValueMissing`, naming the field), and a connect attempt through the real Connect route is
 * refused with 409 `integration_not_configured` before it starts, as one without its client certificate is; with
 * it, the start goes ahead and the provider is sent the value.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';
import { IntegrationReason } from '../../src/domain/conditions.js';
import { catalogSpec } from '../support/catalog-files.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';
import { sealSession } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const CLIENT = { clientId: 'values-client', clientSecret: 'values-client-secret-0123' };
const APPLICATION_ID = 'amzn1.sp.solution.0123abcd-4567-89ef-0123-456789abcdef';
const RU_NAME = 'Acme_Inc-AcmeInc-AcmeAp-abcdefgh';
let bed: ControllerBed;
let env: TestEnvironment;
let server: Replica;

const INTEGRATIONS = ['amazon-missing', 'amazon-set', 'ebay-missing', 'ebay-set'];

beforeAll(async () => {
  bed = await startControllerBed(kc, 'integration-values');
  env = await createEnvironment(kc, bed.ns.name, { mode: 'development' });
  const amazon = await bed.provider('amazon-sp', catalogSpec('amazon-selling-partner'));
  const ebay = await bed.provider('ebay', catalogSpec('ebay'));
  await createIntegration(kc, bed.ns.name, 'amazon-missing', { provider: amazon }, CLIENT);
  await createIntegration(
    kc,
    bed.ns.name,
    'amazon-set',
    { provider: amazon, authorizationParams: { application_id: APPLICATION_ID } },
    CLIENT,
  );
  await createIntegration(kc, bed.ns.name, 'ebay-missing', { provider: ebay }, CLIENT);
  await createIntegration(kc, bed.ns.name, 'ebay-set', { provider: ebay, redirectUriName: RU_NAME }, CLIENT);
  server = await startReplica(kc, { namespaces: [bed.ns.name], components: ['server'], selfBaseUrl: true });
  await eventually(
    () => INTEGRATIONS.every((i) => server.ctx.catalog.getIntegration(bed.ns.name, i)) && server.ctx.catalog.getProvider(ebay),
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await bed?.close();
});

const start = async (integration: string, connectionConfig: Record<string, string> = {}) => {
  const session = sealSession(env.secretKey, { namespace: bed.ns.name, endUser: { id: 'seller-1' }, allowedIntegrations: INTEGRATIONS });
  const res = await fetch(`${server.url}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration, connectionConfig }),
  });
  return { status: res.status, body: (await res.json()) as { data?: { url: string }; error?: { code: string; message: string } } };
};

const AMAZON_CONFIG = { sellerCentralHost: 'sellercentral.amazon.com' };

describe('an Integration without a value its Provider needs', () => {
  it('is not Ready, the condition naming the field to set', async () => {
    const amazon = (await bed.readyOf('integrations', 'amazon-missing', IntegrationReason.IntegrationValueMissing)).ready;
    expect(amazon.status).toBe('False');
    expect(amazon.message).toContain('spec.authorizationParams.application_id');
    const ebay = (await bed.readyOf('integrations', 'ebay-missing', IntegrationReason.IntegrationValueMissing)).ready;
    expect(ebay.status).toBe('False');
    expect(ebay.message).toContain('spec.redirectUriName');
    for (const set of ['amazon-set', 'ebay-set']) expect((await bed.readyOf('integrations', set)).ready.status).toBe('True');

    // The Connect UI leaves them out (the end user cannot fix them), and counts them.
    const session = sealSession(env.secretKey, { namespace: bed.ns.name, endUser: { id: 'seller-1' }, allowedIntegrations: INTEGRATIONS });
    const view = await eventually(async () => {
      const res = await fetch(`${server.url}/connect/api/session`, { headers: { authorization: `Bearer ${session}` } });
      const body = (await res.json()) as { data: { integrations: Array<{ id: string }>; unavailableCount?: number } };
      return body.data.unavailableCount === 2 ? body.data : undefined;
    });
    expect(view.integrations.map((i) => i.id).sort()).toEqual(['amazon-set', 'ebay-set']);
  });

  it('refuses a connect attempt with 409 integration_not_configured, naming the field, before it starts', async () => {
    const amazon = await start('amazon-missing', AMAZON_CONFIG);
    expect(amazon.status).toBe(409);
    expect(amazon.body.error).toMatchObject({ code: 'integration_not_configured' });
    expect(amazon.body.error!.message).toContain('spec.authorizationParams.application_id');
    const ebay = await start('ebay-missing');
    expect(ebay.status).toBe(409);
    expect(ebay.body.error).toMatchObject({ code: 'integration_not_configured' });
    expect(ebay.body.error!.message).toContain('spec.redirectUriName');
  });

  it('with the value set, the start goes ahead and the authorization URL carries it', async () => {
    const amazon = await start('amazon-set', AMAZON_CONFIG);
    expect(amazon.status).toBe(200);
    expect(new URL(amazon.body.data!.url).searchParams.get('application_id')).toBe(APPLICATION_ID);
    const ebay = await start('ebay-set');
    expect(ebay.status).toBe(200);
    expect(new URL(ebay.body.data!.url).searchParams.get('redirect_uri')).toBe(RU_NAME);
  });
});
