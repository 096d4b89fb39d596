/**
 * The integrations service: reads Integrations of an environment's namespace, and creates, changes
 * and deletes them (with their client Secret) when the Environment allows writes
 * (`spec.api.integrationWrites`). kubectl and the API see the same objects.
 */
import { providerLogoUrl } from '../catalog/provider-logos.js';
import type { Clock } from '../domain/clock.js';
import type { AuthMode } from '../domain/auth-modes.js';
import {
  createIntegrationWithSecret,
  deleteIntegrationObject,
  integrationSecretName,
  isOwnedClientSecret,
  putClientSecret,
  updateIntegrationSpec,
} from '../k8s/integration-writes.js';
import { INTEGRATION_SECRET_KEYS, type EnvironmentResource, type IntegrationResource } from '../k8s/resources.js';
import type { CatalogStore, ConnectionScans, StoreCaches } from '../k8s/store.js';
import { ALREADY_EXISTS, OBJECT_NOT_FOUND } from '../k8s/errors.js';
import { hasCode, LatchkeyError } from '../domain/errors.js';
import { APP_LINK_KEY, integrationView, type IntegrationInclude, type IntegrationView } from './integration-view.js';
import { findAuthModeModule } from '../modes/registry.js';
import { providerWebhookUrl } from '../catalog/webhook-url.js';
import { checkIntegrationConfigInput } from '../catalog/integration-config.js';

export interface IntegrationsDeps {
  catalog: CatalogStore;
  connectionScans: ConnectionScans;
  /** What src/k8s/integration-writes.ts writes Integrations and their client Secret through. */
  caches: StoreCaches;
  clock: Clock;
  /** Where shipped providers' logos are served (`logo`), and the Integrations' webhook URLs. */
  config: { publicBaseUrl: string };
}

/** Client credentials as Nango's API takes them (`ApiPublicIntegrationCredentials`). */
export type IntegrationCredentialsInput =
  | {
      type: 'OAUTH1' | 'OAUTH2' | 'TBA';
      client_id: string;
      client_secret: string;
      scopes?: string | undefined;
      webhook_secret?: string | undefined;
    }
  | { type: 'APP'; app_id: string; app_link: string; private_key: string };

export interface NewIntegration {
  unique_key: string;
  provider: string;
  display_name?: string | undefined;
  credentials?: IntegrationCredentialsInput | undefined;
  /** Latchkey's extension: the Integration's `spec.connectionConfig` (the Provider's `setBy: integration` keys). */
  connection_config?: Record<string, string> | undefined;
}

export interface IntegrationChange {
  unique_key?: string | undefined;
  display_name?: string | undefined;
  credentials?: IntegrationCredentialsInput | undefined;
  /** Merged key by key into `spec.connectionConfig`; null or "" removes a key. */
  connection_config?: Record<string, string | null> | undefined;
}

export class IntegrationsService {
  constructor(private readonly deps: IntegrationsDeps) {}

  /** The namespace's Integrations, sorted by ID. */
  list(namespace: string): IntegrationView[] {
    return this.deps.catalog
      .listIntegrations(namespace)
      .filter((i) => !i.metadata.deletionTimestamp)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
      .map((i) => this.view(i, new Set()));
  }

  get(namespace: string, key: string, include: ReadonlySet<IntegrationInclude>): IntegrationView {
    return this.view(this.existing(namespace, key), include);
  }

  async create(env: EnvironmentResource, input: NewIntegration): Promise<IntegrationView> {
    const namespace = writable(env);
    const provider = this.deps.catalog.getProvider(input.provider);
    if (!provider) throw new LatchkeyError('invalid_input', 'unknown_provider', `No provider "${input.provider}" in the catalog`);
    if (this.deps.catalog.getIntegration(namespace, input.unique_key))
      throw new LatchkeyError('conflict', 'integration_exists', `Integration "${input.unique_key}" already exists`);
    const clientData = input.credentials ? secretData(input.credentials, provider.spec.authMode) : undefined;
    const connectionConfig = trimmedConfig(input.connection_config ?? {});
    checkIntegrationConfigInput(provider.spec, connectionConfig);
    try {
      const created = await createIntegrationWithSecret(
        this.deps.caches,
        namespace,
        input.unique_key,
        {
          provider: input.provider,
          ...(input.display_name ? { displayName: input.display_name } : {}),
          ...scopesOf(input.credentials),
          ...(Object.keys(connectionConfig).length ? { connectionConfig } : {}),
        },
        clientData,
        new Date(this.deps.clock.now()),
      );
      return this.view(created, new Set());
    } catch (err) {
      if (hasCode(err, ALREADY_EXISTS))
        throw new LatchkeyError('conflict', 'integration_exists', `Integration "${input.unique_key}" or its client Secret already exists`);
      throw err;
    }
  }

