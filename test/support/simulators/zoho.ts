/**
 * Zoho CRM (an account in Zoho's EU data centre), as its docs describe it:
 * - https://www.zoho.com/crm/developer/docs/api/v8/auth-request.html (authorize at accounts.zoho.com/oauth/v2/auth;
 *   the redirect back with `state`, `code`, `location` and `accounts-server`)
 * - https://www.zoho.com/crm/developer/docs/api/v8/multi-dc.html (the account's data centre: `location` (us, eu, in,
 *   au, jp, ca, cn, sa) and `accounts-server` (https://accounts.zoho.eu ...) on the redirect; the token request goes
 *   to that accounts server; API calls go to the token answer's `api_domain`)
 * - https://www.zoho.com/crm/developer/docs/api/v8/access-refresh.html (the token request: POST
 *   {accounts-server}/oauth/v2/token with grant_type, client_id, client_secret, redirect_uri and code as parameters;
 *   the answer: `access_token`, `refresh_token`, `scope`, `api_domain`, `token_type: "Bearer"`, `expires_in`)
 * - https://help.zoho.com/portal/en/community/topic/kaizen-4-troubleshooting-oauth2-0 (an unknown or used grant token:
 *   answered with HTTP 200 `{"error": "invalid_code"}`)
 * - https://www.zoho.com/crm/developer/docs/api/v8/refresh.html (a refresh answers `access_token`, `scope`,
 *   `api_domain`, `token_type`, `expires_in`: no new refresh token)
 * - https://www.zoho.com/crm/developer/docs/api/v8/get-records.html (the API call: `GET {api_domain}/crm/v8/Leads?fields=...`
 *   with `Authorization: Zoho-oauthtoken <token>`; 401 `{"code": "INVALID_TOKEN", "details": {}, "message":
 *   "invalid oauth token", "status": "error"}`)
 */
import { e2eCase, getRoute, json, oauth2Provider, opaque, tokenAnswer, type Handler, type ProviderSimulator } from './framework.js';

/**
 * Zoho Accounts for an account in one data centre (`location`): the authorize redirect names the data centre's
 * accounts server, whose token endpoint answers with the data centre's API domain.
 */
function zohoAccounts(location: string, accountsServer: string, apiDomain: string) {
  return {
    client: { clientId: `1000.${opaque('', 15).toUpperCase()}`, clientSecret: opaque('', 21) },
    authorize: { url: 'https://accounts.zoho.com/oauth/v2/auth', provider: 'Zoho', extra: { location, 'accounts-server': accountsServer } },
    token: {
      url: `${accountsServer}/oauth/v2/token`,
      // The docs pass the parameters in the query string of the POST; a form body is read the same way.
      wrap:
        (token: Handler): Handler =>
        (req) =>
          token(req.form.size ? req : { ...req, form: req.query }),
      auth: 'body' as const,
      refresh: { rotate: false },
      accessPrefix: '1000.',
      refreshPrefix: '1000.',
    },
    answer: tokenAnswer('access_token refresh_token scope api_domain token_type expires_in', {
      api_domain: apiDomain,
      token_type: 'Bearer',
      expires_in: 3600,
    }),
    error: (code: string) => json(200, { error: code === 'invalid_grant' ? 'invalid_code' : code }),
  };
}

/** A Zoho API's answer to an invalid token. */
const INVALID_TOKEN = json(401, { code: 'INVALID_TOKEN', details: {}, message: 'invalid oauth token', status: 'error' });

const API_DOMAIN = 'https://www.zohoapis.eu';

export function zohoCrm(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'zoho-crm',
    docs: [
      'https://www.zoho.com/crm/developer/docs/api/v8/multi-dc.html',
      'https://www.zoho.com/crm/developer/docs/api/v8/access-refresh.html',
      'https://www.zoho.com/crm/developer/docs/api/v8/get-records.html',
    ],
    ...zohoAccounts('eu', 'https://accounts.zoho.eu', API_DOMAIN),
    api: [
      getRoute(
        `${API_DOMAIN}/crm/v8/Leads`,
        INVALID_TOKEN,
        json(200, {
          data: [{ Company: 'Zylker', Email: 'p.daly@zylker.com', Last_Name: 'Daly', id: '3652397000002045001' }],
          info: { per_page: 200, count: 1, page: 1, more_records: false, next_page_token: null, previous_page_token: null },
        }),
        'Zoho-oauthtoken',
      ),
    ],
    // Nothing typed: the data centre comes back on the redirect and in the token answer.
    e2e: e2eCase(
      'GET /crm/v8/Leads?fields=Last_Name,Email,Company',
      { data: [{ Last_Name: 'Daly' }] },
      {
        expectConfig: { accountsServer: 'accounts.zoho.eu', apiDomain: 'www.zohoapis.eu' },
        refreshes: true,
        failure: 'refused-code',
      },
    ),
  });
}

/**
 * Bigin by Zoho CRM, an account in Zoho's Canada data centre: its accounts server is accounts.zohocloud.ca, its API
 * domain www.zohoapis.ca (https://www.bigin.com/developer/docs/apis/multi-dc.html); records at
 * GET {api domain}/bigin/v2/{module_api_name} (https://www.bigin.com/developer/docs/apis/v2/get-records.html). The
 * token exchange is Zoho Accounts', as for Zoho CRM above.
 */
export function zohoBiginCanada(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'zoho-bigin',
    docs: ['https://www.bigin.com/developer/docs/apis/multi-dc.html', 'https://www.bigin.com/developer/docs/apis/v2/get-records.html'],
    ...zohoAccounts('ca', 'https://accounts.zohocloud.ca', 'https://www.zohoapis.ca'),
    api: [
      getRoute(
        'https://www.zohoapis.ca/bigin/v2/Contacts',
        INVALID_TOKEN,
        json(200, { data: [{ Last_Name: 'Daly', id: '3652397000002045001' }], info: { more_records: false } }),
        'Zoho-oauthtoken',
      ),
    ],
    // Nothing typed: Canada's accounts server comes back on the redirect, its API domain in the token answer.
    e2e: e2eCase(
      'GET /bigin/v2/Contacts?fields=Last_Name',
      { data: [{ Last_Name: 'Daly' }] },
      { expectConfig: { accountsServer: 'accounts.zohocloud.ca', apiDomain: 'www.zohoapis.ca' }, refreshes: true, failure: 'refused-code' },
    ),
  });
}
