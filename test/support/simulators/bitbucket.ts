/**
 * Bitbucket Cloud, as its docs describe it:
 * - https://developer.atlassian.com/cloud/bitbucket/oauth-2 (authorize at https://bitbucket.org/site/oauth2/authorize
 *   with `client_id` and `response_type=code`; the callback carries `?code=`; the code is swapped at
 *   https://bitbucket.org/site/oauth2/access_token with `curl -X POST -u "client_id:secret"` (HTTP Basic) and
 *   `grant_type=authorization_code`, `code`; access tokens expire in two hours, after which the API answers 401, and
 *   the grant's answer carries a refresh token, sent back the same way with `grant_type=refresh_token`)
 * - https://community.developer.atlassian.com/t/oauth2-token-lifetime-expiration-clarification/22136 (a token answer
 *   as the Bitbucket team confirmed it: `access_token`, `scopes`, `expires_in: 7200`, `refresh_token`,
 *   `token_type: "bearer"`; a refresh answer has the same fields)
 * - https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-get (GET
 *   https://api.bitbucket.org/2.0/user: the current user, `type: "user"`, `uuid`, `account_id`, `display_name`,
 *   `username`)
 * - https://developer.atlassian.com/cloud/bitbucket/rest/intro/#standardized-error-responses (errors:
 *   `{"type": "error", "error": {"message", "detail"}}`)
 * Silent: whether a refresh issues a new refresh token (the simulator sends the same one back, still valid), the
 * redirect of a refused consent (RFC 6749's `error=access_denied`) and the token endpoint's error bodies (RFC 6749
 * §5.2's `error`).
 */
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const USER = {
  type: 'user',
  uuid: '{d301aafa-d676-4ee0-88be-962be7417567}',
  account_id: '557058:c0b72ad0-1cb5-4018-9cdc-0cde8492c443',
  display_name: 'Ada Lovelace',
  username: 'ada',
};

export function bitbucket(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'bitbucket',
    docs: [
      'https://developer.atlassian.com/cloud/bitbucket/oauth-2',
      'https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-get',
      'https://developer.atlassian.com/cloud/bitbucket/rest/intro/#standardized-error-responses',
    ],
    client: opaqueClient(9, 16),
    authorize: { url: 'https://bitbucket.org/site/oauth2/authorize', provider: 'Bitbucket' },
    token: { url: 'https://bitbucket.org/site/oauth2/access_token', auth: 'basic', refresh: { rotate: false, returnsToken: true } },
    answer: tokenAnswer('access_token scopes expires_in refresh_token token_type', {
      scopes: (i) => i.scope || 'account',
      expires_in: 7200,
      token_type: 'bearer',
    }),
    error: oauthErrors({}, 401),
    api: [
      getRoute(
        'https://api.bitbucket.org/2.0/user',
        json(401, { type: 'error', error: { message: 'Access token expired.' } }),
        json(200, USER),
      ),
    ],
    e2e: e2eCase('GET /2.0/user', { type: 'user', uuid: USER.uuid }, { refreshes: true, failure: 'refused-code' }),
  });
}
