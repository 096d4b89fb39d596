import { fitCredentials } from '../domain/credentials.js';
import type { V1Secret } from './kubernetes-client.js';
import { fromStoredForm, toStoredForm } from './stored-credentials.js';
import { apiPath } from './json-api.js';
import {
  API_VERSION,
  CONNECTIONS,
  CREDENTIALS_KEY,
  CREDENTIALS_SECRET_TYPE,
  GROUP,
  LABELS,
  VERSION,
  type ConnectionResource,
  type ConnectionSpec,
  type ConnectionStatus,
} from './resources.js';

/** Credentials as stored in a connection's Secret: a JSON object with a `type`. */
export type StoredCredentials = { type: string } & Record<string, unknown>;

export interface StoredConnection {
  resource: ConnectionResource;
  credentials: StoredCredentials;
  /** resourceVersion of the credentials Secret, for compare-and-swap. */
  credentialsVersion: string;
}

export interface NewConnection {
  namespace: string;
  spec: Omit<ConnectionSpec, 'id'> & { id?: number };
  credentials: StoredCredentials;
  status?: ConnectionStatus;
  /** Extra labels of the Connection (e.g. the Connect session that created it). */
  labels?: Record<string, string>;
}

/** A connection's credentials Secret as the store creates it (benchmarks write the same shape). */
export function credentialsSecret(owner: ConnectionResource, credentials: StoredCredentials): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: CREDENTIALS_SECRET_TYPE,
    metadata: {
      name: owner.metadata.name,
      namespace: owner.metadata.namespace,
      labels: {
        [LABELS.managedBy]: LABELS.managedByValue,
        [LABELS.integration]: owner.spec.integration,
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: CONNECTIONS.kind,
          name: owner.metadata.name,
          uid: owner.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: { [CREDENTIALS_KEY]: encodeCredentials(credentials) },
  };
}

export function isOwnedBy(secret: V1Secret, owner: ConnectionResource): boolean {
  return (secret.metadata?.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid);
}

/**
 * The Secret's value: never more than a Secret holds (`fitCredentials`: `raw` trimmed, oversized
 * refused), each token once (`toStoredForm`).
 */
export function encodeCredentials(credentials: StoredCredentials): string {
  return Buffer.from(JSON.stringify(toStoredForm(fitCredentials(credentials))), 'utf8').toString('base64');
}

/**
 * Decoded credentials per cached Secret object. The cache holds one object per resourceVersion (a
 * change replaces it), so this is a cache per resourceVersion that goes with the object: the hot
 * read path (every fetch and proxied request) skips base64 and JSON. Callers never mutate them.
 */
const decoded = new WeakMap<V1Secret, StoredCredentials | null>();

export function decodedOnce(secret: V1Secret): StoredCredentials | undefined {
  let credentials = decoded.get(secret);
  if (credentials === undefined) {
    credentials = decodeCredentials(secret) ?? null;
    decoded.set(secret, credentials);
  }
  return credentials ?? undefined;
}

export function decodeCredentials(secret: V1Secret): StoredCredentials | undefined {
  const raw = secret.data?.[CREDENTIALS_KEY];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as { type?: unknown }).type === 'string') {
      return fromStoredForm(parsed as StoredCredentials);
    }
  } catch {
    // fall through: a Secret someone edited by hand into something unreadable
  }
  return undefined;
}

export const connectionPath = (namespace: string, name: string) =>
  apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CONNECTIONS.plural, name);
export const secretPath = (namespace: string, name: string) => apiPath('/api/v1/namespaces', namespace, 'secrets', name);
