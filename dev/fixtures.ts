/** Objects tests need in their namespace: an Environment with keys, Providers, Integrations. */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, LABELS, VERSION, type EnvironmentSpec, type IntegrationSpec, type ProviderSpec } from '../src/k8s/resources.js';

export interface TestEnvironment {
  namespace: string;
  name: string;
  secretKey: string;
  webhookSigningKey: string;
}

export async function createEnvironment(
  kc: KubeConfig,
  namespace: string,
  spec: Partial<EnvironmentSpec> = {},
  name = 'test',
): Promise<TestEnvironment> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const webhookSigningKey = `whsec_${randomBytes(24).toString('base64')}`;
  const secretName = `${name}-keys`;
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: secretName, labels: { [LABELS.watch]: 'true' } }, stringData: { secretKey, webhookSigningKey } },
  });
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'environments',
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Environment',
      metadata: { name },
      spec: { secretRef: { name: secretName }, ...spec },
    },
  });
  return { namespace, name, secretKey, webhookSigningKey };
}

/** Creates (or replaces) a cluster-scoped Provider. Use names unique to the test file. */
export async function applyProvider(kc: KubeConfig, name: string, spec: ProviderSpec): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const body = { apiVersion: `${GROUP}/${VERSION}`, kind: 'Provider', metadata: { name }, spec };
  try {
    await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', body });
  } catch {
    const current = (await custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', name })) as {
      metadata: object;
    };
    await custom.replaceClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'providers',
      name,
      body: { ...body, metadata: current.metadata },
    });
  }
}

export async function deleteProvider(kc: KubeConfig, name: string): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  await custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', name }).catch(() => undefined);
}

/** Creates an Integration and, when client credentials are given, its labelled client Secret. */
export async function createIntegration(
  kc: KubeConfig,
  namespace: string,
  name: string,
  spec: Omit<IntegrationSpec, 'clientSecretRef'>,
  client?: Record<string, string>,
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  let clientSecretRef: IntegrationSpec['clientSecretRef'];
  if (client) {
    clientSecretRef = { name: `${name}-client` };
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: clientSecretRef.name, labels: { [LABELS.watch]: 'true' } }, stringData: client },
    });
  }
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'integrations',
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Integration',
      metadata: { name },
      spec: { ...spec, ...(clientSecretRef ? { clientSecretRef } : {}) },
    },
  });
}
