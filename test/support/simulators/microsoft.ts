/**
 * Microsoft identity platform and Microsoft Graph, as their docs describe them:
 * - https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (authorize at
 *   login.microsoftonline.com/common/oauth2/v2.0/authorize; the redirect back with `code`, `state` and
 *   `session_state`, or `error=access_denied` with `error_description` and `state`; the token answer:
 *   `token_type: "Bearer"`, `scope`, `expires_in` (a number), `ext_expires_in`, `access_token`,
 *   `refresh_token`; a refresh returns a new refresh token; errors as HTTP 400 `{"error", "error_description",
 *   "error_codes", "timestamp", "trace_id", "correlation_id"}` (AADSTS70008 for an expired or used code))
 * - https://learn.microsoft.com/en-us/graph/errors (Graph errors: `{"error": {"code", "message", "innerError"}}`,
 *   401 `InvalidAuthenticationToken`)
 * - Outlook: https://learn.microsoft.com/en-us/graph/api/user-list-messages (`GET /v1.0/me/messages`)
 * - Teams: https://learn.microsoft.com/en-us/graph/api/user-list-joinedteams (`GET /v1.0/me/joinedTeams`)
 * - https://learn.microsoft.com/en-us/graph/api/organization-list (`GET /v1.0/organization`: the signed-in
 *   user's tenant, `value[0].id`; least privileged delegated permission User.Read; work or school accounts only)
 */
import { randomUUID } from 'node:crypto';
import { getRoute, json, oauth2Provider, opaque, tokenAnswer, type ProviderCase, type ProviderSimulator } from './framework.js';

const TENANT_ID = '84c31ca0-ac3b-4eae-ad11-519d80233e6f';
const graphJson = (status: number, body: unknown) =>
  json(status, body, 'application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8');
const IDENTITY_JSON = 'application/json; charset=utf-8';
const identityJson = (status: number, body: unknown) => json(status, body, IDENTITY_JSON);
const invalidToken = () =>
  graphJson(401, {
    error: {
      code: 'InvalidAuthenticationToken',
      message: 'Access token validation failure. Invalid audience.',
      innerError: { date: new Date().toISOString().slice(0, 19), 'request-id': randomUUID(), 'client-request-id': randomUUID() },
    },
  });

const AADSTS: Record<string, [number, string]> = {
  invalid_grant: [70008, 'AADSTS70008: The provided authorization code or refresh token has expired due to inactivity.'],
  invalid_client: [7000215, 'AADSTS7000215: Invalid client secret provided.'],
  unsupported_grant_type: [70003, 'AADSTS70003: The app requested an unsupported grant type.'],
};

function graphProduct(
  manifest: string,
  api: { path: string; body: Record<string, unknown> },
  e2e: Omit<ProviderCase, 'refreshes' | 'failure'>,
): ProviderSimulator {
  return oauth2Provider({
    manifest,
    docs: [
      'https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow',
      'https://learn.microsoft.com/en-us/graph/errors',
    ],
    client: { clientId: randomUUID(), clientSecret: `${opaque('', 3)}8Q~${opaque('', 18)}` },
    authorize: {
      url: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      provider: 'Microsoft',
      extra: { session_state: randomUUID() },
      denied: {
        error: 'access_denied',
        error_description: 'AADSTS65004: User declined to consent to access the app.',
      },
    },
    token: {
      url: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      auth: 'either',
      refresh: { rotate: true },
      accessPrefix: 'eyJ0eXAiOiJKV1Qi.',
      refreshPrefix: '0.AAAA',
    },
    answer: tokenAnswer(
      'token_type scope expires_in ext_expires_in access_token refresh_token',
      { token_type: 'Bearer', expires_in: 4742, ext_expires_in: 4742 },
      IDENTITY_JSON,
    ),
    error: (code, description) => {
      const [number, text] = AADSTS[code] ?? [900144, `AADSTS900144: ${description}`];
      return identityJson(code === 'invalid_client' ? 401 : 400, {
        error: code,
        error_description: `${text} Trace ID: ${randomUUID()} Correlation ID: ${randomUUID()} Timestamp: ${new Date().toISOString()}`,
        error_codes: [number],
        timestamp: new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z',
        trace_id: randomUUID(),
        correlation_id: randomUUID(),
      });
    },
    api: [
      getRoute(`https://graph.microsoft.com${api.path}`, invalidToken, graphJson(200, api.body)),
      getRoute(
        'https://graph.microsoft.com/v1.0/organization',
        invalidToken,
        graphJson(200, {
          '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#organization',
          value: [
            { id: TENANT_ID, displayName: 'Contoso', tenantType: 'AAD', verifiedDomains: [{ name: 'contoso.com', isDefault: true }] },
          ],
        }),
      ),
    ],
    e2e: { ...e2e, refreshes: true, failure: 'refused-code' },
  });
}

export const outlook = (): ProviderSimulator =>
  graphProduct(
    'outlook',
    {
      path: '/v1.0/me/messages',
      body: {
        '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('bb8775a4-4d8c-42cf-a1d4-4d58c2bb668f')/messages",
        value: [{ id: 'AAMkAGUAAAwTW09AAA=', subject: 'You have late tasks!', isRead: false }],
      },
    },
    // Outlook also serves personal Microsoft accounts, which have no organization: no tenant step.
    {
      expectConfig: {},
      api: { method: 'GET', path: '/v1.0/me/messages?$top=5', answer: { value: [{ subject: 'You have late tasks!' }] } },
    },
  );

export const microsoftTeams = (): ProviderSimulator =>
  graphProduct(
    'microsoft-teams',
    {
      path: '/v1.0/me/joinedTeams',
      body: {
        '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#teams',
        value: [
          {
            id: '172b0cce-e65d-44ce-9a49-91d9f2e8493a',
            displayName: 'Contoso Team',
            description: 'This is a Contoso team.',
            isArchived: false,
          },
        ],
      },
    },
    {
      expectConfig: { tenantId: TENANT_ID },
      api: { method: 'GET', path: '/v1.0/me/joinedTeams', answer: { value: [{ displayName: 'Contoso Team' }] } },
    },
  );
