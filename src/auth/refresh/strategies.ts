import type { IntegrationResource, ProviderResource } from '../../k8s/resources.js';
import type { CatalogStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import { resolveClient, type ClientCredentials } from '../oauth2-client.js';
import type { OperationLog } from '../../oplog/operation-log.js';
import { RefreshError } from './errors.js';

/** What a refresh strategy gets: the connection as read after taking the lock, and its catalog objects. */
export interface StrategyInput {
  namespace: string;
  connection: StoredConnection;
  integration: IntegrationResource;
  provider: ProviderResource;
  catalog: CatalogStore;
  fetch: typeof fetch;
  timeoutSeconds: number;
  now: number;
  /** Where a request besides the token call records its entry (a session step's login). */
  oplog?: OperationLog;
  /** What the refresh gave besides the credentials it returns, read by the refresher once it returns. */
  report: RefreshReport;
}

/**
 * What a strategy reports besides the credentials: configuration values a provider's answer gave again
 * (Bullhorn's `restUrl`, compared with the stored ones and written when they changed), and a failure after
 * the provider issued new tokens (Bullhorn's login after the refresh): the tokens are stored all the same
 * (the refresh token may be spent), and the refresh is reported as failed with it.
 */
export interface RefreshReport {
  providerValues?: { values: Record<string, string>; source: string };
  failedAfterTokens?: RefreshError;
}

/**
 * How one kind of credentials is renewed: each auth mode's module (src/modes/<mode>/mode.ts) says, and the
 * refresher is built with the registry's strategies (src/modes/registry.ts, `refreshStrategies`).
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

/** The Integration's OAuth client (a connection's override first), or a permanent `integration_misconfigured` failure. */
export function clientFor(input: StrategyInput, override?: { client_id?: string; client_secret?: string }): ClientCredentials {
  const client = resolveClient(input.catalog, input.namespace, input.integration, override);
  if (!client) {
    throw new RefreshError(`integration ${input.integration.metadata.name} has no OAuth client ID (clientSecretRef)`, {
      permanent: true,
      code: 'integration_misconfigured',
    });
  }
  return client;
}
