/**
 * Pipedrive, as its docs describe it:
 * - https://pipedrive.readme.io/docs/marketplace-oauth-authorization (authorize at oauth.pipedrive.com/oauth/authorize;
 *   the redirect back with `code` and `state`, or the error when the user cancels; the token request at
 *   oauth.pipedrive.com/oauth/token, form-encoded, with HTTP Basic client authentication; the answer:
 *   `access_token`, `token_type: "Bearer"`, `expires_in`, `refresh_token`, `scope`, `api_domain`)
 * - https://developers.pipedrive.com/changelog/post/new-parameter-in-oauth-oauthtoken-responses (`api_domain`,
 *   `https://<company>.pipedrive.com`, in every token answer, refreshes included: "you will now receive up-to-date
 *   company_domain every time you make the initial request to get the tokens or when you refresh a token", as "the
 *   company_domain can change"; `scope` comma-separated: "base,deals:full,contacts:read")
 * - https://pipedrive.readme.io/docs/marketplace-oauth-and-api-proxy-status-codes (refresh tokens are used once:
 *   "Invalid grant: refresh_token is invalid ... or it was already exchanged"; API 401 "Invalid token")
 * - https://developers.pipedrive.com/docs/api/v1/Deals#getDeals (the API call: `GET /api/v1/deals` on the company
 *   domain; `success`, `data`, `additional_data.pagination`)
 */
import { e2eCase, getRoute, json, oauth2Provider, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const API_DOMAIN = 'https://acme-sales.pipedrive.com';
/** The domain a renamed company's answers carry (a test sets `company.apiDomain` to it). */
export const RENAMED_API_DOMAIN = 'https://acme-renamed.pipedrive.com';

/** What a test turns: the company's domain as the next token answer gives it. */
export interface PipedriveCompany {
  apiDomain: string;
}

export function pipedrive(company: PipedriveCompany = { apiDomain: API_DOMAIN }): ProviderSimulator {
  return oauth2Provider({
    manifest: 'pipedrive',
    docs: ['https://pipedrive.readme.io/docs/marketplace-oauth-authorization'],
    client: opaqueClient(10, 20),
    // A cancelled consent: the docs say the error is sent to the redirect URI; its code is RFC 6749's access_denied.
    authorize: { url: 'https://oauth.pipedrive.com/oauth/authorize', provider: 'Pipedrive' },
    token: { url: 'https://oauth.pipedrive.com/oauth/token', auth: 'basic', refresh: { rotate: true }, accessPrefix: 'v1u:AQIBAHj' },
    answer: tokenAnswer('access_token token_type expires_in refresh_token scope api_domain', {
      token_type: 'Bearer',
      expires_in: 3599,
      scope: 'base,deals:read',
      // Read at each answer: a test renames the company between the code grant and a refresh.
      api_domain: () => company.apiDomain,
    }),
    // The status-codes page gives each error's status and message; the body carries the message as the
    // API's errors do (`success: false`, `error`).
    error: (code) =>
      json(code === 'invalid_client' ? 401 : 400, {
        success: false,
        error: code === 'invalid_grant' ? 'Invalid grant: authorization_code is invalid' : 'Invalid client: client is invalid',
      }),
    api: [API_DOMAIN, RENAMED_API_DOMAIN].map((domain) =>
      getRoute(
        `${domain}/api/v1/deals`,
        json(401, { success: false, error: 'Invalid token: access token is invalid', errorCode: 401 }),
        json(200, {
          success: true,
          data: [{ id: 1, title: 'Acme deal', value: 5000, currency: 'EUR', status: 'open' }],
          additional_data: { pagination: { start: 0, limit: 100, more_items_in_collection: false } },
        }),
      ),
    ),
    e2e: e2eCase(
      'GET /v1/deals?limit=10',
      { success: true, data: [{ id: 1 }] },
      {
        expectConfig: { companyDomain: 'acme-sales' },
        refreshes: true,
        failure: 'denied',
      },
    ),
  });
}
