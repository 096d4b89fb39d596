import { randomUUID } from 'node:crypto';
import { nextRefreshAt } from '../auth/refresh/token-refresher.js';
import type { Config } from '../app/config.js';
import type { Clock } from '../domain/clock.js';
import { expiresAtOf, lifetimeSecondsOf } from '../domain/credentials.js';
import type { AuthMode } from '../domain/auth-modes.js';
import type { ConnectionStatus, EndUserSpec, IntegrationResource, ProviderResource } from '../k8s/resources.js';
import { AlreadyExistsError, type KubeStore, type StoredConnection, type StoredCredentials } from '../k8s/store.js';

export interface ImportInput {
  namespace: string;
  integration: IntegrationResource;
  provider: ProviderResource;
  connectionId?: string;
  credentials: StoredCredentials;
  metadata?: Record<string, unknown>;
  connectionConfig?: Record<string, unknown>;
  endUser?: EndUserSpec;
}

export interface ImportDeps {
  store: KubeStore;
  config: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>;
  clock: Clock;
}

function statusFor(
  credentials: StoredCredentials,
  cfg: ImportDeps['config'],
  now: number,
): Pick<ConnectionStatus, 'expiresAt' | 'nextRefreshAt' | 'updatedAt'> {
  const expiresAt = expiresAtOf(credentials);
  return {
    expiresAt: expiresAt?.toISOString(),
    nextRefreshAt: expiresAt ? nextRefreshAt(expiresAt, lifetimeSecondsOf(credentials), cfg).toISOString() : undefined,
    updatedAt: new Date(now).toISOString(),
  };
}

/**
 * Creates a connection from imported credentials or, when the connection ID exists, replaces its
 * credentials and keeps its metadata and configuration (keys sent with the import are merged in).
 */
export async function importConnection(deps: ImportDeps, input: ImportInput): Promise<{ connection: StoredConnection; created: boolean }> {
  const { store } = deps;
  const connectionId = input.connectionId ?? randomUUID();
  const integrationId = input.integration.metadata.name;
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = store.getConnection(input.namespace, integrationId, connectionId);
    if (existing) return { connection: await replace(deps, input, existing), created: false };
    try {
      const connection = await store.createConnection({
        namespace: input.namespace,
        spec: {
          integration: integrationId,
          provider: input.provider.metadata.name,
          connectionId,
          authMode: input.provider.spec.authMode as AuthMode,
          ...(input.endUser ? { endUser: input.endUser } : {}),
          metadata: input.metadata ?? {},
          connectionConfig: input.connectionConfig ?? {},
        },
        credentials: input.credentials,
        status: statusFor(input.credentials, deps.config, deps.clock.now()),
      });
      return { connection, created: true };
    } catch (err) {
      // Created concurrently by another request: replace its credentials instead.
      if (!(err instanceof AlreadyExistsError)) throw err;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }
  throw new AlreadyExistsError(`connection ${connectionId}`);
}

async function replace(deps: ImportDeps, input: ImportInput, existing: StoredConnection): Promise<StoredConnection> {
  const { store } = deps;
  const ns = input.namespace;
  const name = existing.resource.metadata.name;
  const { credentials, credentialsVersion } = await store.updateCredentials(ns, name, () => input.credentials);
  let resource = existing.resource;
  if (input.endUser || input.metadata || input.connectionConfig) {
    resource = await store.updateConnection(ns, name, (c) => ({
      ...c,
      spec: {
        ...c.spec,
        ...(input.endUser ? { endUser: input.endUser } : {}),
        metadata: { ...(c.spec.metadata ?? {}), ...(input.metadata ?? {}) },
        connectionConfig: { ...(c.spec.connectionConfig ?? {}), ...(input.connectionConfig ?? {}) },
      },
    }));
  }
  resource = await store.updateConnectionStatus(ns, name, (s) => ({
    ...s,
    ...statusFor(credentials, deps.config, deps.clock.now()),
    refreshAttempts: 0,
    errors: (s.errors ?? []).filter((e) => e.type !== 'auth'),
  }));
  return { resource, credentials, credentialsVersion };
}
