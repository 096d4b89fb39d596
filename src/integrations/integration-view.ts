/**
 * An Integration as the integrations API shows it: the shape of Nango's `ApiPublicIntegration`
 * (`@nangohq/types`, checked at compile time), built from the custom resource, its Provider and, only
 * when asked for, its client Secret.
 */
import type { ApiPublicIntegration } from '@nangohq/types';
import { ANNOTATIONS, INTEGRATION_SECRET_KEYS, type IntegrationResource, type ProviderResource } from '../k8s/resources.js';
import type { IntegrationCredentialsShape } from '../modes/auth-mode.js';
import { findAuthModeModule } from '../modes/registry.js';

export type IntegrationInclude = 'webhook' | 'credentials';

/** Credentials as the API shows them with `include=credentials` (Nango's `credentials` union, narrowed). */
export type IntegrationCredentialsView =
  | {
      type: 'OAUTH1' | 'OAUTH2' | 'TBA';
      client_id: string | null;
      client_secret: string | null;
      scopes: string | null;
      webhook_secret: string | null;
    }
  | { type: 'APP'; app_id: string | null; private_key: string | null; app_link: string | null }
  | null;

export interface IntegrationView {
  unique_key: string;
  provider: string;
  display_name: string;
  logo?: string;
  forward_webhooks: boolean;
  /** Latchkey's extension: the Integration's `spec.connectionConfig`, when it has any (hosts, never secrets). */
  connection_config?: Record<string, string>;
  created_at: string;
  updated_at: string;
  webhook_url?: string | null;
  credentials?: IntegrationCredentialsView;
}

/** Reads one key of the Integration's client Secret (undefined when absent). */
export type SecretReader = (key: string) => string | undefined;

/** Our view must stay assignable to Nango's type (minus `logo`, which Latchkey leaves out when there is none). */
type Conforms<T extends Omit<ApiPublicIntegration, 'logo'> & { logo?: string }> = T;
export type CheckedIntegrationView = Conforms<IntegrationView>;

export function integrationView(
  integration: IntegrationResource,
  provider: ProviderResource | undefined,
  include: ReadonlySet<IntegrationInclude>,
  readSecret: SecretReader,
  /** The Provider's logo (its own, or the shipped one Latchkey serves), when it has one. */
  logo?: string,
  /** Where the provider sends this Integration's webhooks, when its Provider declares them (src/catalog/webhook-url.ts). */
  webhookUrl?: string,
): IntegrationView {
  const created = isoOf(integration.metadata.creationTimestamp) ?? new Date(0).toISOString();
  const view: IntegrationView = {
    unique_key: integration.metadata.name,
    provider: integration.spec.provider,
    display_name: integration.spec.displayName ?? provider?.spec.displayName ?? integration.spec.provider,
    ...(logo ? { logo } : {}),
    // Latchkey receives and forwards the webhooks of Providers that declare them (docs/provider-webhooks.md).
    forward_webhooks: Boolean(provider?.spec.webhooks),
    ...(Object.keys(integration.spec.connectionConfig ?? {}).length ? { connection_config: { ...integration.spec.connectionConfig } } : {}),
    created_at: created,
    updated_at: isoOf(integration.metadata.annotations?.[ANNOTATIONS.updatedAt]) ?? created,
  };
  if (include.has('webhook')) view.webhook_url = provider?.spec.webhooks && webhookUrl ? webhookUrl : null;
  if (include.has('credentials')) view.credentials = credentialsView(integration, provider, readSecret);
  return view;
}

function credentialsView(
  integration: IntegrationResource,
  provider: ProviderResource | undefined,
  read: SecretReader,
): IntegrationCredentialsView {
  const shape = provider ? findAuthModeModule(provider.spec.authMode)?.integration.shownAs : undefined;
  const value = (key: string) => (integration.spec.clientSecretRef ? (read(key) ?? null) : null);
  return shape ? CREDENTIALS_VIEWS[shape](value, integration) : null;
}

type Value = (key: string) => string | null;

/** An OAuth client's credentials (OAuth 2, OAuth 1's consumer, TBA's integration record). */
const clientView =
  (type: 'OAUTH2' | 'OAUTH1' | 'TBA') =>
  (value: Value, integration: IntegrationResource): IntegrationCredentialsView => ({
    type,
    client_id: value(INTEGRATION_SECRET_KEYS.clientId),
    client_secret: value(INTEGRATION_SECRET_KEYS.clientSecret),
    scopes: integration.spec.scopes?.length ? integration.spec.scopes.join(',') : null,
    webhook_secret: value(INTEGRATION_SECRET_KEYS.webhookSecret),
  });

/** The credentials of an Integration in each of the integrations API's shapes. */
const CREDENTIALS_VIEWS: Record<
  IntegrationCredentialsShape,
  (value: Value, integration: IntegrationResource) => IntegrationCredentialsView
> = {
  OAUTH2: clientView('OAUTH2'),
  OAUTH1: clientView('OAUTH1'),
  TBA: clientView('TBA'),
  // The catalog's clientId/clientSecret fields are read as the App ID and key too.
  APP: (value) => ({
    type: 'APP',
    app_id: value(INTEGRATION_SECRET_KEYS.appId) ?? value(INTEGRATION_SECRET_KEYS.clientId),
    private_key: value(INTEGRATION_SECRET_KEYS.privateKey) ?? value(INTEGRATION_SECRET_KEYS.clientSecret),
    app_link: value(APP_LINK_KEY),
  }),
};

/** Key of the client Secret holding an APP integration's app link (Nango's `app_link`). */
export const APP_LINK_KEY = 'appLink';

function isoOf(v: unknown): string | undefined {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'string' && Number.isFinite(Date.parse(v))) return new Date(v).toISOString();
  return undefined;
}