  async update(env: EnvironmentResource, key: string, change: IntegrationChange): Promise<IntegrationView> {
    const namespace = writable(env);
    let integration = this.existing(namespace, key);
    if (change.unique_key !== undefined && change.unique_key !== key)
      throw new LatchkeyError(
        'invalid_input',
        'unique_key_immutable',
        'An integration ID cannot change (connections refer to it): create a new integration instead',
      );
    const provider = this.deps.catalog.getProvider(integration.spec.provider);
    const credentials = change.credentials;
    if (change.connection_config) {
      if (!provider) throw unknownProvider(key, integration.spec.provider);
      // Only the values sent are checked: one already stored that its rule now refuses is the Ready condition's to report.
      checkIntegrationConfigInput(provider.spec, setValues(change.connection_config));
    }
    let clientData: Record<string, string> | undefined;
    if (credentials) {
      if (!provider) throw unknownProvider(key, integration.spec.provider);
      clientData = secretData(credentials, provider.spec.authMode);
      const ref = integration.spec.clientSecretRef;
      const current = ref ? this.deps.catalog.getReferencedSecret(namespace, ref.name) : undefined;
      // A Secret someone else made (from Git, say) is theirs to change, not the API's.
      if (ref && !isOwnedClientSecret(current, integration))
        throw new LatchkeyError(
          'conflict',
          'credentials_managed_elsewhere',
          `Integration "${key}" reads its credentials from Secret "${ref.name}", which the API did not create: change that Secret instead`,
        );
    }
    try {
      if (clientData) await putClientSecret(this.deps.caches, integration, clientData);
      integration = await updateIntegrationSpec(
        this.deps.caches,
        namespace,
        key,
        (spec) => {
          const next = { ...spec };
          if (change.display_name !== undefined) {
            if (change.display_name) next.displayName = change.display_name;
            else delete next.displayName;
          }
          if (clientData) next.clientSecretRef = { name: integrationSecretName(key) };
          if (credentials && 'scopes' in credentials && credentials.scopes !== undefined) {
            const scopes = splitScopes(credentials.scopes);
            if (scopes.length) next.scopes = scopes;
            else delete next.scopes;
          }
          if (change.connection_config) {
            const merged = mergedConfig(next.connectionConfig, change.connection_config);
            if (Object.keys(merged).length) next.connectionConfig = merged;
            else delete next.connectionConfig;
          }
          return next;
        },
        new Date(this.deps.clock.now()),
      );
    } catch (err) {
      if (hasCode(err, OBJECT_NOT_FOUND)) throw notFound(key);
      if (hasCode(err, ALREADY_EXISTS))
        throw new LatchkeyError(
          'conflict',
          'credentials_managed_elsewhere',
          `Secret "${integrationSecretName(key)}" exists and is not this integration's`,
        );
      throw err;
    }
    return this.view(integration, new Set());
  }

  async delete(env: EnvironmentResource, key: string): Promise<void> {
    const namespace = writable(env);
    this.existing(namespace, key);
    // Deleting would orphan stored credentials: the application deletes its connections first.
    let connections = 0;
    for await (const _ of this.deps.connectionScans.scanConnections(namespace, { integrations: [key] })) connections += 1;
    if (connections > 0)
      throw new LatchkeyError(
        'conflict',
        'integration_has_connections',
        `Integration "${key}" has ${connections} connection(s); delete them first (DELETE /connections/{connectionId})`,
      );
    try {
      await deleteIntegrationObject(this.deps.caches, namespace, key);
    } catch (err) {
      if (hasCode(err, OBJECT_NOT_FOUND)) throw notFound(key);
      throw err;
    }
  }

