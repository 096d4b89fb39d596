/**
 * Connection configuration the Integration sets (`setBy: integration`), against a real control plane: the CRDs'
 * rules (anyHost where the client secret follows only on such a key; the Integration's keys are key names) and the
 * Integration reconciler's verdict on `spec.connectionConfig` (a required value missing, one its rule refuses, a key
 * not the Integration's to set), each naming the key and never the value.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { apiMessage, statusOf } from '../../src/k8s/errors.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
let bed: ControllerBed;

const selfManaged = (host: Record<string, unknown>) => ({
  displayName: 'Self-managed server',
  authMode: 'OAUTH2' as const,
  authorizationUrl: 'https://${connectionConfig.host}/rest/oauth2/latest/authorize',
  tokenUrl: 'https://${connectionConfig.host}/rest/oauth2/latest/token',
  connectionConfiguration: [{ name: 'host', required: true, ...host }],
  proxy: { baseUrl: 'https://${connectionConfig.host}' },
});

/** The API server's refusal of a dry-run create (undefined when it accepts). */
async function refusal(plural: string, body: Record<string, unknown>, namespace?: string): Promise<string | undefined> {
  const object = { apiVersion: `${GROUP}/${VERSION}`, ...body };
  try {
    if (namespace)
      await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, body: object, dryRun: 'All' });
    else await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural, body: object, dryRun: 'All' });
    return undefined;
  } catch (err) {
    return `${statusOf(err)} ${apiMessage(err)}`;
  }
}

beforeAll(async () => {
  bed = await startControllerBed(kc, 'integration-config');
});

afterAll(async () => {
  await bed?.close();
});

describe('the CRDs', () => {
  it('refuse anyHost in OAUTH2 on a key the end user sets, and accept it on a key the Integration sets', async () => {
    const provider = (host: Record<string, unknown>) => ({
      kind: 'Provider',
      metadata: { name: `any-host-${bed.ns.name}` },
      spec: selfManaged(host),
    });
    expect(await refusal('providers', provider({ anyHost: true }))).toMatch(
      /^422 .*anyHost is only for modes that send no integration secret/,
    );
    expect(await refusal('providers', provider({ anyHost: true, setBy: 'integration' }))).toBeUndefined();
    expect(await refusal('providers', provider({ anyHost: true, setBy: 'end-user' }))).toMatch(/^422 .*setBy/);
  });

  it("refuse an Integration's configuration key that is not a key name", async () => {
    const integration = (connectionConfig: Record<string, string>) => ({
      kind: 'Integration',
      metadata: { name: 'keys' },
      spec: { provider: 'jira-data-center', connectionConfig },
    });
    expect(await refusal('integrations', integration({ host: 'jira.example.com' }), bed.ns.name)).toBeUndefined();
    expect(await refusal('integrations', integration({ 'not a key': 'x' }), bed.ns.name)).toMatch(/^422 .*configuration key names/);
  });
});

describe("the Integration's Ready condition", () => {
  it('names a missing value, a value its rule refuses and a key not the Integration’s, never the value; Ready once set', async () => {
    const p = await bed.provider('dc', selfManaged({ anyHost: true, setBy: 'integration' }));
    const client = { clientId: 'c', clientSecret: 's' };
    await createIntegration(kc, bed.ns.name, 'unset', { provider: p }, client);
    const unset = (await bed.readyOf('integrations', 'unset', 'ConnectionConfigMissing')).ready;
    expect(unset).toMatchObject({ status: 'False' });
    expect(unset.message).toContain('spec.connectionConfig.host is required');

    await createIntegration(kc, bed.ns.name, 'address', { provider: p, connectionConfig: { host: '10.1.2.3' } }, client);
    const address = (await bed.readyOf('integrations', 'address', 'InvalidConnectionConfig')).ready;
    expect(address.message).toContain('spec.connectionConfig.host: "host" must be a host name');
    expect(address.message).not.toContain('10.1.2.3');

    await createIntegration(
      kc,
      bed.ns.name,
      'stray',
      { provider: p, connectionConfig: { host: 'jira.example.com', region: 'eu' } },
      client,
    );
    const stray = (await bed.readyOf('integrations', 'stray', 'InvalidConnectionConfig')).ready;
    expect(stray.message).toContain('spec.connectionConfig.region is not a key this Provider lets the Integration set');

    await createIntegration(kc, bed.ns.name, 'set', { provider: p, connectionConfig: { host: 'jira.example.com' } }, client);
    expect((await bed.readyOf('integrations', 'set', 'Ready')).ready.status).toBe('True');
  });
});
