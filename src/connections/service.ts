/**
 * The connection service: stores the credentials an application or end user gives (the token
 * refresher stores refreshed ones) and the status that follows from them (rules in
 * src/domain/connection-state.ts, which the refresher applies too). Of a Connection's status it writes
 * only the fields src/domain/connection-status-writers.ts gives it. The REST API and the Connect flows
 * validate input, call this, and shape the answer.
 */
import { fitCredentials } from '../domain/credentials.js';
import { randomUUID } from 'node:crypto';
import type { AuthMode } from '../domain/auth-modes.js';
import type { Clock } from '../domain/clock.js';
import { CREDENTIALS_ERROR, MAX_STATUS_ERRORS, mergeCredentials, statusAfterNewCredentials } from '../domain/connection-state.js';
import { hasCode, LatchkeyError } from '../domain/errors.js';
import { checkConnectionConfig } from '../catalog/connection-config.js';
import { withIntegrationConfig } from '../catalog/integration-config.js';
import type { RefreshSettings } from '../domain/refresh-margin.js';
import type { RefreshLock } from '../auth/refresh/lock.js';
import { revokeGrant, type RevocationOutcome } from '../auth/grant-revocation.js';
import { connectionObjectName } from '../k8s/names.js';
import type { EndUserSpec, IntegrationResource, ProviderResource } from '../k8s/resources.js';
import { ALREADY_EXISTS } from '../k8s/errors.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../k8s/store.js';
import { ConnectionStatusWriter } from '../domain/connection-status-writers.js';

export interface ConnectionServiceDeps {
  connections: ConnectionStore;
  config: RefreshSettings;
  clock: Clock;
}

export interface NewConnection {
  namespace: string;
  integration: IntegrationResource;
  provider: ProviderResource;
  /** Absent: a fresh random ID. */
  connectionId?: string;
  credentials: StoredCredentials;
  metadata?: Record<string, unknown>;
  connectionConfig?: Record<string, unknown>;
  endUser?: EndUserSpec;
  labels?: Record<string, string>;
}

/** Older than this, a Connection without its Secret is not a creation in flight (each write is bounded at 10 s). */
const HALF_MADE_AFTER_MS = 30_000;

/** Creates a connection; a taken connection ID is an `already_exists` error (the API server refuses the name). */
export async function createConnection(deps: ConnectionServiceDeps, input: NewConnection): Promise<StoredConnection> {
  // The Integration's values in place (a caller's other value refused), then every value follows the
  // Provider's rules and every required key is there (400 otherwise).
  const connectionConfig = checkConnectionConfig(
    input.provider.spec,
    withIntegrationConfig(input.provider.spec, input.integration.spec, input.connectionConfig),
  );
  // Before the first write: credentials too large for their Secret create nothing.
  const credentials = fitCredentials(input.credentials);
  return deps.connections.createConnection({
    namespace: input.namespace,
    spec: {
      integration: input.integration.metadata.name,
      provider: input.provider.metadata.name,
      connectionId: input.connectionId ?? randomUUID(),
      authMode: input.provider.spec.authMode as AuthMode,
      ...(input.endUser ? { endUser: compact(input.endUser) } : {}),
      metadata: input.metadata ?? {},
      connectionConfig,
    },
    credentials,
    status: statusAfterNewCredentials(undefined, credentials, deps.config, deps.clock.now(), 'authorized'),
    ...(input.labels ? { labels: input.labels } : {}),
  });
}

/**
 * An import: creates the connection or, when the connection ID exists, replaces its credentials
 * with exactly the ones sent and merges the metadata, configuration and end user sent into its own.
 */
export async function importConnection(
  deps: ConnectionServiceDeps,
  input: NewConnection,
): Promise<{ connection: StoredConnection; created: boolean }> {
  const connectionId = input.connectionId ?? randomUUID();
  const integrationId = input.integration.metadata.name;
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await deps.connections.findConnection(input.namespace, integrationId, connectionId);
    if (existing) return { connection: await replaceCredentials(deps, input.namespace, existing, input), created: false };
    try {
      return { connection: await createConnection(deps, { ...input, connectionId }), created: true };
    } catch (err) {
      // Created concurrently by another request: replace its credentials instead. Or a half-made
      // attempt of our own (Connection without Secret) blocks the name: clear it once no creation can be in flight.
      if (!hasCode(err, ALREADY_EXISTS)) throw err;
      const name = connectionObjectName(integrationId, connectionId);
      if (await deps.connections.removeIncompleteConnection(input.namespace, name, HALF_MADE_AFTER_MS, deps.clock.now())) continue;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }
  throw new LatchkeyError('unavailable', 'busy', `Connection "${connectionId}" is being created concurrently; try again`);
}

