/**
 * The Integration's OAuth client as the modes that use one need it: the keys its Secret holds (OAUTH2,
 * OAUTH1, OAUTH2_CC, TBA, CUSTOM's user authorization) and the client a redirect flow cannot start or
 * finish without.
 */
import { resolveClient, type ClientCredentials } from '../../auth/oauth2-client.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { IntegrationResource } from '../../k8s/resources.js';
import type { CatalogStore } from '../../k8s/store.js';
import type { NeededKey } from '../auth-mode.js';

/** The OAuth client ID and secret an Integration's Secret holds. */
export const CLIENT_KEYS: NeededKey[] = [{ key: 'clientId' }, { key: 'clientSecret' }];

/** The Integration's client for a redirect flow (OAuth 2, OAuth 1.0a's consumer); refused while it is not set. */
export function requireClient(
  store: CatalogStore,
  namespace: string,
  integration: IntegrationResource,
): ClientCredentials & { clientSecret: string } {
  const client = resolveClient(store, namespace, integration);
  if (!client) {
    throw new LatchkeyError(
      'internal',
      'integration_not_configured',
      'This integration is not fully configured yet (its client credentials are missing).',
    );
  }
  // The Integration's keys go along (a private_key_jwt key, a TLS client certificate): the code exchange uses them.
  return { ...client, clientSecret: client.clientSecret ?? '' };
}