  private existing(namespace: string, key: string): IntegrationResource {
    const integration = this.deps.catalog.getIntegration(namespace, key);
    if (!integration || integration.metadata.deletionTimestamp) throw notFound(key);
    return integration;
  }

  private view(integration: IntegrationResource, include: ReadonlySet<IntegrationInclude>): IntegrationView {
    const namespace = integration.metadata.namespace!;
    const ref = integration.spec.clientSecretRef;
    const provider = this.deps.catalog.getProvider(integration.spec.provider);
    return integrationView(
      integration,
      provider,
      include,
      (k) => (ref ? this.deps.catalog.readSecretValue(namespace, ref.name, k) : undefined),
      provider && providerLogoUrl(provider, this.deps.config.publicBaseUrl),
      providerWebhookUrl(this.deps.config.publicBaseUrl, namespace, integration.metadata.name),
    );
  }
}

function unknownProvider(key: string, provider: string): LatchkeyError {
  return new LatchkeyError(
    'conflict',
    'unknown_provider',
    `Integration "${key}" refers to provider "${provider}", which is not in the catalog`,
  );
}

/** The values a body sets, trimmed (null and "" remove a key and are left out). */
function setValues(given: Record<string, string | null>): Record<string, string> {
  return trimmedConfig(Object.fromEntries(Object.entries(given).filter((e): e is [string, string] => typeof e[1] === 'string')));
}

function trimmedConfig(given: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(given)
      .map(([k, v]) => [k, v.trim()] as const)
      .filter(([, v]) => v !== ''),
  );
}

/** `spec.connectionConfig` after a PATCH: the keys sent replace theirs, null or "" removes one, the rest stay. */
function mergedConfig(current: Record<string, string> | undefined, change: Record<string, string | null>): Record<string, string> {
  const out = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(change)) {
    const value = v?.trim();
    if (value) out[k] = value;
    else delete out[k];
  }
  return out;
}

function notFound(key: string): LatchkeyError {
  return new LatchkeyError('not_found', 'unknown_integration', `No integration "${key}" in this environment`);
}

/** The Environment's namespace, or a 403 when it does not let the API write Integrations. */
function writable(env: EnvironmentResource): string {
  if (env.spec.api?.integrationWrites !== true)
    throw new LatchkeyError(
      'forbidden',
      'integration_writes_disabled',
      `Environment "${env.metadata.name}" does not allow writing Integrations through the API (spec.api.integrationWrites is off): change them with kubectl or in Git`,
    );
  return env.metadata.namespace!;
}

function splitScopes(scopes: string): string[] {
  return scopes
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function scopesOf(credentials: IntegrationCredentialsInput | undefined): { scopes?: string[] } {
  // An app's credentials carry no scopes.
  if (!credentials || !('scopes' in credentials) || !credentials.scopes) return {};
  const scopes = splitScopes(credentials.scopes);
  return scopes.length ? { scopes } : {};
}

/** The client Secret's keys for these credentials, or a 400 when they do not fit the provider's auth mode. */
function secretData(credentials: IntegrationCredentialsInput, mode: AuthMode): Record<string, string> {
  // Which shapes configure the mode: its module says (INSTALL_PLUGIN: the client secret signs its install callbacks).
  const needs = findAuthModeModule(mode)?.integration;
  if (!needs?.accepts.includes(credentials.type))
    throw new LatchkeyError(
      'invalid_input',
      'invalid_credentials',
      `Credentials of type ${credentials.type} do not fit this provider (auth mode ${mode})${needs?.needsNoClient ? ': it needs no client credentials' : ''}`,
    );
  if ('app_id' in credentials)
    return {
      [INTEGRATION_SECRET_KEYS.appId]: credentials.app_id,
      [INTEGRATION_SECRET_KEYS.privateKey]: credentials.private_key,
      [APP_LINK_KEY]: credentials.app_link,
    };
  return {
    [INTEGRATION_SECRET_KEYS.clientId]: credentials.client_id,
    [INTEGRATION_SECRET_KEYS.clientSecret]: credentials.client_secret,
    // Nango's field for the secret a provider signs its webhooks with (docs/provider-webhooks.md).
    ...(credentials.webhook_secret ? { [INTEGRATION_SECRET_KEYS.webhookSecret]: credentials.webhook_secret } : {}),
  };
}
