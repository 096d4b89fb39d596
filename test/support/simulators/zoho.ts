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
import {
  authServer,
  authorizePage,
  bearerOf,
  json,
  opaque,
  tokenEndpoint,
  type ProviderSimulator,
  type SimRequest,
  refreshField,
} from './framework.js';

const ACCOUNTS_SERVER = 'https://accounts.zoho.eu';
const API_DOMAIN = 'https://www.zohoapis.eu';

export function zohoCrm(): ProviderSimulator {
  const { state, grants } = authServer();
  const client = { clientId: `1000.${opaque('', 15).toUpperCase()}`, clientSecret: opaque('', 21) };
  const token = tokenEndpoint({
    grants,
    client,
    auth: 'body',
    refresh: { rotate: false },
    accessPrefix: '1000.',
    refreshPrefix: '1000.',
    answer: ({ accessToken, refreshToken }, grant) =>
      json(200, {
        access_token: accessToken,
        ...refreshField({ refreshToken }),
        scope: grant.scope,
        api_domain: API_DOMAIN,
        token_type: 'Bearer',
        expires_in: 3600,
      }),
    error: (code) => json(200, { error: code === 'invalid_grant' ? 'invalid_code' : code }),
  });
  return {
    manifest: 'zoho-crm',
    hosts: ['accounts.zoho.com', 'accounts.zoho.eu', 'www.zohoapis.eu'],
    docs: [
      'https://www.zoho.com/crm/developer/docs/api/v8/multi-dc.html',
      'https://www.zoho.com/crm/developer/docs/api/v8/access-refresh.html',
      'https://www.zoho.com/crm/developer/docs/api/v8/get-records.html',
    ],
    client,
    state,
    routes: [
      {
        method: 'GET',
        host: 'accounts.zoho.com',
        path: '/oauth/v2/auth',
        handler: authorizePage('Zoho', grants, client, { extra: { location: 'eu', 'accounts-server': ACCOUNTS_SERVER } }),
      },
      {
        method: 'POST',
        host: 'accounts.zoho.eu',
        path: '/oauth/v2/token',
        // The docs pass the parameters in the query string of the POST; a form body is read the same way.
        handler: (req: SimRequest) => token(req.form.size ? req : { ...req, form: req.query }),
      },
      {
        method: 'GET',
        host: 'www.zohoapis.eu',
        path: '/crm/v8/Leads',
        handler: (req) =>
          grants.validAccess(bearerOf(req, 'Zoho-oauthtoken'))
            ? json(200, {
                data: [{ Company: 'Zylker', Email: 'p.daly@zylker.com', Last_Name: 'Daly', id: '3652397000002045001' }],
                info: { per_page: 200, count: 1, page: 1, more_records: false, next_page_token: null, previous_page_token: null },
              })
            : json(401, { code: 'INVALID_TOKEN', details: {}, message: 'invalid oauth token', status: 'error' }),
      },
    ],
    e2e: {
      // Nothing typed: the data centre comes back on the redirect and in the token answer.
      expectConfig: { accountsServer: 'accounts.zoho.eu', apiDomain: 'www.zohoapis.eu' },
      api: { method: 'GET', path: '/crm/v8/Leads?fields=Last_Name,Email,Company', answer: { data: [{ Last_Name: 'Daly' }] } },
      refreshes: true,
      failure: 'refused-code',
    },
  };
}
