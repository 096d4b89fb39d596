/**
 * Miro, as its docs describe it:
 * - https://developers.miro.com/reference/authorization-and-authentication (GET https://miro.com/oauth/authorize with
 *   `response_type=code`, `client_id`, `redirect_uri`, optional `state` and `team_id`; the redirect back: `code` and
 *   `state`)
 * - https://developers.miro.com/reference/exchange-authorization-code-with-access-token (POST
 *   https://api.miro.com/v1/oauth/token with `grant_type=authorization_code`, `client_id`, `client_secret`, `code`,
 *   `redirect_uri`, "in your request body"; the code is single use; the answer, as the Authorization model and
 *   Miro's generated client (AccessTokenResponse) name it: `user_id`, `expires_in`, `team_id`, `access_token`,
 *   `scope`, `refresh_token`, `token_type`)
 * - https://developers.miro.com/reference/get-new-access-token-using-refresh-token (the same URL with
 *   `grant_type=refresh_token`; the answer `{"token_type": "bearer", "team_id", "access_token", "refresh_token",
 *   "scope", "expires_in": 3599}`)
 * - https://developers.miro.com/reference/oauth-20-authorization-v2 (expiring tokens: "When a new access token is
 *   requested, you also get a new refresh token. In this scenario, the old access token and refresh token are no
 *   longer valid")
 * - https://developers.miro.com/reference/ne-use-access-token-for-rest-api-requests and
 *   https://developers.miro.com/reference/get-access-token-context (GET /v1/oauth-token with `Authorization: Bearer`:
 *   the token's context, `type`, `organization`, `team`, `createdBy`, `user`, `scopes`, as Miro's generated client
 *   (TokenInformation) names them; a team is `{"type": "team", "id", "name"}`, per
 *   https://developers.miro.com/v1.0/reference/team-object)
 * - https://developers.miro.com/reference/errors (the error object `{"type": "error", "status", "code", "message"}`;
 *   401 `tokenNotFound`: "The API key does not exist")
 * `team_id` is a JSON number in the refresh example (a 19-digit one, written as it is, not through a JS number).
 * Silent: the value of the context's `type` (the simulator sends "oauth_token"), the redirect of a refused consent (RFC 6749's `error=access_denied`) and the token endpoint's error bodies
 * (RFC 6749 §5.2's `error`).
 */
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, type ProviderSimulator } from './framework.js';

const TEAM = { type: 'team', name: 'Acme design', id: '3074457358607431473' };
/** Stands in for the team's ID in the token answer, which carries it as a bare number. */
const TEAM_ID_PLACEHOLDER = 'team-id-number';
const USER = { type: 'user', name: 'Ada Lovelace', id: '3074457350804038700' };

export function miro(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'miro',
    docs: [
      'https://developers.miro.com/reference/authorization-and-authentication',
      'https://developers.miro.com/reference/exchange-authorization-code-with-access-token',
      'https://developers.miro.com/reference/get-new-access-token-using-refresh-token',
      'https://developers.miro.com/reference/get-access-token-context',
      'https://developers.miro.com/reference/errors',
    ],
    client: opaqueClient('3074457363680401096', 16),
    authorize: { url: 'https://miro.com/oauth/authorize', provider: 'Miro' },
    token: { url: 'https://api.miro.com/v1/oauth/token', auth: 'body', refresh: { rotate: true } },
    answer: (t, grant, kind) =>
      json(
        200,
        JSON.stringify({
          ...(kind === 'authorization_code' ? { user_id: USER.id } : {}),
          token_type: 'bearer',
          team_id: TEAM_ID_PLACEHOLDER,
          access_token: t.accessToken,
          refresh_token: t.refreshToken,
          scope: grant.scope || 'boards:read',
          expires_in: 3599,
        }).replace(`"${TEAM_ID_PLACEHOLDER}"`, TEAM.id),
      ),
    error: oauthErrors({}),
    api: [
      getRoute(
        'https://api.miro.com/v1/oauth-token',
        json(401, { type: 'error', status: 401, code: 'tokenNotFound', message: 'The API key does not exist' }),
        json(200, {
          type: 'oauth_token',
          organization: { type: 'organization', name: 'Acme', id: '3074457347056369567' },
          team: TEAM,
          createdBy: USER,
          user: USER,
          scopes: ['boards:read'],
        }),
      ),
    ],
    e2e: e2eCase('GET /v1/oauth-token', { team: { id: TEAM.id }, user: { id: USER.id } }, { refreshes: true, failure: 'denied' }),
  });
}
