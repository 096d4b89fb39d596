/**
 * Reddit, as its docs describe it:
 * - https://github.com/reddit-archive/reddit/wiki/OAuth2 (GET https://www.reddit.com/api/v1/authorize with
 *   `client_id`, `response_type=code`, `state`, `redirect_uri`, `duration` (`permanent` for a refresh token) and
 *   `scope` (space separated, commas supported); the redirect back: `code` and `state`, or `error=access_denied`
 *   when the user "chose not to grant your app permissions"; POST https://www.reddit.com/api/v1/access_token, POST
 *   data `grant_type=authorization_code&code=CODE&redirect_uri=URI`, the client in HTTP Basic; errors: a 401 response
 *   for bad client credentials, `invalid_grant` for a code expired or already used; the answer `{"access_token",
 *   "token_type": "bearer", "expires_in", "scope", "refresh_token"}`, "bearer tokens expire after 1 hour"; a refresh:
 *   `grant_type=refresh_token&refresh_token=TOKEN` with the same Basic authentication, answered without a
 *   `refresh_token`; API calls go to https://oauth.reddit.com with `Authorization: bearer TOKEN`)
 * - https://www.reddit.com/dev/api/#GET_api_v1_me and https://github.com/reddit-archive/reddit/wiki/JSON (GET
 *   /api/v1/me: the identity of the user, an account: `name`, `id`, `created_utc`, ...)
 * Silent: the body of the token endpoint's 401 and of an API call's 401 (none is sent), and the status of an
 * `invalid_grant` answer (400 is sent, `{"error": "invalid_grant"}`).
 */
import { e2eCase, getRoute, json, oauth2Provider, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const ME = { name: 'ada_lovelace', id: '1w72', created_utc: 1_262_304_000 };

export function reddit(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'reddit',
    docs: ['https://github.com/reddit-archive/reddit/wiki/OAuth2', 'https://github.com/reddit-archive/reddit/wiki/JSON'],
    client: opaqueClient(11, 15),
    authorize: {
      url: 'https://www.reddit.com/api/v1/authorize',
      provider: 'Reddit',
      denied: { error: 'access_denied' },
      // A refresh token only for `duration=permanent` (the manifest's authorization parameter).
      check: (req) =>
        req.query.get('duration') === 'permanent' ? undefined : { status: 400, body: 'the simulator expects duration=permanent' },
    },
    token: {
      url: 'https://www.reddit.com/api/v1/access_token',
      auth: 'basic',
      refresh: { rotate: false },
    },
    answer: tokenAnswer('access_token token_type expires_in scope refresh_token', { token_type: 'bearer', expires_in: 3600 }),
    error: (code) => (code === 'invalid_client' ? { status: 401 } : json(400, { error: code })),
    api: [getRoute('https://oauth.reddit.com/api/v1/me', { status: 401 }, json(200, ME))],
    e2e: e2eCase('GET /api/v1/me', { name: ME.name, id: ME.id }, { refreshes: true, failure: 'denied' }),
  });
}
