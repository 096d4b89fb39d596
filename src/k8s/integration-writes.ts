/**
 * Writes of Integrations and of the client Secrets the REST API makes for them (the integrations
 * API). Kept apart from store.ts: these are the only writes of Integration specs, and they reuse the
 * store's clients and caches so this process reads its own writes at once.
 */
import type { V1Secret } from './kubernetes-client.js';
import { compareAndSwap } from './cas.js';
import { alreadyExists, isConflict, isNotFound, objectNotFound, readOrUndefined } from './errors.js';
import {
  API_VERSION,
  ANNOTATIONS,
  GROUP,
  INTEGRATIONS,
  LABELS,
  VERSION,
  type IntegrationResource,
  type IntegrationSpec,
} from './resources.js';
import { createCustomObject, deleteCustomObject } from './custom-objects.js';
import type { StoreCaches } from './store-caches.js';

const FIELD_MANAGER = 'latchkey-api';

/** Name of the client Secret the API creates for an Integration (its own, owned by the Integration). */
export function integrationSecretName(integration: string): string {
  return `latchkey-integration-${integration}`;
}

/** Whether a Secret is the one the API made for this Integration (owned by it). */
export function isOwnedClientSecret(secret: V1Secret | undefined, integration: IntegrationResource): boolean {
  return (secret?.metadata?.ownerReferences ?? []).some((r) => r.uid === integration.metadata.uid && r.kind === INTEGRATIONS.kind);
}

/**
 * Creates an Integration and, when `clientData` is given, its client Secret (labelled to be watched,
 * owned by the Integration so deleting it with kubectl deletes the Secret too). A failed Secret
 * write deletes the Integration again.
 */
export async function createIntegrationWithSecret(
  store: StoreCaches,
  namespace: string,
  name: string,
  spec: Omit<IntegrationSpec, 'clientSecretRef'>,
  clientData: Record<string, string> | undefined,
  now: Date,
): Promise<IntegrationResource> {
  const body: IntegrationResource = {
    apiVersion: API_VERSION,
    kind: INTEGRATIONS.kind,
    metadata: { name, namespace, annotations: { [ANNOTATIONS.updatedAt]: now.toISOString() } },
    spec: { ...spec, ...(clientData ? { clientSecretRef: { name: integrationSecretName(name) } } : {}) },
  };
  const created = await createCustomObject(
    store.custom,
    { namespace, plural: INTEGRATIONS.plural, fieldManager: FIELD_MANAGER },
    body,
    `integration ${name}`,
  );
  store.integrations.remember(created);
  if (!clientData) return created;
  try {
    await putClientSecret(store, created, clientData);
    return created;
  } catch (err) {
    await deleteIntegrationObject(store, namespace, name).catch(() => undefined);
    if (isConflict(err)) throw alreadyExists(`Secret ${integrationSecretName(name)}`);
    throw err;
  }
}

/** Compare-and-swap update of an Integration's spec; stamps the updated-at annotation. */
export async function updateIntegrationSpec(
  store: StoreCaches,
  namespace: string,
  name: string,
  mutate: (spec: IntegrationSpec) => IntegrationSpec,
  now: Date,
): Promise<IntegrationResource> {
  const result = await compareAndSwap<IntegrationResource>({
    what: `integration ${namespace}/${name}`,
    readCached: () => store.integrations.get(name, namespace),
    readFresh: async () => {
      try {
        return (await store.custom.getNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: INTEGRATIONS.plural,
          name,
        })) as IntegrationResource;
      } catch (err) {
        if (isNotFound(err)) throw objectNotFound(`integration ${name}`);
        throw err;
      }
    },
    mutate: (current) => ({
      ...current,
      metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [ANNOTATIONS.updatedAt]: now.toISOString() } },
      spec: mutate(current.spec),
    }),
    write: async (next) =>
      (await store.custom.replaceNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: INTEGRATIONS.plural,
        name,
        body: next,
        fieldManager: FIELD_MANAGER,
      })) as IntegrationResource,
  });
  store.integrations.remember(result);
  return result;
}

/**
 * Creates the Integration's own client Secret, or replaces its data (compare-and-swap). `data` holds
 * the Secret's keys (clientId, clientSecret, ...) and replaces them all.
 */
export async function putClientSecret(store: StoreCaches, integration: IntegrationResource, data: Record<string, string>): Promise<void> {
  const namespace = integration.metadata.namespace!;
  const name = integrationSecretName(integration.metadata.name);
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
  const existing = store.referencedSecrets.get(name, namespace);
  if (!existing) {
    try {
      const created = await store.core.createNamespacedSecret({
        namespace,
        body: clientSecret(integration, encoded),
        fieldManager: FIELD_MANAGER,
      });
      store.referencedSecrets.remember(created);
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
      // Created meanwhile (or not yet in the cache): update it below, if it is ours.
    }
  }
  const secret = await compareAndSwap<V1Secret>({
    what: `Secret ${namespace}/${name}`,
    readCached: () => store.referencedSecrets.get(name, namespace),
    readFresh: () => store.core.readNamespacedSecret({ namespace, name }),
    mutate: (current) => {
      if (!isOwnedClientSecret(current, integration)) throw alreadyExists(`Secret ${name}`);
      return { ...current, data: encoded };
    },
    write: (next) => store.core.replaceNamespacedSecret({ namespace, name, body: next, fieldManager: FIELD_MANAGER }),
  });
  store.referencedSecrets.remember(secret);
}

/**
 * Deletes an Integration and the client Secret it owns. The garbage collector would delete the Secret
 * too, but only after its next discovery pass (tens of seconds): a client secret should not outlive
 * the API call that deleted its Integration.
 */
export async function deleteIntegrationObject(store: StoreCaches, namespace: string, name: string): Promise<void> {
  const current = store.integrations.get(name, namespace);
  if (!(await deleteCustomObject(store.custom, { namespace, plural: INTEGRATIONS.plural, name }, current?.metadata.uid)))
    throw objectNotFound(`integration ${name}`);
  store.integrations.forget(name, namespace, current?.metadata.resourceVersion);
  if (current) await deleteOwnedClientSecret(store, namespace, current);
}

async function deleteOwnedClientSecret(store: StoreCaches, namespace: string, integration: IntegrationResource): Promise<void> {
  const name = integrationSecretName(integration.metadata.name);
  const secret = await readOrUndefined(() => store.core.readNamespacedSecret({ namespace, name }));
  // Only the Secret this Integration owns: one made by hand or from Git under the same name stays.
  if (!secret || !isOwnedClientSecret(secret, integration)) return;
  await store.core
    .deleteNamespacedSecret({ namespace, name, body: { preconditions: { uid: secret.metadata?.uid } } })
    .catch((err: unknown) => {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    });
  store.referencedSecrets.forget(name, namespace, secret.metadata?.resourceVersion);
}

function clientSecret(owner: IntegrationResource, data: Record<string, string>): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: integrationSecretName(owner.metadata.name),
      namespace: owner.metadata.namespace,
      labels: { [LABELS.watch]: 'true', [LABELS.integration]: owner.metadata.name },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: INTEGRATIONS.kind,
          name: owner.metadata.name,
          uid: owner.metadata.uid!,
          // No blockOwnerDeletion: that would need update on integrations/finalizers in some clusters.
          controller: true,
        },
      ],
    },
    data,
  };
}
