/**
 * Mailchimp Marketing API (OAuth), as its docs describe it:
 * - https://mailchimp.com/developer/marketing/guides/access-user-data-oauth-2/ (GET
 *   https://login.mailchimp.com/oauth2/authorize with `response_type=code`, `client_id`, `redirect_uri`; the
 *   redirect back: `code` (and the `state` the app sent); POST https://login.mailchimp.com/oauth2/token, a form
 *   with `grant_type=authorization_code`, `client_id`, `client_secret`, `redirect_uri`, `code`; the answer:
 *   `{"access_token", "expires_in": 0, "scope": null}`: no token_type, a token that never expires, no refresh
 *   token; then GET https://login.mailchimp.com/oauth2/metadata with `Authorization: OAuth <token>`: `dc`, `role`,
 *   `accountname`, `user_id`, `login`, `login_url`, `api_endpoint`; the API lives at https://{dc}.api.mailchimp.com)
 * - https://mailchimp.com/developer/marketing/api/ping/ (GET /3.0/ping: `{"health_status": "Everything's Chimpy!"}`)
 * - https://mailchimp.com/developer/marketing/docs/errors/ (errors: application/problem+json with `type`, `title`,
 *   `status`, `detail`, `instance`; a bad token: 401 `API Key Invalid`)
 */
import type { ProviderSimulator } from './framework.js';
import { bearerOf, e2eCase, html, json, oauth2Provider, oauthErrors, opaqueClient, route, tokenAnswer } from './framework.js';

const DC = 'us6';

const problem = (status: number, title: string, detail: string) =>
  json(
    status,
    {
      type: 'https://mailchimp.com/developer/marketing/docs/errors/',
      title,
      status,
      detail,
      instance: '995c5cb0-3280-4a6e-808b-3b096d0bb219',
    },
    'application/problem+json; charset=utf-8',
  );

export function mailchimp(): ProviderSimulator {
  const client = opaqueClient('123456789012', 24);
  // The API takes the token as a Bearer token (the guide's SDK) or with the OAuth scheme.
  const token = (req: Parameters<typeof bearerOf>[0]) => bearerOf(req) ?? bearerOf(req, 'OAuth');

  return oauth2Provider({
    manifest: 'mailchimp',
    docs: [
      'https://mailchimp.com/developer/marketing/guides/access-user-data-oauth-2/',
      'https://mailchimp.com/developer/marketing/api/ping/',
      'https://mailchimp.com/developer/marketing/docs/errors/',
    ],
    client,
    authorize: {
      url: 'https://login.mailchimp.com/oauth2/authorize',
      provider: 'Mailchimp',
      invalid: () => html(400, '<h1>Invalid client_id</h1>'),
    },
    token: { url: 'https://login.mailchimp.com/oauth2/token', auth: 'either', refresh: false },
    answer: tokenAnswer('access_token expires_in scope', { expires_in: 0, scope: null }),
    error: oauthErrors({ client: 'Invalid client credentials', grant: 'Invalid authorization code' }, 401),
    api: (grants) => [
      route('GET https://login.mailchimp.com/oauth2/metadata', (req) => {
        // The guide's request: "Authorization: OAuth <access_token>".
        const t = bearerOf(req, 'OAuth');
        if (!grants.validAccess(t)) return json(401, { error: 'invalid_token', error_description: 'Invalid token' });
        return json(200, {
          dc: DC,
          role: 'owner',
          accountname: "Freddie's Jokes",
          user_id: 8675309,
          login: {
            email: 'freddie@example.com',
            avatar: null,
            login_id: 8675309,
            login_name: 'freddie',
            login_email: 'freddie@example.com',
          },
          login_url: 'https://login.mailchimp.com',
          api_endpoint: `https://${DC}.api.mailchimp.com`,
        });
      }),
      route('GET https://*.api.mailchimp.com/3.0/ping', (req) => {
        if (req.host !== `${DC}.api.mailchimp.com`)
          return problem(401, 'API Key Invalid', `Wrong datacenter "${req.host.split('.')[0] ?? ''}".`);
        if (!grants.validAccess(token(req)))
          return problem(401, 'API Key Invalid', "Your API key may be invalid, or you've attempted to access the wrong datacenter.");
        return json(200, { health_status: "Everything's Chimpy!" });
      }),
    ],
    // Nothing typed: the data center comes from the OAuth metadata endpoint after the token.
    e2e: e2eCase(
      'GET /3.0/ping',
      { health_status: "Everything's Chimpy!" },
      { expectConfig: { dc: DC }, refreshes: false, failure: 'refused-code' },
    ),
  });
}
