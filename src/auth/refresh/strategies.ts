import * as oidc from 'openid-client';
import type { OAuth2ClientCredentials, OAuth2Credentials } from '../../domain/credentials.js';
import type { IntegrationResource, ProviderResource } from '../../k8s/resources.js';
import type { KubeStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import { oauth2Configuration, resolveClient, type ClientCredentials } from '../oauth2-client.js';
import { RefreshError } from './errors.js';

/** What a refresh strategy gets: the connection as read after taking the lock, and its catalog objects. */
export interface StrategyInput {
  namespace: string;
  connection: StoredConnection;
  integration: IntegrationResource;
  provider: ProviderResource;
  store: KubeStore;
  fetch: typeof fetch;
  timeoutSeconds: number;
  now: number;
}

/**
 * How one kind of credentials is renewed. Register one per auth mode with
 * {@link TokenRefresher.registerStrategy}: OAUTH2 and OAUTH2_CC are built in, the other modes are registered
 * by `refresherFor` (shared-refresher.ts), which the REST API, the proxy and the controller share.
 */
export interface RefreshStrategy {
  /** Whether these credentials can be renewed at all (e.g. OAUTH2 needs a refresh token). */
  canRefresh(credentials: StoredCredentials): boolean;
  /** Obtains new credentials; throws (openid-client errors are classified by the refresher). */
  refresh(input: StrategyInput): Promise<StoredCredentials>;
  /**
   * False for tokens that cost nothing to make when needed (minted locally): they are renewed on
   * fetch and proxy only, never on the controller's schedule. True when not set.
   */
  renewAhead?: boolean;
}

// ---- expiry arithmetic (shared with the controller's scheduler) ----

function clientFor(input: StrategyInput, override?: { client_id?: string; client_secret?: string }): ClientCredentials {
  const client = resolveClient(input.store, input.namespace, input.integration, override);
  if (!client) {
    throw new RefreshError(`integration ${input.integration.metadata.name} has no OAuth client ID (clientSecretRef)`, {
      permanent: true,
      code: 'integration_misconfigured',
    });
  }
  return client;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** OAUTH2: refresh_token grant. A response without a new refresh token keeps the old one. */
export const oauth2RefreshStrategy: RefreshStrategy = {
  canRefresh: (c) => typeof c.refresh_token === 'string' && c.refresh_token.length > 0,
  async refresh(input) {
    const current = input.connection.credentials as unknown as OAuth2Credentials;
    let raw: Record<string, unknown> | undefined;
    const config = oauth2Configuration({
      provider: input.provider,
      client: clientFor(input, current.config_override),
      connectionConfig: input.connection.resource.spec.connectionConfig,
      purpose: 'refresh',
      fetch: input.fetch,
      timeoutSeconds: input.timeoutSeconds,
      onTokenResponse: (body) => (raw = body),
    });
    const tokens = await oidc.refreshTokenGrant(config, current.refresh_token!);
    const expiresIn = tokens.expiresIn();
    const next: Record<string, unknown> = {
      ...current,
      type: 'OAUTH2',
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token ?? current.refresh_token,
      raw: raw ?? { ...tokens },
    };
    if (expiresIn !== undefined) next.expires_at = iso(input.now + expiresIn * 1000);
    else delete next.expires_at;
    return next as StoredCredentials;
  },
};

/** OAUTH2_CC: client_credentials grant, a new token each time. */
export const clientCredentialsStrategy: RefreshStrategy = {
  canRefresh: () => true,
  async refresh(input) {
    const current = input.connection.credentials as unknown as OAuth2ClientCredentials;
    const client: ClientCredentials = current.client_id
      ? { clientId: current.client_id, clientSecret: current.client_secret }
      : clientFor(input);
    let raw: Record<string, unknown> | undefined;
    const config = oauth2Configuration({
      provider: input.provider,
      client,
      connectionConfig: input.connection.resource.spec.connectionConfig,
      fetch: input.fetch,
      timeoutSeconds: input.timeoutSeconds,
      onTokenResponse: (body) => (raw = body),
    });
    const params: Record<string, string> = { ...(input.provider.spec.tokenParams ?? {}) };
    delete params.grant_type;
    const scopes = input.integration.spec.scopes ?? input.provider.spec.defaultScopes;
    if (scopes?.length) params.scope = scopes.join(input.provider.spec.scopeSeparator ?? ' ');
    const tokens = await oidc.clientCredentialsGrant(config, params);
    const expiresIn = tokens.expiresIn();
    const next: Record<string, unknown> = {
      ...current,
      type: 'OAUTH2_CC',
      token: tokens.access_token,
      client_id: client.clientId,
      client_secret: client.clientSecret ?? '',
      raw: raw ?? { ...tokens },
    };
    if (expiresIn !== undefined) next.expires_at = iso(input.now + expiresIn * 1000);
    else delete next.expires_at;
    return next as StoredCredentials;
  },
};
