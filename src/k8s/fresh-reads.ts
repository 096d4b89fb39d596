import type { V1Secret } from '@kubernetes/client-node';
import { isNotFound } from './errors.js';
import { CONNECTIONS, CREDENTIALS_KEY, GROUP, VERSION, type ConnectionResource } from './resources.js';
import type { KubeStore, StoredConnection, StoredCredentials } from './store.js';

/**
 * Reads a connection and its credentials Secret straight from the API server (not the informer
 * cache), and records both in the store's caches so that a compare-and-swap write right after
 * starts from them. Used after taking a refresh lock: another replica may have just refreshed.
 */
export async function readConnectionFresh(store: KubeStore, namespace: string, name: string): Promise<StoredConnection | undefined> {
  let resource: ConnectionResource;
  let secret: V1Secret;
  try {
    [resource, secret] = await Promise.all([
      store.custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: CONNECTIONS.plural,
        name,
      }) as Promise<ConnectionResource>,
      store.core.readNamespacedSecret({ namespace, name }),
    ]);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  if (!(secret.metadata?.ownerReferences ?? []).some((r) => r.uid === resource.metadata.uid)) return undefined;
  const credentials = decode(secret);
  if (!credentials) return undefined;
  store.connections.remember(resource);
  store.credentialSecrets.remember(secret);
  return { resource, credentials, credentialsVersion: secret.metadata!.resourceVersion! };
}

function decode(secret: V1Secret): StoredCredentials | undefined {
  const raw = secret.data?.[CREDENTIALS_KEY];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as { type?: unknown }).type === 'string') return parsed as StoredCredentials;
  } catch {
    // unreadable: treated as absent, like the store does
  }
  return undefined;
}
