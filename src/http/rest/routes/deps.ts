import type { TokenRefresher } from '../../../auth/refresh/token-refresher.js';
import type { RefreshLock } from '../../../auth/refresh/lock.js';
import type { AppContext } from '../../../context/app-context.js';
import type { IntegrationResource, ProviderResource } from '../../../k8s/resources.js';
import { LatchkeyError } from '../../../domain/errors.js';
import type { RateLimits } from '../../rate-limits.js';
import type { LastFetchedRecorder } from '../../../connections/last-fetched.js';

/** What the REST route modules are built from. */
export interface RestDeps extends AppContext {
  refresher: TokenRefresher;
  refreshLock: RefreshLock;
  limits: RateLimits;
  /** Where fetches record last_fetched_at (written in batches, off the request path). */
  lastFetched: LastFetchedRecorder;
}

/** The Integration and its Provider, or a 404 naming which one is unknown. */
export function integrationAndProvider(
  deps: RestDeps,
  namespace: string,
  integrationId: string,
): { integration: IntegrationResource; provider: ProviderResource } {
  const integration = deps.catalog.getIntegration(namespace, integrationId);
  if (!integration) throw new LatchkeyError('not_found', 'unknown_integration', `No integration "${integrationId}" in this environment`);
  const provider = deps.catalog.getProvider(integration.spec.provider);
  if (!provider)
    throw new LatchkeyError(
      'not_found',
      'unknown_provider',
      `Integration "${integrationId}" refers to provider "${integration.spec.provider}", which is not in the catalog`,
    );
  return { integration, provider };
}
