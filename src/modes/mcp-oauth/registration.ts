/**
 * The client a flow uses at the discovered authorization server, in MCP's priority order (2025-11-25,
 * "Client Registration Approaches"):
 *
 * 1. the Integration's pre-registered client (its `clientSecretRef` Secret's `clientId`);
 * 2. a Client ID Metadata Document when the server advertises `client_id_metadata_document_supported`:
 *    the client ID is the https URL where Latchkey serves the Integration's document (with its
 *    redirect URI; `GET /connect/clients/{namespace}/{integration}`, src/http/connect/routes/clients);
 * 3. dynamic client registration (RFC 7591) at its `registration_endpoint`, once per Integration and
 *    authorization server, kept in the Integration's registrations Secret (src/k8s/client-registrations.ts)
 *    and done again when the redirect URI changed or the server forgot the client.
 *
 * A registration answer without a `client_id` (or oversized, or not JSON) is refused and nothing is stored.
 */
import { resolveClient } from '../../auth/oauth2-client.js';
import type { DiscoveredAuthorizationServer } from '../../auth/flow-state.js';
import { readAnswerText } from '../../egress/bounded-body.js';
import type { ClientRegistration } from '../../k8s/client-registrations.js';
import type { IntegrationResource } from '../../k8s/resources.js';
import type { RedirectDeps } from '../auth-mode.js';
import { discoveryRefused, fetchDiscovered, METADATA_MAX_BYTES, type AuthorizationServerMetadata } from './discovery.js';

export interface ChosenClient {
  clientId: string;
  clientSecret?: string;
  registration: DiscoveredAuthorizationServer['clientRegistration'];
  tokenEndpointAuthMethod: DiscoveredAuthorizationServer['tokenEndpointAuthMethod'];
}

/** The URL of the Integration's Client ID Metadata Document (the client ID itself). */
export function metadataDocumentUrl(publicBaseUrl: string, namespace: string, integration: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/connect/clients/${encodeURIComponent(namespace)}/${encodeURIComponent(integration)}`;
}

/** The Integration's Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document): a public client. */
export function metadataDocument(clientId: string, clientName: string, redirectUri: string): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: clientName,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

export interface ClientChoice {
  namespace: string;
  integration: IntegrationResource;
  authorizationServer: AuthorizationServerMetadata;
  redirectUri: string;
  /** Latchkey's public base URL: a metadata document needs it to be https. */
  publicBaseUrl: string;
  clientName: string;
}

/** The client to use (see the module comment); a registration is stored before it is used. */
export async function chooseClient(deps: RedirectDeps, choice: ClientChoice): Promise<ChosenClient> {
  const preRegistered = resolveClient(deps.catalog, choice.namespace, choice.integration);
  if (preRegistered) {
    const method = preRegistered.clientSecret
      ? choice.authorizationServer.tokenEndpointAuthMethods?.includes('client_secret_basic') &&
        !choice.authorizationServer.tokenEndpointAuthMethods.includes('client_secret_post')
        ? 'client_secret_basic'
        : 'client_secret_post'
      : 'none';
    return { ...preRegistered, registration: 'pre-registered', tokenEndpointAuthMethod: method };
  }
  const as = choice.authorizationServer;
  if (as.clientIdMetadataDocumentSupported && choice.publicBaseUrl.startsWith('https://')) {
    const clientId = metadataDocumentUrl(choice.publicBaseUrl, choice.namespace, choice.integration.metadata.name);
    return { clientId, registration: 'metadata-document', tokenEndpointAuthMethod: 'none' };
  }
  if (!as.registrationEndpoint) {
    throw discoveryRefused(
      `The authorization server ${as.issuer} offers neither a Client ID Metadata Document nor dynamic registration: give the integration a pre-registered client`,
    );
  }
  if (!deps.registrations) throw new Error('dynamic client registration needs the registrations store');
  const kept = await deps.registrations.read(choice.namespace, choice.integration, as.issuer);
  if (kept && kept.redirectUris.includes(choice.redirectUri)) return fromRegistration(kept);
  const registered = await register(deps.fetch, as, choice, deps.clock.now());
  await deps.registrations.save(choice.namespace, choice.integration, registered);
  return fromRegistration(registered);
}

function fromRegistration(r: ClientRegistration): ChosenClient {
  return {
    clientId: r.clientId,
    ...(r.clientSecret ? { clientSecret: r.clientSecret } : {}),
    registration: 'dynamic',
    tokenEndpointAuthMethod: r.tokenEndpointAuthMethod,
  };
}

const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;

/** RFC 7591: a public client with the flow's redirect URI; the answer checked before anything is kept. */
async function register(
  fetchFn: typeof fetch,
  as: AuthorizationServerMetadata,
  choice: ClientChoice,
  now: number,
): Promise<ClientRegistration> {
  const res = await fetchDiscovered(
    fetchFn,
    as.registrationEndpoint!,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        client_name: choice.clientName,
        redirect_uris: [choice.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        // No `scope`: a server may bind the client to it, and a later step-up would then be refused.
        token_endpoint_auth_method: 'none',
      }),
      redirect: 'manual',
    },
    'The registration endpoint',
  );
  const text = await readAnswerText(res, METADATA_MAX_BYTES);
  if (res.status !== 201 && res.status !== 200) {
    throw discoveryRefused(`The authorization server ${as.issuer} refused to register a client (${res.status})`);
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw discoveryRefused(`The authorization server ${as.issuer} answered the registration with something that is not JSON`);
  }
  if (!body || typeof body !== 'object' || typeof body.client_id !== 'string' || !body.client_id || body.client_id.length > 2048) {
    throw discoveryRefused(`The authorization server ${as.issuer} answered the registration without a client_id`);
  }
  const method = AUTH_METHODS.find((m) => m === (body.token_endpoint_auth_method ?? 'none'));
  if (!method)
    throw discoveryRefused(`The authorization server ${as.issuer} registered a client authenticating in a way Latchkey does not use`);
  const secret = typeof body.client_secret === 'string' && body.client_secret ? body.client_secret : undefined;
  if (method !== 'none' && !secret)
    throw discoveryRefused(`The authorization server ${as.issuer} registered a confidential client without its secret`);
  return {
    issuer: as.issuer,
    clientId: body.client_id,
    ...(secret ? { clientSecret: secret } : {}),
    tokenEndpointAuthMethod: method,
    redirectUris: [choice.redirectUri],
    registeredAt: new Date(now).toISOString(),
  };
}

/**
 * The Client ID Metadata Document of an Integration whose Provider is MCP_OAUTH2 (undefined for any
 * other mode): its redirect URI is the Environment's callback URL, else Latchkey's.
 */
export function integrationMetadataDocument(input: {
  publicBaseUrl: string;
  namespace: string;
  integration: IntegrationResource;
  provider: { spec: { authMode: string; displayName: string } };
  environment: { spec: { callbackUrl?: string; connectUI?: { appName?: string } } };
}): Record<string, unknown> | undefined {
  const { publicBaseUrl, namespace, integration, provider, environment } = input;
  if (provider.spec.authMode !== 'MCP_OAUTH2') return undefined;
  const redirectUri = environment.spec.callbackUrl ?? `${publicBaseUrl}/oauth/callback`;
  const name = environment.spec.connectUI?.appName || integration.spec.displayName || provider.spec.displayName;
  return metadataDocument(metadataDocumentUrl(publicBaseUrl, namespace, integration.metadata.name), name, redirectUri);
}
