/**
 * The Client ID Metadata Document of an MCP_OAUTH2 Integration (draft-ietf-oauth-client-id-metadata-document,
 * MCP's authorization 2025-11-25): an authorization server that advertises `client_id_metadata_document_supported`
 * fetches it at the URL that is the client ID. Public by nature: it names the application and the redirect URI,
 * no secret. Only an Integration of an MCP_OAUTH2 Provider in a namespace with an Environment has one.
 */
import { LatchkeyError } from '../domain/errors.js';
import { primaryOf } from '../k8s/primary-environment.js';
import type { CatalogStore } from '../k8s/store.js';
import { integrationMetadataDocument } from '../modes/mcp-oauth/registration.js';

export function clientMetadataDocument(
  deps: { catalog: CatalogStore; config: { publicBaseUrl: string } },
  namespace: string,
  integrationId: string,
): Record<string, unknown> {
  const environment = primaryOf(deps.catalog.listEnvironments(namespace));
  const integration = environment && deps.catalog.getIntegration(namespace, integrationId);
  const provider = integration && deps.catalog.getProvider(integration.spec.provider);
  const document =
    environment && integration && provider
      ? integrationMetadataDocument({ publicBaseUrl: deps.config.publicBaseUrl, namespace, integration, provider, environment })
      : undefined;
  if (!document) throw new LatchkeyError('not_found', 'client_not_found', 'There is no such client.');
  return document;
}
