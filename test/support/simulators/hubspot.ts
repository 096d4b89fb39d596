/**
 * HubSpot, as its docs describe it:
 * - https://developers.hubspot.com/docs/api/oauth-quickstart-guide and
 *   https://developers.hubspot.com/docs/api/working-with-oauth (authorize at app.hubspot.com/oauth/authorize; the
 *   redirect back with `code` (and `state`); the token request at api.hubapi.com/oauth/v1/token, form-encoded with
 *   client_id and client_secret in the body; the answer: `token_type: "bearer"`, `refresh_token`, `access_token`,
 *   `expires_in`; a refresh answers the same fields with the same refresh token)
 * - https://developers.hubspot.com/docs/api-reference/legacy/authentication/oauth-tokens/create-oauth-token (token
 *   errors: HTTP 400 `{"message", "correlationId", "category": "VALIDATION_ERROR", "links"}`)
 * - https://developers.hubspot.com/docs/api/settings/account-information-api (`GET /account-info/v3/details`:
 *   `portalId` and the account's details)
 * - https://developers.hubspot.com/docs/api/crm/contacts (the API call: `GET /crm/v3/objects/contacts`; `results`,
 *   `paging.next.after`)
 * - https://developers.hubspot.com/docs/api/error-handling (401: `{"status": "error", "message", "correlationId",
 *   "category": "INVALID_AUTHENTICATION"}`)
 */
import { randomUUID } from 'node:crypto';
import { e2eCase, getRoute, json, oauth2Provider, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const PORTAL_ID = 62515;
const hsJson = (status: number, body: unknown) => json(status, body, 'application/json;charset=utf-8');
const unauthenticated = () =>
  hsJson(401, {
    status: 'error',
    message:
      'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
    correlationId: randomUUID(),
    category: 'INVALID_AUTHENTICATION',
  });

export function hubspot(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'hubspot',
    docs: [
      'https://developers.hubspot.com/docs/api/oauth-quickstart-guide',
      'https://developers.hubspot.com/docs/api/settings/account-information-api',
      'https://developers.hubspot.com/docs/api/crm/contacts',
    ],
    client: opaqueClient(randomUUID(), randomUUID()),
    authorize: { url: 'https://app.hubspot.com/oauth/authorize', provider: 'HubSpot' },
    token: {
      url: 'https://api.hubapi.com/oauth/v1/token',
      auth: 'body',
      refresh: { rotate: false, returnsToken: true },
      accessPrefix: 'CIrToaiiMhIHAAEAQAAAARiO1ooB',
    },
    answer: tokenAnswer(
      'token_type refresh_token access_token expires_in',
      { token_type: 'bearer', expires_in: 1800 },
      'application/json;charset=utf-8',
    ),
    error: (code) =>
      hsJson(400, {
        message: code === 'invalid_grant' ? 'missing or unknown auth code' : 'Invalid input',
        correlationId: randomUUID(),
        category: 'VALIDATION_ERROR',
        links: { 'knowledge-base': 'https://www.hubspot.com/products/service/knowledge-base' },
      }),
    api: [
      getRoute(
        'https://api.hubapi.com/account-info/v3/details',
        unauthenticated,
        hsJson(200, {
          portalId: PORTAL_ID,
          accountType: 'STANDARD',
          timeZone: 'US/Eastern',
          companyCurrency: 'USD',
          additionalCurrencies: [],
          utcOffset: '-05:00',
          utcOffsetMilliseconds: -18000000,
          uiDomain: 'app.hubspot.com',
          dataHostingLocation: 'na1',
        }),
      ),
      getRoute(
        'https://api.hubapi.com/crm/v3/objects/contacts',
        unauthenticated,
        hsJson(200, {
          results: [
            {
              id: '512',
              properties: {
                createdate: '2019-10-30T03:30:17.883Z',
                email: 'bcooper@biglytics.net',
                firstname: 'Bryan',
                lastname: 'Cooper',
              },
              createdAt: '2019-10-30T03:30:17.883Z',
              updatedAt: '2019-12-07T16:50:06.678Z',
              archived: false,
            },
          ],
          paging: { next: { after: 'NTI1Cg%3D%3D', link: '?after=NTI1Cg%3D%3D' } },
        }),
      ),
    ],
    e2e: e2eCase(
      'GET /crm/v3/objects/contacts?limit=10',
      { results: [{ id: '512' }] },
      {
        expectConfig: { portalId: String(PORTAL_ID) },
        refreshes: true,
        failure: 'refused-code',
      },
    ),
  });
}
