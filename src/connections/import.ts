/**
 * Imports of credentials an application already holds (POST /connections and the deprecated flat
 * POST /connection): the provider's auth mode module (src/modes) turns what was sent into the
 * credentials to store — a 400 naming the fields, or the provider's refusal, before anything is
 * stored — and the connection service stores them.
 */
import { sessionStep, withProviderValues } from '../auth/post-connection.js';
import { providerValueKeys } from '../auth/provider-answers.js';
import type { AppContext } from '../context/app-context.js';
import { LatchkeyError } from '../domain/errors.js';
import type { StoredConnection, StoredCredentials } from '../k8s/store.js';
import type { FlatCredentialFields, GivenCredentials, ModeDeps } from '../modes/auth-mode.js';
import { authModeModule } from '../modes/registry.js';
import { importConnection, type ConnectionServiceDeps, type NewConnection } from './service.js';

export type ImportDeps = ConnectionServiceDeps & ModeDeps & Partial<Pick<AppContext, 'oplog'>>;

export interface ImportRequest extends Omit<NewConnection, 'credentials' | 'labels'> {
  /** POST /connections: the body's `credentials` (schema-checked); or the flat fields of POST /connection. */
  credentials: { given: GivenCredentials } | { flat: FlatCredentialFields };
}

/** Turns what was sent into credentials with the provider's auth mode, then creates the connection or replaces its credentials. */
export async function importCredentials(
  deps: ImportDeps,
  request: ImportRequest,
): Promise<{ connection: StoredConnection; created: boolean }> {
  const { namespace, integration, provider, connectionId } = request;
  const mode = authModeModule(provider.spec.authMode);
  // A re-import's credentials (minted or exchanged) may use the configuration the connection keeps.
  const keptConfig = connectionId
    ? (await deps.connections.findConnection(namespace, integration.metadata.name, connectionId))?.resource.spec.connectionConfig
    : undefined;
  const common = { namespace, integration, provider, connectionConfig: request.connectionConfig, keptConfig };
  let credentials;
  let connectionConfig = request.connectionConfig;
  if ('given' in request.credentials) {
    const { given } = request.credentials;
    if (given.type !== provider.spec.authMode) throw typeMismatch(given.type, provider.spec.authMode, provider.metadata.name);
    const imported = await mode.fromImport(deps, { ...common, given });
    credentials = imported.credentials;
    connectionConfig = imported.connectionConfig ?? connectionConfig;
  } else {
    credentials = await mode.fromFlatImport(deps, { ...common, fields: request.credentials.flat });
  }
  connectionConfig = await withReturnedValues(
    deps,
    request,
    credentials,
    { ...(keptConfig ?? {}), ...(connectionConfig ?? {}) },
    connectionConfig,
  );
  return importConnection(deps, { ...request, credentials, connectionConfig });
}

/**
 * Values the provider returns (`connectionConfiguration[].from`) that the caller did not give: taken
 * from what was imported, and the post-connection steps run with the imported access token. A failed
 * step stores nothing (502); a key still missing is the caller's 400 (the connection service's check).
 */
async function withReturnedValues(
  deps: ImportDeps,
  request: ImportRequest,
  credentials: StoredCredentials,
  merged: Record<string, unknown>,
  sent: Record<string, unknown> | undefined,
): Promise<Record<string, unknown> | undefined> {
  const { provider } = request;
  const returned = providerValueKeys(provider.spec).all;
  const missing = [...returned].filter((k) => merged[k] === undefined || merged[k] === '');
  // A session step (Bullhorn's login) runs on every import: its session token is a credential.
  const session = sessionStep(provider.spec) !== undefined && credentials.session_token === undefined;
  if ((!missing.length && !session) || typeof credentials.access_token !== 'string') return sent;
  const values = await withProviderValues(deps, {
    provider,
    accessToken: credentials.access_token,
    onSessionToken: (token) => {
      credentials.session_token = token;
    },
    tokenAnswer: credentials.raw && typeof credentials.raw === 'object' ? (credentials.raw as Record<string, unknown>) : undefined,
    connectionConfig: merged,
    checkAll: false,
    log: {
      namespace: request.namespace,
      operation: 'import',
      integration: request.integration.metadata.name,
      ...(request.connectionId ? { connectionId: request.connectionId } : {}),
    },
  });
  const found = Object.fromEntries(missing.flatMap((k) => (values[k] !== undefined ? [[k, values[k]]] : [])));
  return { ...(sent ?? {}), ...found };
}

function typeMismatch(type: string, authMode: string, provider: string): LatchkeyError {
  return new LatchkeyError(
    'invalid_input',
    'credentials_type_mismatch',
    `credentials.type ${type} does not match the auth mode ${authMode} of provider "${provider}"`,
    { errors: [{ path: 'body.credentials.type', message: `expected ${authMode}`, code: 'credentials_type_mismatch' }] },
  );
}