/** New credentials for an existing connection, as sent; spec fields sent are merged into its own. */
export async function replaceCredentials(
  deps: ConnectionServiceDeps,
  namespace: string,
  existing: StoredConnection,
  input: Pick<NewConnection, 'credentials' | 'metadata' | 'connectionConfig' | 'endUser' | 'provider' | 'integration'>,
): Promise<StoredConnection> {
  const name = existing.resource.metadata.name;
  // The merged configuration is checked before anything is written, so a refused one changes nothing; the
  // Integration's values (checked against what was sent) replace the stored ones: new credentials, its current host.
  const connectionConfig = checkConnectionConfig(input.provider.spec, {
    ...(existing.resource.spec.connectionConfig ?? {}),
    ...withIntegrationConfig(input.provider.spec, input.integration.spec, input.connectionConfig),
  });
  const { credentials, credentialsVersion } = await deps.connections.updateCredentials(namespace, name, () => input.credentials);
  if (input.endUser || input.metadata || input.connectionConfig) {
    await deps.connections.updateConnection(namespace, name, (c) => ({
      ...c,
      spec: {
        ...c.spec,
        ...(input.endUser ? { endUser: compact(input.endUser) } : {}),
        metadata: { ...(c.spec.metadata ?? {}), ...(input.metadata ?? {}) },
        connectionConfig: { ...(c.spec.connectionConfig ?? {}), ...connectionConfig },
      },
    }));
  }
  const resource = await deps.connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Service, (s) =>
    statusAfterNewCredentials(s, credentials, deps.config, deps.clock.now(), 'authorized'),
  );
  return { resource, credentials, credentialsVersion };
}

/**
 * A re-authorization by the end user (reconnect): new credentials on the existing connection (same
 * ID, metadata, configuration, end user). A provider that sends no refresh token this time leaves
 * the old one in place. Undefined when the connection no longer exists.
 */
export async function reauthorize(
  deps: ConnectionServiceDeps,
  namespace: string,
  integrationId: string,
  connectionId: string,
  credentials: StoredCredentials,
): Promise<StoredConnection | undefined> {
  const existing = await deps.connections.findConnection(namespace, integrationId, connectionId);
  if (!existing) return undefined;
  const name = existing.resource.metadata.name;
  const stored = await deps.connections.updateCredentials(namespace, name, (current) => mergeCredentials(current, credentials));
  const resource = await deps.connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Service, (s) =>
    statusAfterNewCredentials(s, stored.credentials, deps.config, deps.clock.now(), 'authorized'),
  );
  return { resource, credentials: stored.credentials, credentialsVersion: stored.credentialsVersion };
}

/**
 * A re-authorization that failed (consent denied, the provider refused the code or the credentials):
 * an `auth` entry in the connection's errors pointing at the log entry (`logId`). The credentials,
 * spec and the rest of the status stay as they were: the old credentials may well still work.
 * Undefined when the connection no longer exists.
 */
export async function recordFailedReauthorization(
  deps: Pick<ConnectionServiceDeps, 'connections' | 'clock'>,
  namespace: string,
  integrationId: string,
  connectionId: string,
  failure: { logId: string; message: string },
): Promise<StoredConnection['resource'] | undefined> {
  const existing = await deps.connections.findConnection(namespace, integrationId, connectionId);
  if (!existing) return undefined;
  const entry = {
    type: CREDENTIALS_ERROR,
    logId: failure.logId,
    message: failure.message.slice(0, 1024),
    occurredAt: new Date(deps.clock.now()).toISOString(),
  };
  return deps.connections.updateConnectionStatus(namespace, existing.resource.metadata.name, ConnectionStatusWriter.Service, (s) => ({
    ...s,
    errors: [...(s.errors ?? []), entry].slice(-MAX_STATUS_ERRORS),
  }));
}

/** Deletes a connection (its Secret goes with it) and its refresh lock. False when it does not exist. */
/**
 * Deletes a connection; with `fetch`, first revokes its grant where the provider declares revocation
 * (src/auth/grant-revocation.ts: best effort, bounded in time, never failing the delete) and reports
 * the outcome to `onRevocation` (for the operation log).
 */
export async function deleteConnection(
  deps: { connections: ConnectionStore; catalog: CatalogStore; refreshLock: RefreshLock; fetch?: typeof fetch },
  namespace: string,
  integrationId: string,
  connectionId: string,
  onRevocation?: (outcome: RevocationOutcome) => void,
): Promise<boolean> {
  const conn = await deps.connections.findConnection(namespace, integrationId, connectionId);
  if (!conn) return false;
  const name = conn.resource.metadata.name;
  const integration = deps.catalog.getIntegration(namespace, integrationId);
  const provider = integration && deps.catalog.getProvider(integration.spec.provider);
  if (deps.fetch && integration && provider?.spec.revocation) {
    const outcome = await revokeGrant({
      catalog: deps.catalog,
      namespace,
      integration,
      provider,
      credentials: conn.credentials,
      connectionConfig: conn.resource.spec.connectionConfig,
      fetch: deps.fetch,
    });
    if (outcome) onRevocation?.(outcome);
  }
  await deps.connections.deleteConnection(namespace, name);
  // The Lease is owned by the Connection, so the garbage collector removes it anyway; this is sooner.
  await deps.refreshLock.remove(namespace, name).catch(() => undefined);
  return true;
}

function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
