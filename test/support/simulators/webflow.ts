/**
 * Webflow, as its docs describe it:
 * - https://developers.webflow.com/data/reference/oauth-app (GET https://webflow.com/oauth/authorize with
 *   `client_id`, `response_type=code`, `scope`, `state`, `redirect_uri`; the redirect back: `code` (single use) and
 *   `state`, or `error`, `error_description` and `state`; POST https://api.webflow.com/oauth/access_token with
 *   `client_id`, `client_secret`, `code`, `grant_type=authorization_code` and `redirect_uri` as form fields (`curl
 *   -d`, as the page's earlier version at developers.webflow.com/oauth shows); the answer: `access_token` and
 *   `token_type: "bearer"`, no expiry and no refresh token: a token lives until it is revoked)
 * - https://developers.webflow.com/data/reference/token/authorized-by (GET /v2/token/authorized_by: the user who
 *   authorized the token, `id`, `email`, `firstName`, `lastName`; it needs the `authorized_user:read` scope, which the test's Integration asks for beside the
 *   manifest's default `sites:read`)
 * - https://developers.webflow.com/data/reference/error-handling (errors: `{"code", "message"}`; 401
 *   `not_authorized` for a missing or invalid token)
 * Silent: the `error` value of a refused consent (the simulator sends RFC 6749's `access_denied`) and the token
 * endpoint's error bodies (RFC 6749 §5.2's `error`).
 */
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const USER = { id: '545bbecb7bdd6769632504a7', email: 'some@email.com', firstName: 'Some', lastName: 'One' };

export function webflow(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'webflow',
    docs: [
      'https://developers.webflow.com/data/reference/oauth-app',
      'https://developers.webflow.com/data/reference/token/authorized-by',
      'https://developers.webflow.com/data/reference/error-handling',
    ],
    client: opaqueClient(32, 32),
    authorize: {
      url: 'https://webflow.com/oauth/authorize',
      provider: 'Webflow',
      denied: { error: 'access_denied', error_description: 'The user denied the authorization request' },
    },
    token: { url: 'https://api.webflow.com/oauth/access_token', auth: 'body', refresh: false },
    answer: tokenAnswer('access_token token_type', { token_type: 'bearer' }),
    error: oauthErrors({}),
    api: [
      getRoute(
        'https://api.webflow.com/v2/token/authorized_by',
        json(401, { code: 'not_authorized', message: 'Request not authorized' }),
        json(200, USER),
      ),
    ],
    e2e: e2eCase(
      'GET /v2/token/authorized_by',
      { id: USER.id, email: USER.email },
      {
        scopes: ['sites:read', 'authorized_user:read'],
        refreshes: false,
        failure: 'denied',
      },
    ),
  });
}
