import { CustomObjectsApi } from '@kubernetes/client-node';
import { apiMessage, statusOf } from '../../src/k8s/errors.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { testKubeConfig } from '../../dev/cluster.js';
import { namespaceForFile } from '../support/file-bed.js';
import { customObject } from '../support/kube.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const ns = namespaceForFile(kc, 'crds');

/** Creates a Connection exactly as given (the schema's checks are what is tested). */
const createConnection = (body: object) =>
  custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections', body });

async function rejection(p: Promise<unknown>): Promise<{ status: number | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    return { status: statusOf(err), message: apiMessage(err) };
  }
  throw new Error('the API server accepted the object');
}

const createProvider = (name: string, spec: Record<string, unknown>) =>
  custom.createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: 'providers',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Provider', metadata: { name }, spec },
  });

const connection = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'Connection',
  metadata: { name },
  spec,
});

describe('custom resource schemas', () => {
  it('accepts a complete OAUTH2 provider and keeps every field', async () => {
    const name = `p-ok-${ns.name}`;
    await createProvider(name, {
      displayName: 'Example',
      authMode: 'OAUTH2',
      categories: ['dev-tools'],
      authorizationUrl: 'https://example.com/authorize',
      tokenUrl: 'https://example.com/token',
      connectionConfiguration: [{ name: 'subdomain' }],
      proxy: {
        baseUrl: 'https://api.example.com',
        decompress: true,
        paginate: {
          type: 'cursor',
          cursorPathInResponse: 'next',
          cursorNameInRequest: 'cursor',
          limitNameInRequest: 'limit',
          responsePath: 'items',
        },
      },
    });
    const got = (await custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', name })) as {
      spec: { proxy: { paginate: { responsePath: string } } };
    };
    expect(got.spec.proxy.paginate.responsePath).toBe('items');
    await custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', name });
  });

  it('rejects a provider without authMode, naming the field', async () => {
    const r = await rejection(createProvider(`p-missing-${ns.name}`, { displayName: 'X' }));
    expect(r.status).toBe(422);
    expect(r.message).toMatch(/spec\.authMode: Required value/);
  });

  it('rejects an unknown authMode and lists the allowed values', async () => {
    const r = await rejection(createProvider(`p-bad-${ns.name}`, { displayName: 'X', authMode: 'MAGIC' }));
    expect(r.status).toBe(422);
    expect(r.message).toMatch(/spec\.authMode: Unsupported value: "MAGIC"/);
    expect(r.message).toContain('"OAUTH2"');
  });

  it('rejects an OAUTH2 provider without token URL (CEL rule)', async () => {
    const r = await rejection(
      createProvider(`p-cel-${ns.name}`, { displayName: 'X', authMode: 'OAUTH2', authorizationUrl: 'https://x/a' }),
    );
    expect(r.status).toBe(422);
    expect(r.message).toContain('OAUTH2 and OAUTH1 providers need authorizationUrl and tokenUrl');
  });

  it("rejects a change to a connection's integration or connection ID", async () => {
    const base = { integration: 'github', provider: 'github', connectionId: 'abc', id: 7, authMode: 'OAUTH2' };
    const created = (await createConnection(connection('immut', base))) as { metadata: Record<string, unknown> };
    for (const [field, value, message] of [
      ['integration', 'gitlab', 'integration is immutable'],
      ['connectionId', 'other', 'connectionId is immutable'],
      ['id', 8, 'id is immutable'],
    ] as const) {
      const r = await rejection(
        custom.replaceNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns.name,
          plural: 'connections',
          name: 'immut',
          body: { ...connection('immut', { ...base, [field]: value }), metadata: created.metadata },
        }),
      );
      expect(r.status).toBe(422);
      expect(r.message).toContain(message);
    }
  });

  it('rejects a connection with a missing required field and an overlong name', async () => {
    const missing = await rejection(
      createConnection(connection('nointeg', { provider: 'github', connectionId: 'x', id: 1, authMode: 'OAUTH2' })),
    );
    expect(missing.message).toMatch(/spec\.integration: Required value/);
    const long = await rejection(
      createConnection(
        connection('x'.repeat(70), { integration: 'github', provider: 'github', connectionId: 'x', id: 1, authMode: 'OAUTH2' }),
      ),
    );
    expect(long.message).toContain('at most 63 characters');
  });

  it('rejects an environment webhook URL that is not http(s)', async () => {
    const r = await rejection(
      custom.createNamespacedCustomObject(
        customObject(ns.name, 'environments', {
          kind: 'Environment',
          metadata: { name: 'env' },
          spec: { secretRef: { name: 's' }, webhooks: { url: 'ftp://x' } },
        }),
      ),
    );
    expect(r.message).toContain('webhook url must be an http(s) URL');
  });

  it("records a Connection's conditions as one field in managedFields, not every field of every condition", async () => {
    const target = { group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections' };
    const created = (await custom.createNamespacedCustomObject({
      ...target,
      body: connection('conds', { integration: 'github', provider: 'github', connectionId: 'conds', id: 1, authMode: 'OAUTH2' }),
    })) as { metadata: Record<string, unknown> };
    const condition = (type: string) => ({
      type,
      status: 'True',
      observedGeneration: 1,
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: type,
      message: `${type} holds.`,
    });
    const written = (await custom.replaceNamespacedCustomObjectStatus({
      ...target,
      name: 'conds',
      body: {
        ...connection('conds', {}),
        metadata: created.metadata,
        status: { conditions: [condition('Ready'), condition('CredentialsValid')] },
      },
    })) as {
      status: { conditions: Array<{ type: string }> };
      metadata: { managedFields: Array<{ subresource?: string; fieldsV1: unknown }> };
    };
    // The whole list is kept as written (kubectl's Ready and Reason columns read it by type).
    expect(written.status.conditions.map((c) => c.type)).toEqual(['Ready', 'CredentialsValid']);
    const status = written.metadata.managedFields.find((f) => f.subresource === 'status');
    // A list keyed by type made this {"k:{\"type\":\"Ready\"}": {"f:message": {}, ...}, ...}: ~600 bytes per Connection in etcd.
    expect(status?.fieldsV1).toEqual({ 'f:status': { '.': {}, 'f:conditions': {} } });
  });
});
